"""Helpers shared by the training stages (config loading, JSONL files)."""

from training.common.config import add_config_arguments, config_from_args, config_to_dict, from_dict, load_config

__all__ = ["add_config_arguments", "config_from_args", "config_to_dict", "from_dict", "load_config"]
