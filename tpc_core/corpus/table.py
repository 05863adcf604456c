"""One table of corpus rows through a compressor: what both engines of ``tpc compress-corpus`` run per batch.

The local engine (:mod:`tpc_core.corpus.local`) and every Ray actor (:mod:`tpc_core.corpus.ray_engine`) build their
compressor with :func:`load_compressor` and compress with :func:`compress_table`; this module sits below both, so
neither engine imports the other. ``tpc_core.corpus.local`` re-exports these names.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tpc_core.corpus.io import WARMED, CorpusInputError, CorpusSettings
from tpc_core.engine.task.missed import index_time

if TYPE_CHECKING:
    import pyarrow as pa

    from tpc_core.compressor import TPCCompressor
    from tpc_core.engine.output.result import CompressionResult

__all__ = ["check_threads", "compress_table", "load_compressor", "row_outcome", "torch_threads", "warm_table",
           "warm_target"]

# The engines' own logger name, as before this module was split out of tpc_core.corpus.local.
logger = logging.getLogger("tpc_core.corpus.local")


def check_threads(threads: int | None) -> None:
    """``threads`` is ``None`` or a positive int.

    Raises:
        CorpusInputError: Anything else (a bool, a float, zero, a negative number).
    """
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise CorpusInputError(f"threads must be a positive integer (torch intra-op threads), got {threads!r}")


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``threads`` inside the block, restored after (``None``: unchanged)."""
    check_threads(threads)
    if threads is None:
        yield
        return
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def load_compressor(settings: CorpusSettings, device: str | None = None,
                    local_files_only: bool = False) -> TPCCompressor:
    """Build a compressor from the settings (what every Ray actor does in its ``__init__``)."""
    from tpc_core.compressor import TPCCompressor

    return TPCCompressor.from_pretrained(settings.model, device=device, local_files_only=local_files_only)


def row_outcome(text: str, result: CompressionResult) -> tuple[str, int, str]:
    """The text written for a row, its token count and its ``compression`` status.

    The status is :attr:`tpc_core.CompressionResult.status`, the one rule the index-time transformers of
    ``tpc_integrations`` apply too: ``"compressed"``; ``"unchanged"`` (nothing was removed); ``"kept_whole"`` (no
    sentence fits the budget: TPC does not shorten a sentence to fit, and a corpus row is never emptied silently, so the
    row's text is written as it is); ``"empty"`` (blank text).
    """
    status = result.status
    if status == "empty":
        return text, 0, status
    if status == "compressed":
        return result.compressed_prompt, result.compressed_tokens, status
    return text, result.origin_tokens, status


def compress_table(compressor: TPCCompressor, table: pa.Table, settings: CorpusSettings,
                   batch_size: int) -> pa.Table:
    """``table`` with :data:`~tpc_core.corpus.io.OUTPUT_COLUMNS` appended, one compressed row per input row.

    Args:
        compressor: A loaded compressor.
        table: Rows of IN (the text column holds strings).
        settings: The compression settings (``task_description`` is given as the question when set;
            ``describe_bare`` decides whether the CTD describes rows with no written request; with ``warm_cache``
            the rows are not compressed: :func:`warm_table`).
        batch_size: Rows per model batch.
    """
    import pyarrow as pa

    if settings.warm_cache is not None:
        return warm_table(compressor, table, settings, batch_size)

    texts = table.column(settings.text_column).to_pylist()
    with index_time():  # documents compressed at index time ask nothing: no "may have missed" warning
        results = compressor.compress_batch(texts, question=settings.task_description, rate=settings.rate,
                                            target_tokens=settings.target_tokens,
                                            token_counter=settings.token_counter, batch_size=batch_size,
                                            show_progress=False, describe_bare=settings.describe_bare)
    outcomes = [row_outcome(text, result) for text, result in zip(texts, results)]
    whole = sum(status == "kept_whole" for _, _, status in outcomes)
    if whole:
        logger.warning("%d of %d rows kept whole (compression=kept_whole): each of their sentences is larger than "
                       "the row's budget; raise --rate/--target-tokens or split the rows", whole, len(outcomes))
    columns = {"compressed_text": pa.array([text for text, _, _ in outcomes], pa.string()),
               "origin_tokens": pa.array([r.origin_tokens for r in results], pa.int64()),
               "compressed_tokens": pa.array([tokens for _, tokens, _ in outcomes], pa.int64()),
               "task_description": pa.array([r.task_description for r in results], pa.string()),
               "task_source": pa.array([str(r.task_source) if r.task_source is not None else None
                                       for r in results], pa.string()),
               "compression": pa.array([status for _, _, status in outcomes], pa.string())}
    for name, values in columns.items():
        table = table.append_column(name, values)
    return table


def warm_target(spec: str) -> Any:
    """Where ``--warm-cache`` stores entries: the directory, or for a ``redis://`` URL this process's strict
    :class:`~tpc_core.cache.redis_store.RedisCache` (a failed read or write raises
    :class:`~tpc_core.cache.redis_store.CacheUnavailable` instead of going on uncached, so no row is written to
    OUT whose entry was not stored)."""
    from tpc_core.cache.redis_store import is_redis_url, shared_redis_cache

    return shared_redis_cache(spec, strict=True) if is_redis_url(spec) else spec


def warm_table(compressor: TPCCompressor, table: pa.Table, settings: CorpusSettings, batch_size: int) -> pa.Table:
    """``--warm-cache``: each row's sentence-cache entry stored in ``settings.warm_cache`` (rows already there are not
    read again), and ``table`` with the output columns of a row kept whole: ``compressed_text`` is the text,
    ``compression`` is ``"cached"`` (``"empty"`` for blank text), no task.

    Raises:
        CacheUnavailable: A Redis ``warm_cache`` failed (:func:`warm_target`); the table is not returned.
    """
    import pyarrow as pa

    from tpc_core.engine.tokens import resolve_token_counter

    if settings.warm_cache is None:
        raise ValueError("warm_table stores entries in settings.warm_cache: give a directory or a redis:// URL.")
    texts = table.column(settings.text_column).to_pylist()
    stored = compressor.warm_cache(texts, cache=warm_target(settings.warm_cache), batch_size=batch_size)
    counter = resolve_token_counter(settings.token_counter) if settings.token_counter else compressor.token_counter
    counts = counter.count_many(texts)
    logger.debug("%d new cache entries for %d rows in %s", stored, len(texts), settings.warm_cache)
    columns = {"compressed_text": pa.array(texts, pa.string()), "origin_tokens": pa.array(counts, pa.int64()),
               "compressed_tokens": pa.array(counts, pa.int64()), "task_description": pa.nulls(len(texts), pa.string()),
               "task_source": pa.nulls(len(texts), pa.string()),
               "compression": pa.array([WARMED if text.strip() else "empty" for text in texts], pa.string())}
    for name, values in columns.items():
        table = table.append_column(name, values)
    return table
