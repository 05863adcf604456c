"""One sentence of a result and what happened to it: below both :mod:`.result` and :mod:`.render`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SentenceRecord"]


@dataclass(frozen=True)
class SentenceRecord:
    """One sentence of the input and what happened to it.

    Attributes:
        doc_index: Index of the document the sentence belongs to (0 for a single string).
        index: Index of the sentence within its document.
        start: Character offset of the sentence in its document (inclusive).
        end: Character offset of the sentence in its document (exclusive).
        text: The sentence, verbatim: ``document[start:end]``.
        score: Relevance score; ``None`` when no scoring was needed. Against a question or a task description, the
            cosine of the sentence's and the task's embeddings (``pooled_cosine``), plus, for ``cosine_bm25``
            (tpc-mini), ``lexical_weight * std(cosines) * z(BM25)`` over the prompt's sentences: zero on average,
            unbounded, so a score can exceed 1. Selected by coverage, a salience or coverage score (not a cosine).
        tokens: Token count of the sentence under the result's token counter.
        kept: Whether the sentence is in the compressed prompt.
    """

    doc_index: int
    index: int
    start: int
    end: int
    text: str
    score: float | None
    tokens: int
    kept: bool
