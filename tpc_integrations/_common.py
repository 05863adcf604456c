"""What the LangChain and LlamaIndex adapters share: settings, the model cache, and result mapping.

The adapters hold no compression logic. Each one turns its framework's objects into a list of texts,
calls :func:`compress_call` (one :meth:`tpc_core.TPCCompressor.compress` call over all of them, so a
``"global"`` budget spans the whole retrieved set; the engine also applies the post-budget filters ``min_score``
/ ``top_n``) and turns each :class:`DocumentOutcome` back into a new framework object. A settings field named
like one of the engine's options (:class:`tpc_core.engine.options.CompressKeywords`, the budget) reaches the
engine under that name (:meth:`TPCEngineSettings.engine_options`). This module imports pydantic but neither
framework.
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
from tpc_core.engine.options import CompressKeywords
from tpc_core.engine.selection import validate_budget_args, validate_filter_args
from tpc_core.engine.tokens import TokenCounter, resolve_token_counter
from tpc_core.loading.devices import resolve_device, resolve_dtype
from tpc_integrations._checks import (check_cache, check_device, check_dtype, check_model, check_model_kwargs,
                                      check_splitter)
from tpc_integrations._peer_names import translate_peer_names

__all__ = [
    "ENGINE_KEYWORDS",
    "METADATA_KEYS",
    "CallOutcome",
    "DocumentOutcome",
    "TPCEngineSettings",
    "TPCSettings",
    "clear_model_cache",
    "compress_call",
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
RELEVANCE_SCORE_KEY = "relevance_score"  # the rerankers' convention (Cohere, Jina, Flashrank, ...)
METADATA_KEYS = (SCORE_KEY, RELEVANCE_SCORE_KEY, ORIGIN_TOKENS_KEY, COMPRESSED_TOKENS_KEY, KEPT_SENTENCES_KEY,
                 TASK_DESCRIPTION_KEY)
ENGINE_KEYWORDS = ("target_tokens", "rate", *sorted(CompressKeywords.__optional_keys__))
"""The keywords of ``TPCCompressor.compress`` / ``compress_batch`` that an adapter field passes by its own name
(``token_counter`` is passed resolved)."""

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
class TPCEngineSettings(BaseModel):
    """What every adapter exposes as pydantic fields: the model, the budget, how text is split and counted,
    and the task to compress for when there is no query. Mixed into each adapter's framework base class.

    Pass ``compressor=`` (a ready :class:`tpc_core.TPCCompressor`) to skip loading; otherwise the model named
    by ``model_name_or_path`` is checked at construction (it exists and is a TPC checkpoint, the device exists)
    and loaded on first use, or at construction with ``load_on_init=True``, and shared by every adapter
    configured alike. Field names of LLMLingua, EmbeddingsFilter, SentenceEmbeddingOptimizer and rerankers are
    accepted where they mean the same (``target_token``, ``model_name``, ``model``, ``device_map``, ``k``) and
    answered with our field's name where they do not (see :mod:`tpc_integrations._peer_names`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", protected_namespaces=(),
                              use_attribute_docstrings=True)

    model_name_or_path: str = DEFAULT_MODEL
    """TPC checkpoint: "tpc-mini" (offline default), "cpc-llama-1b"/"cpc-mistral-7b" (the authors' published CPC
    encoders, from the Hub), a local directory or a Hub repo id. Ignored when a ready ``compressor`` is passed.
    Peer names: ``model_name``, ``model``."""
    revision: Optional[str] = None
    """Hub revision (tag, branch or commit) of the checkpoint; registered names are pinned already."""
    device: Optional[str] = None
    """Device: "cpu", "cuda", "cuda:1", "mps", or None for the best available one (no GPU is assumed); checked
    at construction. Peer name: ``device_map`` (a device string; "auto" is None)."""
    dtype: Optional[str] = None
    """Weights dtype: "fp32", "bf16", "fp16", or None (bf16 on CUDA, fp32 elsewhere)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict, repr=False, exclude=True)
    """Other ``TPCCompressor.from_pretrained`` options: token, cache_dir, local_files_only, trust_remote_code,
    load_ctd, ctd (the CTD checkpoint paired with a ``cpc-*`` encoder)."""
    load_on_init: bool = False
    """Load the model when the adapter is built (default: on first use), so a pipeline pays the load up front."""
    target_tokens: Optional[int] = None
    """Token budget (exclusive with ``rate``). Peer name: ``target_token`` (-1 means None)."""
    rate: Optional[float] = None
    """Fraction of tokens to keep, in (0, 1]; the engine's default 0.2 when neither budget is given."""
    token_counter: Any = None
    """How budgets are counted: None (the CSE tokenizer), "cl100k_base", a tokenizer, a name/path or a
    ``Callable[[str], int]``; count with your LLM's tokenizer to budget its prompt exactly."""
    force_keep_patterns: tuple[str, ...] = ()
    """Regexes; sentences matching any are taken first (still within budget)."""
    keep_first_sentence: bool = False
    """Take each document's first sentence first (still within budget), e.g. titles."""
    splitter: Any = None
    """Sentence splitter: "nupunkt" (the checkpoint's default), "regex", "line", "nltk", or an object with a
    ``spans(text)`` method returning (start, end) offsets."""
    task_description: Optional[str] = None
    """A fixed description of the task (e.g. "Answer questions about the company's products"), used instead of
    the one TPC's task descriptor reads from the documents whenever there is no query: prompt-agnostic
    compression without its cost. A query, when given, always wins."""
    cache: Any = None
    """Sentence cache: what the engine reads of each document before any question (its sentences, their counts and
    embeddings) is stored once and reused, so a chunk retrieved again costs almost nothing. None (off), "memory"
    (an LRU in this process, shared by every adapter on the same model), a directory path (shared by processes),
    a ``tpc_core.cache.SentenceCache``, a LangChain byte store (``InMemoryByteStore``, ``LocalFileStore``, ...) or a
    LlamaIndex key-value store (``SimpleKVStore``, ...). Checked at construction: another kind is a TypeError, a
    directory that cannot be written a PermissionError naming it."""

    _compressor: Optional[TPCCompressor] = PrivateAttr(default=None)
    _counter: Optional[tuple[Any, TokenCounter]] = PrivateAttr(default=None)
    _agnostic_logged: bool = PrivateAttr(default=False)

    def __init__(self, compressor: TPCCompressor | None = None, **data: Any) -> None:
        super().__init__(**data)
        if compressor is not None and not isinstance(compressor, TPCCompressor):
            raise TypeError(f"compressor must be a tpc_core.TPCCompressor, got {type(compressor).__name__}.")
        self._compressor = compressor
        if compressor is None:
            check_model(self.model_name_or_path, self.revision, self.model_kwargs)
            if self.load_on_init:
                _ = self.compressor

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle with pydantic's own restore, engine included.

        LlamaIndex's ``BaseComponent`` would re-run ``__init__`` from the public fields and so swap a
        ``compressor=`` passed in for the shared model of ``model_name_or_path``. Fields or private attributes
        that a framework's ``__getstate__`` left out as unpicklable get their defaults back.
        """
        BaseModel.__setstate__(self, state)
        for name, field in type(self).model_fields.items():
            if name not in self.__dict__:
                self.__dict__[name] = field.get_default(call_default_factory=True, validated_data=self.__dict__)
        private = self.__pydantic_private__ if self.__pydantic_private__ is not None else {}
        for name, attribute in self.__private_attributes__.items():
            if name not in private:
                private[name] = attribute.get_default()
        object.__setattr__(self, "__pydantic_private__", private)

    @model_validator(mode="before")
    @classmethod
    def _peer_names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return translate_peer_names(cls.__name__, data, cls.model_fields, extra_names=("compressor",))
        return data

    @model_validator(mode="after")
    def _check_settings(self) -> TPCEngineSettings:
        validate_budget_args(self.target_tokens, self.rate)
        check_device(self.device)
        check_dtype(self.dtype, self.device)
        check_model_kwargs(self.model_kwargs)
        check_splitter(self.splitter)
        check_cache(self.cache)
        if self.task_description is not None and not self.task_description.strip():
            raise ValueError("task_description is blank: pass a description of the task, or None to let TPC read "
                             "the task from the documents (prompt-agnostic).")
        return self

    @property
    def compressor(self) -> TPCCompressor:
        """The engine: the one passed in, or the shared one for this configuration (loaded on first access)."""
        if self._compressor is None:
            self._compressor = load_shared_compressor(self.model_name_or_path, revision=self.revision,
                                                      device=self.device, dtype=self.dtype,
                                                      model_kwargs=self.model_kwargs)
        return self._compressor

    def engine_options(self) -> dict[str, Any]:
        """The keywords for :meth:`tpc_core.TPCCompressor.compress` / ``compress_batch``: each field named like
        one of :data:`ENGINE_KEYWORDS`, under that name, and the resolved ``token_counter``.

        So an engine option reaches an adapter by a field of its name alone (query-time adapters have
        ``budget_scope``, ``min_score``, ``top_n``; index-time ones ``batch_size``, ``show_progress``,
        ``describe_bare``).
        """
        fields = type(self).model_fields
        options = {name: getattr(self, name) for name in ENGINE_KEYWORDS if name in fields}
        options["token_counter"] = self.resolved_token_counter()
        return options

    def resolved_token_counter(self) -> TokenCounter | None:
        """The user's counter, resolved once (a tokenizer name would otherwise be loaded on every call)."""
        if self.token_counter is None:
            return None
        if self._counter is None or self._counter[0] is not self.token_counter:
            self._counter = (self.token_counter, resolve_token_counter(self.token_counter))
        return self._counter[1]

    def question_for(self, query: str | None) -> str | None:
        """The question sentences are scored against: the query, else ``task_description``, else ``None``
        (prompt-agnostic, noted once per adapter at INFO because it is the slow path)."""
        if query is not None and query.strip():
            return query
        if self.task_description is not None:
            return self.task_description
        if not self._agnostic_logged:
            self._agnostic_logged = True
            logger.info("%s has no query and no task_description, so it compresses prompt-agnostically: TPC reads the "
                        "task from the documents (a request they state, else a description its task descriptor "
                        "generates: the slow path). Pass a query, or set task_description= for a fixed task. Logged "
                        "once per adapter.", type(self).__name__)
        return None


class TPCSettings(TPCEngineSettings):
    """:class:`TPCEngineSettings` plus what query-time adapters (compressors, postprocessors) add: one budget
    across the retrieved documents and reranker-style knobs applied after it.

    ``top_n``, ``min_score`` and ``sort_by_score`` act after the budget: they only remove sentences or documents,
    so the budget stays a hard ceiling.
    """

    budget_scope: Literal["global", "per_document"] = "global"
    """Budget scope: "global" is one budget across the call's documents (the best sentences win wherever
    they are); "per_document" gives each document the budget's share proportional to its size."""
    top_n: Optional[int] = None
    """Keep at most this many documents (those with the highest TPC score), as a reranker does; None: all that
    keep a sentence. Peer name: ``k``. When the budget covers everything nothing is scored and the first
    ``top_n`` (the retriever's order) are kept."""
    min_score: Optional[float] = None
    """Relevance floor: kept sentences scoring below it are removed (a document left empty is dropped), so an
    off-topic sentence is not kept just to fill the budget. Scores are cosines of TPC's sentence embeddings
    (see ``tpc_relevance_score``); not applied when nothing was scored."""
    sort_by_score: bool = False
    """Return documents by TPC score, best first (reranker order); default: the input (retrieval) order."""

    @model_validator(mode="after")
    def _check_knobs(self) -> TPCSettings:
        validate_filter_args(self.min_score, self.top_n)
        return self


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
        task_description: The question sentences were scored against: the user's query, the fixed
            ``task_description``, or in prompt-agnostic mode the one TPC read from the documents; ``None`` when
            nothing was scored.
        task_source: Where it came from, a :class:`tpc_core.engine.task.TaskSource` value as a string ("question" for a
            query or the fixed description); ``None`` when nothing was scored.
    """

    text: str
    score: float | None
    origin_tokens: int
    compressed_tokens: int
    kept_sentences: tuple[str, ...]
    task_description: str | None
    task_source: str | None = None

    @property
    def kept(self) -> bool:
        """Whether any sentence survived (documents that lost every sentence are dropped by the adapters)."""
        return bool(self.text)

    def metadata(self) -> dict[str, Any]:
        """The keys the adapters add to a document's metadata (the score also under the rerankers'
        ``relevance_score``)."""
        return {SCORE_KEY: self.score, RELEVANCE_SCORE_KEY: self.score, ORIGIN_TOKENS_KEY: self.origin_tokens,
                COMPRESSED_TOKENS_KEY: self.compressed_tokens, KEPT_SENTENCES_KEY: list(self.kept_sentences),
                TASK_DESCRIPTION_KEY: self.task_description}


@dataclass(frozen=True)
class CallOutcome:
    """One adapter call: each document's outcome, in input order, and the call's totals.

    Attributes:
        documents: One outcome per input text.
        origin_tokens: Tokens of the input texts (sum over documents).
        compressed_tokens: Tokens kept (sum over documents).
        budget: The call's token budget (0 for no text).
        task_description: See :class:`DocumentOutcome`.
        task_source: See :class:`DocumentOutcome`.
        mode: "query" (the call's query), "task_description" (the fixed one), "agnostic" (read from the
            documents) or "unscored" (the budget covered everything; no model ran).
        cache_hits: Documents served from the sentence cache (0 without ``cache``).
        cache_misses: Documents looked up in the cache and not found (read by the model, then stored).
    """

    documents: list[DocumentOutcome]
    origin_tokens: int
    compressed_tokens: int
    budget: int
    task_description: str | None
    task_source: str | None
    mode: str
    cache_hits: int = 0
    cache_misses: int = 0

    @property
    def from_cache(self) -> bool:
        """Whether the call was served from the cache: every document found there, none read by the model."""
        return self.cache_hits > 0 and self.cache_misses == 0

    def event_data(self) -> dict[str, Any]:
        """What the adapters report per call to framework callbacks (JSON-serialisable), including whether the
        sentence cache served it (``from_cache``, ``cache_hits``, ``cache_misses``: documents)."""
        return {"origin_tokens": self.origin_tokens, "compressed_tokens": self.compressed_tokens,
                "budget": self.budget, "documents_in": len(self.documents),
                "documents_out": sum(outcome.kept for outcome in self.documents),
                "task_description": self.task_description, "task_source": self.task_source, "mode": self.mode,
                "from_cache": self.from_cache, "cache_hits": self.cache_hits, "cache_misses": self.cache_misses}


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


def compress_call(settings: TPCSettings, texts: Sequence[str], query: str | None) -> CallOutcome:
    """Compress ``texts`` in one engine call with the adapter's options (the engine applies the budget and the
    post-budget filters ``min_score`` / ``top_n``) and map its result to one outcome per text.

    Args:
        settings: The adapter (its engine, budget and selection options).
        texts: Document texts (already checked to be str).
        query: The user's question; ``None`` or blank means the fixed ``task_description`` if set, else
            prompt-agnostic mode (TPC reads the task from the documents).

    Returns:
        The call's outcome; for no texts an empty one, without loading any model.
    """
    if not texts:
        return CallOutcome([], 0, 0, 0, None, None, "unscored")
    question = settings.question_for(query)
    mode = "query" if question is not None and question == query else (
        "task_description" if question is not None else "agnostic")
    result = settings.compressor.compress(list(texts), question=question, **settings.engine_options())
    source = str(result.task_source) if result.task_source is not None else None
    outcomes = [DocumentOutcome(text=result.compressed_documents[i], score=result.document_score(i),
                                origin_tokens=result.document_origin_tokens[i],
                                compressed_tokens=result.document_compressed_tokens[i],
                                kept_sentences=tuple(s.text for s in result.kept_sentences(i)),
                                task_description=result.task_description, task_source=source)
                for i in range(len(texts))]
    dropped = sum(not outcome.kept for outcome in outcomes)
    if dropped:
        logger.debug("TPC dropped %d of %d documents (no sentence kept under the budget, min_score or top_n, or no "
                     "text).", dropped, len(outcomes))
    return CallOutcome(outcomes, sum(result.document_origin_tokens), sum(result.document_compressed_tokens),
                       result.budget, result.task_description, source, mode if result.scored else "unscored",
                       cache_hits=result.cache_hits, cache_misses=result.cache_misses)
