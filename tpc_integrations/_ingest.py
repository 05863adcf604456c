"""Index-time compression shared by the LangChain and LlamaIndex transformers (neither framework imported here).

TPC needs no question, so a corpus can be compressed once, when it is ingested: every document (or chunk) is
compressed on its own, with its own budget (``rate`` of its tokens, or at most ``target_tokens``), against a
fixed ``task_description`` or, without one, the task TPC reads from the document itself (prompt-agnostic: a
request the text states, else a description its task descriptor generates, the slow path).

Ingestion never loses a document: one whose sentences are each larger than its budget (TPC does not shorten a
sentence) is kept whole, with ``tpc_compression="kept_whole"`` and a warning; a blank one passes through.

``mode="warm"`` cuts nothing: each document keeps its whole text (``tpc_compression="cached"``) and its
sentence-cache entry (sentences, counts, embeddings) is stored in ``cache``, so the query-time compressor given the
same ``cache`` compresses it for each question, prompt-aware, without reading it again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import model_validator

from tpc_core.engine.task import index_time
from tpc_core.options import BatchOptions, CompressOptions
from tpc_integrations._common import TPCEngineSettings
from tpc_integrations._failsafe import Progress
from tpc_integrations._outcomes import (
    COMPRESSED_TOKENS_KEY,
    ORIGIN_TOKENS_KEY,
    STATUS_KEY,
    TASK_DESCRIPTION_KEY,
    TASK_SOURCE_KEY,
)

__all__ = ["INGEST_METADATA_KEYS", "WARMED", "IngestOutcome", "TPCIngestSettings", "compress_each", "warm_each"]

logger = logging.getLogger("tpc_integrations")

INGEST_METADATA_KEYS = (ORIGIN_TOKENS_KEY, COMPRESSED_TOKENS_KEY, TASK_DESCRIPTION_KEY, TASK_SOURCE_KEY, STATUS_KEY)
WARMED = "cached"  # the status of a document whose entry mode="warm" stored: its text is whole
# What mode="warm" reads: how documents are split, where entries go, how many are read per call.
WARMING = ("splitter", "cache", "batch_size", "show_progress")
# What only compression reads, so mode="warm" refuses it when it is set: every other option, and the task.
COMPRESSION_ONLY = ("task_description", *(name for name in CompressOptions.model_fields if name not in WARMING))

class TPCIngestSettings(TPCEngineSettings, BatchOptions):
    """:class:`TPCEngineSettings` for index-time transformers: each document gets its own budget.

    ``target_tokens`` caps each document; ``rate`` keeps that fraction of each document (default 0.2). With
    ``mode="warm"`` nothing is cut: each document's cache entry is stored in ``cache`` instead.
    """

    mode: Literal["compress", "warm"] = "compress"
    """"compress" (default): store each document compressed, lossy, for a smaller index. "warm": keep every text
    whole and store its sentence-cache entry in ``cache`` (required), so that a query-time compressor with the same
    ``cache``, model and splitter compresses it for each question, prompt-aware, at almost no cost. The budget and
    the task belong to the query-time compressor then: setting them here is refused."""

    @model_validator(mode="after")
    def _check_warm_mode(self) -> TPCIngestSettings:
        if self.mode == "warm":
            if self.splitter is not None and not isinstance(self.splitter, str) and not isinstance(
                    getattr(self.splitter, "cache_identity", None), str):
                raise ValueError(f"mode='warm' stores cache entries keyed by the splitter, and the splitter "
                                 f"{type(self.splitter).__name__} has no cache_identity string to name it by: give it "
                                 "one (change it whenever its spans change), or use a built-in splitter name.")
            if self.cache is None:
                raise ValueError("mode='warm' stores each document's sentence-cache entry: pass cache= (\"memory\", a "
                                 "directory or a store), the same one the query-time compressor will be given.")
            cutting = sorted(name for name in COMPRESSION_ONLY if name in self.model_fields_set)
            if cutting:
                raise ValueError(f"mode='warm' keeps every text whole, so {', '.join(cutting)} would do nothing here: "
                                 f"set {'it' if len(cutting) == 1 else 'them'} on the query-time compressor "
                                 "(TPCDocumentCompressor / TPCNodePostprocessor).")
        return self


@dataclass(frozen=True)
class IngestOutcome:
    """What happened to one ingested document.

    Attributes:
        text: The text to index: the compressed text, or the original when nothing was removed, when it is
            blank, or when it was kept whole.
        origin_tokens: Tokens of the original text.
        compressed_tokens: Tokens of ``text``.
        task_description: What the document was compressed for (``None`` when no model ran).
        task_source: A :class:`tpc_core.engine.values.TaskSource` value as a string ("question" for the fixed
            ``task_description``), or ``None`` when no model ran.
        status: :attr:`tpc_core.CompressionResult.status`: "compressed", "unchanged" (nothing removed),
            "kept_whole" (no sentence fits the budget) or "empty" (blank text); with ``mode="warm"``, "cached" (the
            whole text, its cache entry stored) or "empty".
    """

    text: str
    origin_tokens: int
    compressed_tokens: int
    task_description: str | None
    task_source: str | None
    status: str

    @property
    def changed(self) -> bool:
        """Whether ``text`` differs from the original."""
        return self.status == "compressed"

    def metadata(self) -> dict[str, Any]:
        """The ``tpc_*`` keys the transformers add to each document's metadata."""
        return {ORIGIN_TOKENS_KEY: self.origin_tokens, COMPRESSED_TOKENS_KEY: self.compressed_tokens,
                TASK_DESCRIPTION_KEY: self.task_description, TASK_SOURCE_KEY: self.task_source,
                STATUS_KEY: self.status}


def _outcome(text: str, result: Any) -> IngestOutcome:
    """One document's outcome, by the engine's status rule (:attr:`tpc_core.CompressionResult.status`)."""
    status = result.status
    if status == "empty":
        return IngestOutcome(text, 0, 0, None, None, status)
    source = str(result.task_source) if result.task_source is not None else None
    if status == "compressed":
        return IngestOutcome(result.compressed_prompt, result.origin_tokens, result.compressed_tokens,
                             result.task_description, source, status)
    return IngestOutcome(text, result.origin_tokens, result.origin_tokens, result.task_description, source, status)


def compress_each(settings: TPCIngestSettings, texts: Sequence[str],
                  progress: Progress[IngestOutcome] | None = None) -> list[IngestOutcome]:
    """Compress every text on its own (batched through the models); one outcome per text, in order.

    With ``deadline_ms`` the texts go to the engine ``batch_size`` at a time, each batch's outcomes appended to
    ``progress.done`` and the work stopped between batches once ``progress.stop`` is set (the deadline passed);
    without it, in one call.

    Returns:
        ``[]`` for no texts, without loading any model.
    """
    if not texts:
        return []
    progress = progress if progress is not None else Progress()
    step = settings.batch_size if settings.deadline_ms is not None else len(texts)
    for first in range(0, len(texts), step):
        if progress.stop.is_set():
            break
        chunk = list(texts[first:first + step])
        if settings.mode == "warm":
            progress.done.extend(warm_each(settings, chunk))
        else:
            progress.done.extend(_compress_chunk(settings, chunk))
    outcomes = list(progress.done)
    whole = sum(outcome.status == "kept_whole" for outcome in outcomes)
    if whole:
        logger.warning("%s kept %d of %d documents whole: each of their sentences is larger than the document's "
                       "budget and TPC does not shorten a sentence to fit. Raise rate/target_tokens or split them into "
                       "smaller chunks first.", type(settings).__name__, whole, len(outcomes))
    return outcomes


def _compress_chunk(settings: TPCIngestSettings, texts: list[str]) -> list[IngestOutcome]:
    with index_time():  # documents compressed at ingestion ask nothing: no "may have missed" warning
        results = settings.compressor.compress_batch(texts, question=settings.question_for(None),
                                                     **settings.engine_options())
    return [_outcome(text, result) for text, result in zip(texts, results)]


def warm_each(settings: TPCIngestSettings, texts: Sequence[str]) -> list[IngestOutcome]:
    """``mode="warm"``: store every text's cache entry in ``settings.cache`` (entries already there are not read
    again) and keep every text whole; one outcome per text, in order."""
    compressor = settings.compressor
    stored = compressor.warm_cache(list(texts), cache=settings.cache, splitter=settings.splitter,
                                   batch_size=settings.batch_size)
    counts = (settings.resolved_token_counter() or compressor.token_counter).count_many(list(texts))
    logger.info("%s stored %d new sentence-cache entries for %d documents.", type(settings).__name__, stored,
                len(texts))
    return [IngestOutcome(text, count, count, None, None, WARMED if text.strip() else "empty")
            for text, count in zip(texts, counts)]
