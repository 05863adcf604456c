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
        score: Relevance score (cosine similarity); ``None`` when no scoring was needed.
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
