"""Hugging Face Hub resolution for model parts: a repo + revision becomes a local snapshot and a commit hash.

Everything here works from a populated cache with ``local_files_only=True`` (and so in tests, offline), and
turns the Hub's exceptions into messages that say what to do (gated repo, wrong revision, missing file).
Weights are read from safetensors; a pickle (``.bin``) only with ``torch.load(weights_only=True)`` and only
where the caller allows it.
"""

from __future__ import annotations

import os
import pickle
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

__all__ = ["GatedRepoAccessError", "HubPart", "IGNORE_PATTERNS", "WEIGHT_PATTERNS", "cached_refs", "explain_hub_error",
           "load_weights_file", "repo_cache_folder", "require_gated_access", "resolve_part",
           "token_available"]

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# What a model part may bring: configs, tokenizers and safetensors; ``*.bin`` only where a loader allows it.
WEIGHT_PATTERNS = ["*.json", "*.safetensors", "*.txt", "*.model", "*.jinja", "tokenizer*"]
# Copies in other formats that some repos ship beside the transformers weights (Mistral's 14 GB
# consolidated.safetensors, Meta's original/ checkpoints): never needed, never downloaded.
IGNORE_PATTERNS = ["consolidated*", "original/*"]


class GatedRepoAccessError(PermissionError):
    """A gated Hub repo was requested without a token or accepted terms."""


@dataclass(frozen=True)
class HubPart:
    """One resolved Hub repository.

    Attributes:
        role: What it is for ("base", "adapter", "tokenizer").
        repo_id: Hub id.
        revision: The revision asked for (``None``: the default branch).
        commit: The commit hash the revision resolved to (``None`` if the cache layout does not tell).
        path: Local snapshot directory.
    """

    role: str
    repo_id: str
    revision: str | None
    commit: str | None
    path: Path

    def record(self) -> dict[str, Any]:
        """JSON-ready description, for ``info()`` and saved checkpoints."""
        return {"repo": self.repo_id, "revision": self.revision, "commit": self.commit}


def repo_cache_folder(repo_id: str, cache_dir: str | os.PathLike[str] | None) -> Path:
    """``models--org--name`` inside ``cache_dir`` (default: ``HF_HUB_CACHE``, read when called)."""
    from huggingface_hub import constants

    return Path(cache_dir or constants.HF_HUB_CACHE) / ("models--" + repo_id.replace("/", "--"))


def cached_refs(repo_id: str, cache_dir: str | os.PathLike[str] | None) -> dict[str, str]:
    """Branch/tag names → commit hashes of ``repo_id`` in the local Hub cache (empty when nothing is cached)."""
    refs = repo_cache_folder(repo_id, cache_dir) / "refs"
    if not refs.is_dir():
        return {}
    return {str(path.relative_to(refs)): path.read_text(encoding="utf-8").strip()
            for path in refs.rglob("*") if path.is_file()}


def token_available(token: str | bool | None) -> bool:
    """Whether a Hub token will be sent: an explicit string, or (``None``/``True``) one stored by ``hf auth login``
    or set in ``HF_TOKEN``."""
    if isinstance(token, str):
        return bool(token.strip())
    if token is False:
        return False
    from huggingface_hub import get_token

    return get_token() is not None


def _gated_message(repo_id: str) -> str:
    return (f"{repo_id} is a gated repository on the Hugging Face Hub: log in at https://huggingface.co/{repo_id}, "
            "accept its terms, create an access token (https://huggingface.co/settings/tokens) and pass it as "
            "token=..., set HF_TOKEN, or run `hf auth login`. Without access, use 'cpc-llama-1b' (ungated) or "
            "the offline 'tpc-mini'.")


def require_gated_access(repo_id: str, *, token: str | bool | None, cache_dir: str | None,
                         local_files_only: bool) -> None:
    """Fail before any download when a gated repo is neither cached nor reachable with a token.

    Raises:
        GatedRepoAccessError: No token and no cached copy of ``repo_id``.
    """
    if cached_refs(repo_id, cache_dir) or local_files_only or token_available(token):
        return
    raise GatedRepoAccessError(_gated_message(repo_id) + " (No token was found.)")


def explain_hub_error(error: BaseException, repo_id: str, revision: str | None, role: str,
                      cache_dir: str | None = None) -> Exception:
    """A clear exception for a failed Hub look-up of ``repo_id@revision`` (the ``role`` part of a model)."""
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"{repo_id}@{revision or 'main'} ({role})"
    if isinstance(error, GatedRepoError):
        return GatedRepoAccessError(_gated_message(repo_id) + f" Hub said: {error}")
    if isinstance(error, RevisionNotFoundError):
        return FileNotFoundError(f"Revision {revision!r} does not exist in {repo_id} ({role}). Use a branch, tag or "
                                 "commit hash of that repo, or None for its default branch.")
    if isinstance(error, RepositoryNotFoundError):
        return FileNotFoundError(f"Hub repo {repo_id} ({role}) does not exist or is private (pass token=...).")
    if isinstance(error, LocalEntryNotFoundError):
        refs = cached_refs(repo_id, cache_dir)
        if refs:
            known = ", ".join(f"{name} ({commit[:12]})" for name, commit in sorted(refs.items()))
            return FileNotFoundError(f"Revision {revision or 'main'!r} of {repo_id} ({role}) is not in the local Hub "
                                     f"cache, which holds: {known}. Use one of those revisions, or allow "
                                     "downloads (local_files_only=False).")
        return FileNotFoundError(f"{where} is not in the local Hub cache and could not be downloaded (offline or "
                                 "local_files_only=True). Download it once with network access, or point "
                                 "cache_dir / HF_HUB_CACHE at a cache that holds it.")
    return OSError(f"Could not get {where} from the Hugging Face Hub: {error}")


def resolve_part(role: str, repo_id: str, revision: str | None, *, token: str | bool | None = None,
                 cache_dir: str | None = None, local_files_only: bool = False,
                 allow_patterns: Sequence[str] = WEIGHT_PATTERNS) -> HubPart:
    """Download (or find in the cache) the files of ``repo_id@revision`` matching ``allow_patterns``.

    Returns:
        The snapshot directory and the commit it belongs to.

    Raises:
        GatedRepoAccessError, FileNotFoundError, OSError: see :func:`explain_hub_error`.
    """
    from huggingface_hub import snapshot_download

    try:
        snapshot = snapshot_download(repo_id, revision=revision, token=token, cache_dir=cache_dir,
                                     local_files_only=local_files_only, allow_patterns=list(allow_patterns),
                                     ignore_patterns=IGNORE_PATTERNS)
    except Exception as error:  # every Hub failure gets the same treatment: a message that says what to do
        raise explain_hub_error(error, repo_id, revision, role, cache_dir) from error
    path = Path(snapshot)
    commit = path.name if _COMMIT.match(path.name) else None
    return HubPart(role, repo_id, revision, commit, path)


def load_weights_file(path: Path, *, allow_bin: bool) -> dict[str, torch.Tensor]:
    """Tensors of a safetensors file, or of a ``.bin`` read with ``torch.load(weights_only=True)`` when allowed.

    Raises:
        ValueError: A ``.bin`` without ``allow_bin``, a pickle that needs more than tensors, or a file that is
            not a mapping of names to tensors.
    """
    if path.suffix == ".safetensors":
        from safetensors.torch import load_file

        return load_file(str(path))
    if not allow_bin:
        raise ValueError(f"{path.name} is a pickle file and the safe .bin loader is off for it: only safetensors "
                         "are read by default. If you trust its source, allow the weights-only loader "
                         "(cse.adapter_allow_bin=true: torch.load(weights_only=True), never a full unpickler).")
    try:
        state = torch.load(str(path), map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, AttributeError, EOFError) as error:
        raise ValueError(f"{path} was refused by the weights-only loader: it holds more than tensors (or is not a "
                         f"torch file), and a full unpickler is never used. Cause: {error}") from error
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise ValueError(f"{path} is not a mapping of parameter names to tensors.")
    return state
