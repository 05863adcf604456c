"""What an adapter call returns, framework-neutral: each document's outcome, the call's totals and the figures of its
event; :func:`compress_call` makes them from one engine call. Neither framework is imported here."""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ALL_TPC_KEYS", "METADATA_KEYS", "CallOutcome", "CallSettings", "DocumentOutcome", "compress_call",
           "copy_metadata", "ensure_text", "ensure_type", "fresh_metadata"]

logger = logging.getLogger("tpc_integrations")

SCORE_KEY = "tpc_relevance_score"
ORIGIN_TOKENS_KEY = "tpc_origin_tokens"
COMPRESSED_TOKENS_KEY = "tpc_compressed_tokens"
KEPT_SENTENCES_KEY = "tpc_kept_sentences"
TASK_DESCRIPTION_KEY = "tpc_task_description"
TASK_SOURCE_KEY = "tpc_task_source"
STATUS_KEY = "tpc_compression"
RELEVANCE_SCORE_KEY = "relevance_score"  # the rerankers' convention (Cohere, Jina, Flashrank, ...)
METADATA_KEYS = (SCORE_KEY, RELEVANCE_SCORE_KEY, ORIGIN_TOKENS_KEY, COMPRESSED_TOKENS_KEY, KEPT_SENTENCES_KEY,
                 TASK_DESCRIPTION_KEY, TASK_SOURCE_KEY)
ALL_TPC_KEYS = frozenset({*METADATA_KEYS, STATUS_KEY})
"""Every metadata key an adapter writes (query time or index time): a result carries only the keys of the call that
made it, so those an earlier call left (an index-time ``tpc_compression``) are removed first."""


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
        task_source: Where it came from, a :class:`tpc_core.engine.values.TaskSource` value as a string ("question"
            for a query or the fixed description); ``None`` when nothing was scored.
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
                TASK_DESCRIPTION_KEY: self.task_description, TASK_SOURCE_KEY: self.task_source}


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


def fresh_metadata(metadata: dict[str, Any], tpc_metadata: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``metadata`` (:func:`copy_metadata`) without the keys earlier TPC calls wrote, plus ``tpc_metadata``:
    the result's metadata describes the call that made it."""
    kept = {key: value for key, value in metadata.items() if key not in ALL_TPC_KEYS}
    return {**copy_metadata(kept), **tpc_metadata}


class CallSettings(Protocol):
    """What :func:`compress_call` reads of an adapter's settings (``_common.TPCSettings`` is one): declared here so
    this module stays below the settings that use it."""

    @property
    def compressor(self) -> Any:
        """The engine: a :class:`tpc_core.TPCCompressor`."""

    def question_for(self, query: str | None) -> str | None:
        """The question sentences are scored against, or ``None`` for prompt-agnostic mode."""

    def engine_options(self) -> dict[str, Any]:
        """The keywords of the engine's ``compress`` call."""


def compress_call(settings: CallSettings, texts: Sequence[str], query: str | None) -> CallOutcome:
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
