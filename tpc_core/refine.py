"""Knobs applied after the budget: a relevance floor (``min_score``) and a document cap (``top_n``).

The engine first selects sentences under the token budget (:mod:`tpc_core.selection`); these pure functions
then only *remove* kept sentences or whole documents, so the budget stays a hard ceiling. Documents are
re-assembled the way the engine assembles them (kept sentences verbatim, in order, separated by the
whitespace that followed each one in the original) and re-counted with the same token counter; in the rare
case a shorter join counts more tokens, the lowest-scored kept sentences are dropped until the ceiling holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tpc_core.result import CompressionResult, SentenceRecord
from tpc_core.selection import join_kept, joined_count
from tpc_core.tokens import TokenCounter

__all__ = ["RefinedDocument", "assemble", "refine_result", "validate_refine_args"]


@dataclass(frozen=True)
class RefinedDocument:
    """One document after the post-budget knobs.

    Attributes:
        text: The compressed text ("" when nothing is left).
        kept: The kept sentences, in document order.
        tokens: Tokens of ``text`` under the result's counter (0 for "").
        score: The document's relevance: its best sentence's score (``None`` when nothing was scored).
    """

    text: str
    kept: tuple[SentenceRecord, ...]
    tokens: int
    score: float | None


def validate_refine_args(min_score: float | None, top_n: int | None) -> None:
    """Raise a ``ValueError``/``TypeError`` naming the problem with ``min_score`` or ``top_n``."""
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, (int, float))):
        raise TypeError(f"min_score must be a number (a cosine score, usually in [-1, 1]) or None, got {min_score!r}.")
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
        raise ValueError(f"top_n must be a positive int (documents kept) or None, got {top_n!r}.")


def refine_result(result: CompressionResult, documents: Sequence[str], counter: TokenCounter, *,
                  min_score: float | None = None, top_n: int | None = None,
                  document_separator: str = "\n\n") -> list[RefinedDocument]:
    """Apply ``min_score`` then ``top_n`` to an engine result; one :class:`RefinedDocument` per input document.

    Args:
        result: What :meth:`tpc_core.TPCCompressor.compress` returned for ``documents``.
        documents: The documents that were compressed, in the same order.
        counter: The token counter the result was budgeted with.
        min_score: Kept sentences scoring below this are removed. Ignored when nothing was scored (the
            budget covered every document, so the engine ran no model).
        top_n: At most this many documents keep text: those with the highest document score; when nothing
            was scored, the first ``top_n`` in input order (a retriever's ranking).
        document_separator: How the documents are joined when the whole prompt is counted against the budget.

    Returns:
        Documents in input order; removed ones have ``text == ""``. The joined texts never count more than
        ``result.budget`` tokens.
    """
    validate_refine_args(min_score, top_n)
    if len(documents) != len(result.compressed_documents):
        raise ValueError(f"Got {len(documents)} documents for a result of {len(result.compressed_documents)}.")
    by_document: list[list[SentenceRecord]] = [[] for _ in documents]
    for record in result.sentences:
        by_document[record.doc_index].append(record)
    scored = any(record.score is not None for record in result.sentences)
    kept = [[record for record in records if record.kept] for records in by_document]
    if min_score is not None and scored:
        kept = [[record for record in records if record.score is not None and record.score >= min_score]
                for records in kept]
    if top_n is not None:
        kept = _top_documents(kept, [result.document_score(d) for d in range(len(documents))], top_n)

    texts = list(result.compressed_documents)
    tokens = list(result.document_compressed_tokens) or [0] * len(documents)
    original = [[record for record in records if record.kept] for records in by_document]
    changed = [d for d in range(len(documents)) if kept[d] != original[d]]
    if not changed:
        return _documents(texts, kept, tokens, result)
    ceiling = max(result.budget, 0)
    while True:
        for d in changed:
            texts[d] = assemble(documents[d], by_document[d], kept[d])
        counts = iter(counter.count_many([texts[d] for d in changed if texts[d]]))
        for d in changed:
            tokens[d] = next(counts) if texts[d] else 0
        present = [d for d in range(len(texts)) if texts[d]]
        if joined_count(counter, [texts[d] for d in present], [tokens[d] for d in present],
                        document_separator) <= ceiling:
            return _documents(texts, kept, tokens, result)
        # A join counted more than the sentences it replaced: give up the weakest kept sentence.
        d, record = min(((d, r) for d in range(len(kept)) for r in kept[d]),
                        key=lambda item: (item[1].score if item[1].score is not None else float("-inf"),
                                          -item[0], -item[1].index))
        kept[d] = [r for r in kept[d] if r is not record]
        if d not in changed:
            changed.append(d)


def assemble(document: str, records: Sequence[SentenceRecord], kept: Sequence[SentenceRecord]) -> str:
    """The kept sentences of ``document`` verbatim, as the engine joins them (``selection.join_kept``)."""
    spans = {record.index: (record.start, record.end) for record in records}
    ordered = [spans[index] for index in range(len(spans))] if set(spans) == set(range(len(spans))) else None
    if ordered is None:  # records that are not a whole document's sentences: index them by position instead
        position = {record.index: k for k, record in enumerate(records)}
        return join_kept(document, [(r.start, r.end) for r in records], [position[r.index] for r in kept])
    return join_kept(document, ordered, [record.index for record in kept])


def _top_documents(kept: list[list[SentenceRecord]], scores: list[float | None],
                   top_n: int) -> list[list[SentenceRecord]]:
    candidates = [d for d, records in enumerate(kept) if records]
    if all(scores[d] is None for d in candidates):
        chosen = set(candidates[:top_n])
    else:
        ranked = sorted(candidates, key=lambda d: (-(scores[d] if scores[d] is not None else float("-inf")), d))
        chosen = set(ranked[:top_n])
    return [records if d in chosen else [] for d, records in enumerate(kept)]


def _documents(texts: list[str], kept: list[list[SentenceRecord]], tokens: list[int],
               result: CompressionResult) -> list[RefinedDocument]:
    return [RefinedDocument(text=texts[d] if kept[d] else "", kept=tuple(kept[d]),
                            tokens=tokens[d] if kept[d] else 0, score=result.document_score(d))
            for d in range(len(texts))]
