"""``python -m training.curation --config training/configs/curation_qa_train.yaml [--set key=value ...]``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from training.common.cli import start_cli
from training.common.config import add_config_arguments, config_from_args
from training.curation.config import CurationConfig
from training.curation.pipeline import run_curation


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.curation",
        description="Stage 1 of TPC training: curate the CTD and MCQR data sets (paper Sections 3.2.1, 3.4.1).",
    )
    add_config_arguments(parser)
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(argv)
    start_cli(level=args.log_level)
    try:
        config = config_from_args(args, CurationConfig)
        config.check_paths()
    except ValueError as error:  # a config problem: say what is wrong, no traceback
        parser.exit(2, f"error: {error}\n")
    run_curation(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
