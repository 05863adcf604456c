"""What the LangChain and LlamaIndex adapters share: settings, the model cache, and result mapping.

The adapters hold no compression logic. Each one turns its framework's objects into a list of texts,
calls :func:`compress_texts` (one :meth:`tpc_core.TPCCompressor.compress` call over all of them, so a
``"global"`` budget spans the whole retrieved set) and turns each :class:`DocumentOutcome` back into a new
framework object. This module imports pydantic but neither framework.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from tpc_core import DEFAULT_MODEL, TPCCompressor
from tpc_core.devices import resolve_device, resolve_dtype
from tpc_core.selection import validate_budget_args
from tpc_core.tokens import TokenCounter, resolve_token_counter

__all__ = [
    "METADATA_KEYS",
    "DocumentOutcome",
    "TPCSettings",
    "clear_model_cache",
    "compress_texts",
    "copy_metadata",
    "ensure_text",
    "ensure_type",
    "load_shared_compressor",
]

logger = logging.getLogger("tpc_integrations")

SCORE_KEY = "tpc_relevance_score"
ORIGIN_TOKENS_KEY = "tpc_origin_tokens"
COMPRESSED_TOKENS_KEY = "tpc_compressed_tokens"
KEPT_SENTENCES_KEY = "tpc_kept_sentences"
TASK_DESCRIPTION_KEY = "tpc_task_description"
METADATA_KEYS = (SCORE_KEY, ORIGIN_TOKENS_KEY, COMPRESSED_TOKENS_KEY, KEPT_SENTENCES_KEY, TASK_DESCRIPTION_KEY)

# ---------------------------------------------------------------------------------------------- model cache
_CacheKey = tuple[str, Optional[str], str, str, tuple[tuple[str, str], ...]]
_models: dict[_CacheKey, TPCCompressor] = {}
_key_locks: dict[_CacheKey, threading.Lock] = {}
_cache_lock = threading.Lock()
# TPCCompressor is thread-safe (only its lazily loaded CTD is guarded), so adapters share one engine.


def _cache_key(model_name_or_path: str | os.PathLike[str], revision: str | None, device: str | None,
               dtype: str | None, model_kwargs: dict[str, Any]) -> _CacheKey:
    name = os.fspath(model_name_or_path)
    if os.path.isdir(name):  # "./ckpt" and "/abs/ckpt" are the same model
        name = os.path.realpath(name)
    resolved_device = resolve_device(device)
    resolved_dtype = resolve_dtype(dtype, resolved_device)
    options = tuple(sorted((key, repr(value)) for key, value in model_kwargs.items()))
    return name, revision, str(resolved_device), str(resolved_dtype), options


def load_shared_compressor(model_name_or_path: str | os.PathLike[str] = DEFAULT_MODEL, *, revision: str | None = None,
                           device: str | None = None, dtype: str | None = None,
                           model_kwargs: dict[str, Any] | None = None) -> TPCCompressor:
    """The process-wide compressor for (model, revision, device, dtype, options), loaded on first request.

    Two adapters configured alike share one set of weights; concurrent first requests load it once.
    """
    model_kwargs = dict(model_kwargs or {})
    key = _cache_key(model_name_or_path, revision, device, dtype, model_kwargs)
    with _cache_lock:
        if key in _models:
            return _models[key]
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # loading one model never blocks look-ups of another
        if key not in _models:
            logger.info("Loading TPC compressor %s (revision=%s, device=%s, dtype=%s)", key[0], revision, key[2],
                        key[3])
            _models[key] = TPCCompressor.from_pretrained(model_name_or_path, revision=revision, device=device,
                                                         dtype=dtype, **model_kwargs)
        return _models[key]


def clear_model_cache() -> None:
    """Forget every shared compressor (adapters that already hold one keep it)."""
    with _cache_lock:
        _models.clear()
        _key_locks.clear()


# ---------------------------------------------------------------------------------------------- settings
class TPCSettings(BaseModel):
    """Configuration both adapters expose as pydantic fields (mixed into each adapter's framework base class).

    Pass ``compressor=`` (a ready :class:`tpc_core.TPCCompressor`) to skip loading; otherwise the model named
    by ``model_name_or_path`` is loaded on first use and shared by every adapter configured alike.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", protected_namespaces=(),
                              use_attribute_docstrings=True)

    model_name_or_path: str = DEFAULT_MODEL
    """TPC checkpoint: "tpc-mini" (offline default), "tpc-base"/"tpc-large"/"tpc-huge", a local directory or a
    Hub repo id. Ignored when a ready ``compressor`` is passed."""
    revision: Optional[str] = None
    """Hub revision (tag, branch or commit) of the checkpoint; registered names are pinned already."""
    device: Optional[str] = None
    """Device: "cpu", "cuda", "cuda:1", "mps", or None for the best available one (no GPU is assumed)."""
    dtype: Optional[str] = None
    """Weights dtype: "fp32", "bf16", "fp16", or None (bf16 on CUDA, fp32 elsewhere)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict, repr=False, exclude=True)
    """Other ``TPCCompressor.from_pretrained`` options: token, cache_dir, local_files_only, trust_remote_code."""
    target_tokens: Optional[int] = None
    """Token budget for the documents of one call (exclusive with ``rate``)."""
    rate: Optional[float] = None
    """Fraction of tokens to keep, in (0, 1]; the engine's default 0.2 when neither budget is given."""
    token_counter: Any = None
    """How budgets are counted: None (the CSE tokenizer), "cl100k_base", a tokenizer, a name/path or a
    ``Callable[[str], int]``; count with your LLM's tokenizer to budget its prompt exactly."""
    budget_scope: Literal["global", "per_document"] = "global"
    """Budget scope: "global" is one budget across the call's documents (the best sentences win wherever
    they are); "per_document" gives each document the budget's share proportional to its size."""
    force_keep_patterns: tuple[str, ...] = ()
    """Regexes; sentences matching any are taken first (still within budget)."""
    keep_first_sentence: bool = False
    """Take each document's first sentence first (still within budget), e.g. titles."""

    _compressor: Optional[TPCCompressor] = PrivateAttr(default=None)
    _counter: Optional[tuple[Any, TokenCounter]] = PrivateAttr(default=None)

    def __init__(self, compressor: TPCCompressor | None = None, **data: Any) -> None:
        super().__init__(**data)
        if compressor is not None and not isinstance(compressor, TPCCompressor):
            raise TypeError(f"compressor must be a tpc_core.TPCCompressor, got {type(compressor).__name__}.")
        self._compressor = compressor

    @model_validator(mode="after")
    def _check_budget(self) -> TPCSettings:
        validate_budget_args(self.target_tokens, self.rate)
        return self

    @property
    def compressor(self) -> TPCCompressor:
        """The engine: the one passed in, or the shared one for this configuration (loaded on first access)."""
        if self._compressor is None:
            self._compressor = load_shared_compressor(self.model_name_or_path, revision=self.revision,
                                                      device=self.device, dtype=self.dtype,
                                                      model_kwargs=self.model_kwargs)
        return self._compressor

    def _token_counter(self) -> TokenCounter | None:
        """The user's counter, resolved once (a tokenizer name would otherwise be loaded on every call)."""
        if self.token_counter is None:
            return None
        if self._counter is None or self._counter[0] is not self.token_counter:
            self._counter = (self.token_counter, resolve_token_counter(self.token_counter))
        return self._counter[1]


# ---------------------------------------------------------------------------------------------- mapping
@dataclass(frozen=True)
class DocumentOutcome:
    """What happened to one input document.

    Attributes:
        text: The compressed text: kept sentences verbatim and in order ("" when none was kept).
        score: The document's TPC relevance (its best sentence's score); ``None`` when the budget covered
            every document, so nothing was scored.
        origin_tokens: Tokens of the input document.
        compressed_tokens: Tokens of ``text``.
        kept_sentences: The kept sentences, verbatim, in document order.
        task_description: The question sentences were scored against: the user's query, or in
            prompt-agnostic mode the task description the CTD wrote; ``None`` when nothing was scored.
    """

    text: str
    score: float | None
    origin_tokens: int
    compressed_tokens: int
    kept_sentences: tuple[str, ...]
    task_description: str | None

    @property
    def kept(self) -> bool:
        """Whether any sentence survived (documents that lost every sentence are dropped by the adapters)."""
        return bool(self.text)

    def metadata(self) -> dict[str, Any]:
        """The namespaced keys the adapters add to a document's metadata."""
        return {SCORE_KEY: self.score, ORIGIN_TOKENS_KEY: self.origin_tokens,
                COMPRESSED_TOKENS_KEY: self.compressed_tokens, KEPT_SENTENCES_KEY: list(self.kept_sentences),
                TASK_DESCRIPTION_KEY: self.task_description}


def ensure_text(value: Any, label: str) -> str:
    """``value`` if it is a str, else a TypeError naming the document."""
    if not isinstance(value, str):
        raise TypeError(f"{label} has content of type {type(value).__name__}; TPC compresses text only. "
                        "Convert it to str or filter such documents out before the compressor.")
    return value


def ensure_type(value: Any, expected: type, label: str, hint: str) -> None:
    """A TypeError naming the item when an adapter is handed something other than its framework's object."""
    if not isinstance(value, expected):
        raise TypeError(f"{label} is a {type(value).__name__}, not a {hint}.")


def copy_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of ``metadata``; a value ``copy.deepcopy`` refuses (a lock, a client) is shared by reference.

    The adapters promise new objects that share nothing mutable with their inputs; values that cannot be
    copied at all are the one documented exception (they are handles, not data).
    """
    try:
        return copy.deepcopy(metadata)
    except Exception:  # noqa: BLE001 - deepcopy raises TypeError, PicklingError, or the object's own error
        copied: dict[str, Any] = {}
        for key, value in metadata.items():
            try:
                copied[key] = copy.deepcopy(value)
            except Exception:  # noqa: BLE001
                copied[key] = value
        return copied


def compress_texts(settings: TPCSettings, texts: Sequence[str], query: str | None) -> list[DocumentOutcome]:
    """Compress ``texts`` in one engine call; one outcome per text, in input order.

    Args:
        settings: The adapter (its engine, budget and selection options).
        texts: Document texts (already checked to be str).
        query: The user's question; ``None`` or blank means prompt-agnostic mode (the CTD describes the task).

    Returns:
        ``[]`` for no texts, without loading any model.
    """
    if not texts:
        return []
    compressor = settings.compressor
    user_counter = settings._token_counter()
    result = compressor.compress(list(texts), question=query, target_tokens=settings.target_tokens,
                                 rate=settings.rate, token_counter=user_counter,
                                 budget_scope=settings.budget_scope,
                                 force_keep_patterns=settings.force_keep_patterns,
                                 keep_first_sentence=settings.keep_first_sentence)
    origin, compressed = result.document_origin_tokens, result.document_compressed_tokens
    outcomes = [DocumentOutcome(text=text, score=result.document_score(i), origin_tokens=origin[i],
                                compressed_tokens=compressed[i] if text else 0,
                                kept_sentences=tuple(s.text for s in result.kept_sentences(i)),
                                task_description=result.task_description)
                for i, text in enumerate(result.compressed_documents)]
    dropped = sum(not outcome.kept for outcome in outcomes)
    if dropped:
        logger.debug("TPC dropped %d of %d documents (no sentence kept under the budget, or no text).", dropped,
                     len(outcomes))
    return outcomes
