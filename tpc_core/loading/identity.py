"""What a loaded CSE is, by content: the facts a sentence cache's fingerprint is made of (:mod:`tpc_core.cache`).

Every file the CSE's weights came from is named by its content: a file in the Hugging Face cache by its blob
name (the Hub's own content hash, nothing read), any other by its SHA-256 (read once per process and file
version). A Hub model that is not in the local cache is named by its repo id and pinned revision.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
from pathlib import Path
from typing import Any

from tpc_core.config import TPCConfig

__all__ = ["cse_identity", "file_digest"]

_WEIGHT_PATTERNS = ("*.safetensors", "config.json", "adapter_config.json")


def file_digest(path: str | os.PathLike[str]) -> str:
    """A file's content hash: the Hub cache's blob name where the file is one, else its SHA-256."""
    real = os.path.realpath(path)
    if os.path.basename(os.path.dirname(real)) == "blobs":
        return "blob:" + os.path.basename(real)
    stat = os.stat(real)
    return _sha256(real, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 22):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def _directory_digests(directory: Path) -> dict[str, str]:
    return {path.name: file_digest(path) for pattern in _WEIGHT_PATTERNS for path in sorted(directory.glob(pattern))
            if path.is_file()}


def cse_identity(config: TPCConfig, checkpoint_dir: Path, model: Any, dtype: Any, *,
                 source: str | None = None) -> dict[str, Any]:
    """The loaded CSE, described by content: its config, its base weights' and the checkpoint's CSE files'
    digests, and the dtype it computes in.

    Args:
        config: The checkpoint's config (only its ``cse`` section is read).
        checkpoint_dir: Where its own files are.
        model: The loaded backbone (its ``config.name_or_path`` says where the base came from), or ``None`` with
            ``source``.
        dtype: The dtype it runs in.
        source: Where the base comes from, where the backbone is not loaded yet (what its ``name_or_path`` will be).
    """
    cse = config.cse
    if source is None:
        source = str(getattr(getattr(model, "config", None), "name_or_path", "") or "")
    if source and Path(source).is_dir():
        base: dict[str, Any] = _directory_digests(Path(source))
    else:
        base = {"hub": source or cse.base_model, "revision": cse.base_revision}
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(source or cse.base_model, "model.safetensors", revision=cse.base_revision)
            if isinstance(cached, str):
                base["model.safetensors"] = file_digest(cached)
        except Exception:  # noqa: BLE001 - not a repo id the cache knows: the id and revision stand for it
            pass
    own: dict[str, Any] = {}
    for name in (cse.adapter_dir, cse.weights_dir, cse.extra_embeddings):
        if not name:
            continue
        path = checkpoint_dir / name
        if path.is_dir():
            own[name] = _directory_digests(path)
        elif path.is_file():
            own[name] = file_digest(path)
    # The batch size changes only how windows share a forward pass, not what a sentence's embedding is.
    settings = {name: value for name, value in dataclasses.asdict(cse).items() if name != "batch_size"}
    return {"cse": settings, "base": base, "checkpoint": own, "dtype": str(dtype)}
