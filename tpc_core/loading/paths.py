"""Paths written in ``tpc_config.json`` stay inside the checkpoint (the policy is in ``tpc_core.loading.checkpoint``).

``weights_dir``, ``adapter_dir``, ``extra_embeddings``, ``agnostic.request_head``, ``agnostic.salience_head`` and a
``base_model`` written as a path are resolved inside the checkpoint directory; absolute paths, ``~`` and ``..`` that
leave it (or links out of it) are refused. Used by loading and by the Hub-assembled checkpoints of
``tpc_core.loading.hub_cse``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tpc_core.config import TPCConfig

__all__ = ["check_config_paths", "inside_checkpoint", "is_path_like"]


def inside_checkpoint(checkpoint_dir: Path, relative: str, what: str) -> Path:
    """``checkpoint_dir / relative``, refusing paths that leave the checkpoint (absolute, ``..``, links out).

    Raises:
        ValueError: If the path is absolute or resolves outside ``checkpoint_dir``.
    """
    if not isinstance(relative, str) or not relative or Path(relative).is_absolute():
        raise ValueError(f"{what} must be a relative path inside the checkpoint, got {relative!r}.")
    root = checkpoint_dir.resolve()
    path = (checkpoint_dir / relative).resolve()
    if path != root and root not in path.parents:
        raise ValueError(f"{what} {relative!r} points outside the checkpoint directory {checkpoint_dir}.")
    return path


def is_path_like(reference: str) -> bool:
    """Whether a ``base_model`` is written as a path (absolute, ``~``, ``./``, ``..``) rather than a model id."""
    return (reference.startswith(("~", "./")) or Path(reference).is_absolute() or ".." in Path(reference).parts)


def check_config_paths(config: TPCConfig, checkpoint_dir: Path, options: Any) -> None:
    """Refuse, at load time, every config path that leaves the checkpoint, the lazily loaded CTD's included.

    Args:
        options: ``tpc_core.loading.checkpoint.HubOptions``; with ``confine_paths`` off a ``base_model`` may name a
            local directory outside the checkpoint (configs the caller wrote itself).

    Raises:
        ValueError: The first offending key, named (``ctd.adapter_dir``...).
    """
    sections: list[tuple[str, Any]] = [("cse", config.cse), ("ctd", config.ctd)]
    for name, section in sections:
        if section is None:
            continue
        for key in ("weights_dir", "adapter_dir", "extra_embeddings"):
            value = getattr(section, key, None)
            if value:
                inside_checkpoint(checkpoint_dir, value, f"{name}.{key}")
        if options.confine_paths and is_path_like(section.base_model):
            if section.base_model.startswith("~"):
                raise ValueError(f"{name}.base_model {section.base_model!r} must be a relative path inside the "
                                 "checkpoint or a model id ('~' paths are not read).")
            inside_checkpoint(checkpoint_dir, section.base_model, f"{name}.base_model")
    for key in ("request_head", "salience_head", "lead_correction"):
        value = getattr(config.agnostic, key)
        if value:
            inside_checkpoint(checkpoint_dir, value, f"agnostic.{key}")
