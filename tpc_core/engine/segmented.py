"""The prompt as the engine sees it: split into sentences and counted (made by ``stages.segment``).

A value of its own, below every module that reads it (``stages``, ``task``, ``scoring``, ``salience``), so none of
them imports another just for its type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

__all__ = ["KnownDocument", "Segmented", "Span"]

Span = tuple[int, int]


@dataclass(frozen=True)
class KnownDocument:
    """A document already split and counted (a sentence-cache entry, :mod:`tpc_core.cache`): segmenting it again
    is skipped.

    Attributes:
        spans: Its sentence spans, as the splitter gives them.
        counts: Each sentence's count under the caller's counter, or ``None`` where that counter must count them.
        tokens: The document's count under the caller's counter, or ``None`` (then counted).
    """

    spans: tuple[Span, ...]
    counts: tuple[int, ...] | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class Segmented:
    """A prompt split into sentences and counted with the caller's counter.

    Attributes:
        documents: The input documents.
        spans: Each document's sentence spans (``document[start:end]`` is the sentence, verbatim).
        counts: Each sentence's token count.
        document_tokens: Each document's token count.
        origin_tokens: Tokens of the prompt as sent (documents joined by the separator).
        budget: The prompt's budget in tokens.
        sentence_ids: Every sentence's token ids, flat order, where the counter gave them with its counts
            (``TokenCounter.encode_many``); the CSE reads them instead of tokenizing the sentences again when
            they come from its own tokenizer. ``None`` for other counters.
        ids_tokenizer: The fingerprint of the tokenizer that made ``sentence_ids``
            (:func:`tpc_core.engine.tokens.tokenizer_fingerprint`).
    """

    documents: tuple[str, ...]
    spans: tuple[tuple[Span, ...], ...]
    counts: tuple[tuple[int, ...], ...]
    document_tokens: tuple[int, ...]
    origin_tokens: int
    budget: int
    sentence_ids: tuple[Sequence[int], ...] | None = None
    ids_tokenizer: str | None = None

    @cached_property
    def sentences(self) -> list[str]:
        """Every sentence's text, document by document."""
        return [doc[s:e] for doc, spans in zip(self.documents, self.spans) for s, e in spans]

    @cached_property
    def flat(self) -> list[tuple[int, int]]:
        """``(document, sentence)`` of every sentence, in order: the flat index used from here on."""
        return [(d, i) for d, spans in enumerate(self.spans) for i in range(len(spans))]

    @property
    def needs_scoring(self) -> bool:
        """Whether anything must be dropped: the prompt has sentences and is over budget."""
        return any(self.spans) and self.budget < self.origin_tokens
