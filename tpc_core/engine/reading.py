"""Reading a batch of prompts: each split into sentences, counted, and its sentences embedded per document.

:func:`segment` splits and counts one prompt and resolves its budget. :func:`read_prompts` does it for a batch and
returns a :class:`ReadBatch`, whose :meth:`~ReadBatch.embed` gives the sentence embeddings of the prompts the
engine scores, read by the scorer's per-document step (``Scorer.embed_documents``). A sentence cache is a wrapper
around that step (a :class:`DocumentStore`, :mod:`tpc_core.cache.reading`): it gives back what it holds for a
document (its spans and counts at segmentation, its embeddings at the embedding step) and stores what the scorer
computes for the others, keyed by the scorer's identity.
"""

from __future__ import annotations

from collections.abc import Sequence

from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.selection.budget import CountTokens, joined_count, resolve_budget
from tpc_core.engine.values import KnownDocument, Segmented, Span
from tpc_core.segmentation import SentenceSplitter, split_sentences

__all__ = ["segment"]


def segment(documents: tuple[str, ...], splitter: SentenceSplitter, counter: CountTokens,
            options: CompressionOptions, known: Sequence[KnownDocument | None] | None = None) -> Segmented:
    """Split documents into sentence spans, count sentences and documents, and resolve the budget.

    ``known`` gives, document by document, what a sentence cache already holds (``None`` for the others): a
    known document is not split again, and not counted again where its counts are the counter's. The CSE's token
    ids are kept only when every sentence was counted here.

    Raises:
        ValueError: A custom splitter returned spans that break the contract (unsorted, overlapping, padded
            with whitespace, out of range, or leaving text uncovered): checked here, where every splitter's
            spans enter the pipeline, so they can never reach selection or the output.
    """
    known = list(known) if known is not None else [None] * len(documents)
    spans = tuple(entry.spans if entry is not None else tuple(split_sentences(doc, splitter)) if doc.strip() else ()
                  for doc, entry in zip(documents, known))
    given = [entry is not None and entry.counts is not None for entry in known]
    sentences = [doc[s:e] for doc, doc_spans, own in zip(documents, spans, given) if not own for s, e in doc_spans]
    # The default counter hands back the token ids its counts came from: the CSE reuses them (one tokenizer pass).
    encoded = getattr(counter, "encode_many", lambda _: None)(sentences) if sentences else None
    flat_counts = encoded.counts if encoded is not None else counter.count_many(sentences) if sentences else []
    counts, position = [], 0
    for doc_spans, entry, own in zip(spans, known, given):
        counts.append(entry.counts if own else tuple(flat_counts[position: position + len(doc_spans)]))
        position += 0 if own else len(doc_spans)
    document_tokens = _document_tokens(counter, documents, spans, counts,
                                       [entry.tokens if own else None for entry, own in zip(known, given)])
    origin = joined_count(counter, list(documents), document_tokens, options.document_separator)
    budget = resolve_budget(origin, target_tokens=options.target_tokens, rate=options.rate)
    whole = encoded is not None and not any(given)
    return Segmented(documents, spans, tuple(counts), document_tokens, origin, budget,
                     tuple(encoded.ids) if whole else None, encoded.tokenizer if whole else None)


def _document_tokens(counter: CountTokens, documents: tuple[str, ...], spans: tuple[tuple[Span, ...], ...],
                     counts: list[tuple[int, ...]], given: Sequence[int | None]) -> tuple[int, ...]:
    """Each document's count: ``given`` (a cache entry's), else from its sentences' where the counter can tell it
    exactly (``TokenCounter.count_from_sentences``: the default counter), else one count of the rest."""
    from_sentences = getattr(counter, "count_from_sentences", lambda *_: None)
    known = [tokens if tokens is not None else from_sentences(doc, doc_spans, doc_counts)
             for doc, doc_spans, doc_counts, tokens in zip(documents, spans, counts, given)]
    missing = [doc for doc, count in zip(documents, known) if count is None]
    fresh = iter(counter.count_many(missing) if missing else [])
    return tuple(next(fresh) if count is None else count for count in known)
