"""Retrieved chunks from qa_dev contexts: what the query-time cache suite hands a compressor.

A chunk is consecutive sentences of one context, verbatim, cut at sentence ends (``tpc_core.segmentation``) to
about ``chunk_tokens`` MiniLM tokens, as a RAG pipeline's text splitter would. The JSON-blob source
``kv_retrieval_75_keys`` is left out: it has no sentences to cut at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from data_access.loaders import Sample, round_robin
from evaluation.budget import MiniLMTokenCounter
from tpc_core.segmentation import split_sentences

__all__ = ["LEFT_OUT_SOURCES", "Chunk", "build_chunks", "retrieval_set", "spread_over_sources"]

LEFT_OUT_SOURCES = ("kv_retrieval_75_keys",)


@dataclass(frozen=True)
class Chunk:
    """One retrievable chunk: consecutive sentences of one context, verbatim, about ``chunk_tokens`` long."""

    text: str
    sample_id: str
    question: str
    tokens: int


def spread_over_sources(samples: Sequence[Sample], count: int | None) -> list[Sample]:
    """``count`` samples (all for ``None``) taken round-robin over their sources, each source in id order."""
    by_source: dict[str, list[Sample]] = {}
    for sample in sorted(samples, key=lambda s: s.id):
        if sample.source not in LEFT_OUT_SOURCES:
            by_source.setdefault(sample.source, []).append(sample)
    queues = [by_source[source] for source in sorted(by_source)]
    total = sum(map(len, queues))
    return round_robin(queues, total if count is None else min(count, total))


def build_chunks(sample: Sample, counter: MiniLMTokenCounter, chunk_tokens: int) -> list[Chunk]:
    """``sample``'s context cut into chunks of at most ``chunk_tokens`` at sentence ends (a longer sentence is a
    chunk of its own); a last chunk under half the size is dropped, as most chunkers merge or drop such tails."""
    text = sample.context
    spans = split_sentences(text)
    counts = counter.many([text[start:end] for start, end in spans])
    chunks: list[Chunk] = []
    first = 0
    size = 0
    for index, count in enumerate(counts):
        if size and size + count > chunk_tokens:
            chunks.append(_chunk(sample, text, spans[first][0], spans[index - 1][1], size))
            first = index
            size = 0
        size += count
    if spans and size >= chunk_tokens // 2:
        chunks.append(_chunk(sample, text, spans[first][0], spans[-1][1], size))
    return chunks


def _chunk(sample: Sample, text: str, start: int, end: int, tokens: int) -> Chunk:
    return Chunk(text=text[start:end], sample_id=sample.id, question=sample.question, tokens=tokens)


def retrieval_set(samples: Sequence[Sample], counter: MiniLMTokenCounter, count: int,
                  chunk_tokens: int) -> tuple[list[Chunk], str]:
    """The first ``count`` chunks of the samples (spread over sources), and the question of the first one:
    what a retriever hands the compressor for one question."""
    chunks: list[Chunk] = []
    for sample in spread_over_sources(samples, None):
        chunks += build_chunks(sample, counter, chunk_tokens)
        if len(chunks) >= count:
            break
    if len(chunks) < count:
        raise ValueError(f"only {len(chunks)} chunks of ~{chunk_tokens} tokens in {len(samples)} samples; "
                         f"{count} were asked for")
    return chunks[:count], chunks[0].question
