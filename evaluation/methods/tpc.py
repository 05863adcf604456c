"""TPC as a compared method: a checkpoint through the public ``TPCCompressor`` API, fingerprinted for the cache.

``tpc-aware`` is given the question; ``tpc-agnostic`` is not (the checkpoint finds or writes the task).
A model spec may name a scorer (``tpc-mini@cosine_bm25``, :func:`split_model_spec`).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any

import tpc_core
from evaluation.budget import MiniLMTokenCounter
from evaluation.methods.base import AGNOSTIC, AWARE, Compressed, Method

__all__ = ["DEFAULT_TPC_MODEL", "TPCMethod", "split_model_spec"]

DEFAULT_TPC_MODEL = "tpc-mini"


@lru_cache(maxsize=1)
def _package_fingerprint() -> str:
    """SHA-256 (16 hex) over the tpc_core package files: sources and shipped checkpoints."""
    digest = hashlib.sha256()
    root = Path(tpc_core.__file__).parent
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _checkpoint_fingerprint(model: str) -> str:
    """``":ckpt=<16 hex>"`` over (file, size, mtime) of a local checkpoint directory; ``""`` for a name.

    A checkpoint retrained in place keeps its path: this keeps cached results of the old weights apart.
    """
    root = Path(model).expanduser()
    if not root.is_dir():
        return ""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return f":ckpt={digest.hexdigest()[:16]}"


def split_model_spec(spec: str) -> tuple[str, str | None]:
    """``"tpc-mini@pooled_cosine"`` -> ``("tpc-mini", "pooled_cosine")``: a TPC model with its scorer overridden.

    The suffix must name a scorer of ``tpc_core.engine.scoring.scorers.SCORERS``; anything else is part of the model's
    name.

    >>> split_model_spec("tpc-mini@cosine_bm25"), split_model_spec("runs/a@b")
    (('tpc-mini', 'cosine_bm25'), ('runs/a@b', None))
    """
    from tpc_core.engine.scoring.scorers import SCORERS  # lazy: loads torch

    model, _, scorer = spec.rpartition("@")
    return (model, scorer) if model and scorer in SCORERS else (spec, None)


@lru_cache(maxsize=2)
def _tpc_compressor(model: str, device: str | None) -> Any:
    from tpc_core import TPCCompressor  # lazy: loads torch

    name, scorer = split_model_spec(model)
    return TPCCompressor.from_pretrained(name, device=device, scorer=scorer)


class TPCMethod(Method):
    """TPC through its public API. ``tpc-aware`` gets the question; ``tpc-agnostic`` gets ``None`` (CTD).

    ``label`` names the row (default: ``tpc-aware`` / ``tpc-agnostic``); it does not enter the cache identity,
    so the same model's results are shared between labels.
    """

    def __init__(self, counter: MiniLMTokenCounter, *, aware: bool, model: str = DEFAULT_TPC_MODEL,
                 device: str | None = None, label: str | None = None, describe_bare: bool = True,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(counter, **kwargs)
        self.aware = aware
        self.model = model
        self.device = device
        # False: a prompt with no written request takes the fallback task without a CTD generation, as the
        # index-time adapters and ``tpc compress-corpus`` do (the index suite sets it).
        self.describe_bare = describe_bare
        self.kind = "tpc-aware" if aware else "tpc-agnostic"
        self.name = label or self.kind
        self.settings = frozenset({AWARE if aware else AGNOSTIC})
        self.needs_question = aware

    def unavailable_reason(self) -> str | None:
        try:
            from tpc_core import TPCCompressor  # noqa: F401
            from tpc_core.loading.hub_cse import cached_unavailable_reason
        except Exception as error:  # noqa: BLE001
            return f"tpc_core not importable ({type(error).__name__}: {error})"
        # Encoders assembled from Hub parts (cpc-*) run only where their weights are cached, like LLMLingua.
        return cached_unavailable_reason(split_model_spec(self.model)[0])

    def identity(self) -> str:
        # The version string does not change while the engine or its shipped checkpoint is being worked on:
        # fingerprint the package files too, so cached results never mix engine states.

        from tpc_core.loading.hub_cse import cached_commits  # lazy: loads torch

        version = getattr(tpc_core, "__version__", "?")
        checkpoint = _checkpoint_fingerprint(split_model_spec(self.model)[0])
        hub = cached_commits(split_model_spec(self.model)[0])  # cpc-*: the commits of the cached Hub parts
        bare = "" if self.describe_bare else ":no-ctd-on-bare"
        return f"{self.kind}:{self.model}{bare}:tpc_core={version}:{_package_fingerprint()}{checkpoint}{hub}"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        compressor = _tpc_compressor(self.model, self.device)
        result = compressor.compress(
            text, question=question if self.aware else None, target_tokens=budget, token_counter=self.counter,
            describe_bare=self.describe_bare,
        )
        info = {"engine_compressed_tokens": result.compressed_tokens, "engine_origin_tokens": result.origin_tokens}
        if result.task_description:
            info["task_description"] = result.task_description
        if result.task_source is not None:
            info["task_source"] = str(result.task_source)
        if result.over_budget:  # the prompt's written request alone exceeds the budget: it is kept (an overrun)
            info["request_over_budget"] = result.over_budget
        return Compressed(result.compressed_prompt, info)
