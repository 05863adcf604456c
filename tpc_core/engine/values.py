"""The stage values, in one module: ``Segmented → Scored → Selected → Assembled``, the :class:`Task` a prompt
is compressed for, and :class:`Joined` (compressed documents and their counts, what ``Assembled`` holds; with the
:class:`CountTokens` protocol and :func:`joined_count` it is made with, re-exported by ``selection.budget``).

Every stage is a frozen dataclass holding the one before it, so a value can be inspected (or tested) at any point
and nothing is changed after it is made. This module is below every module that reads the values (reading, task,
scoring, selection, output), so none of them imports another just for a type. The route through the stages is
written once, in docs/ARCHITECTURE.md ("The route of one prompt").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any, Protocol

from tpc_core.segmentation import Span

__all__ = ["Assembled", "CountTokens", "DocumentSentences", "Joined", "KnownDocument", "Scored", "Segmented",
           "Selected", "Selection", "Span", "Task", "TaskSource", "ValueEnum", "joined_count"]


class ValueEnum(str, Enum):
    """An enum whose members are their strings: they compare equal to them and print as them."""

    def __str__(self) -> str:
        return str(self.value)



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
class DocumentSentences:
    """One document's sentences as a scorer's per-document step reads them (``Scorer.embed_documents``).

    Attributes:
        sentences: The sentences' texts, in order.
        token_ids: Their token ids where the counter gave them (``None`` otherwise).
        ids_tokenizer: The fingerprint of the tokenizer that made ``token_ids``.
    """

    sentences: tuple[str, ...]
    token_ids: tuple[Sequence[int], ...] | None = None
    ids_tokenizer: str | None = None


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
            (:func:`tpc_core.engine.fast_encoder.tokenizer_fingerprint`).
        cut: Each document's sentences longer than the splitter's ``max_sentence_chars``, which it cut at word
            boundaries into several spans: ``(first, last)`` indices of their pieces
            (:func:`tpc_core.segmentation.length.cut_sentences`).
    """

    documents: tuple[str, ...]
    spans: tuple[tuple[Span, ...], ...]
    counts: tuple[tuple[int, ...], ...]
    document_tokens: tuple[int, ...]
    origin_tokens: int
    budget: int
    sentence_ids: tuple[Sequence[int], ...] | None = None
    ids_tokenizer: str | None = None
    cut: tuple[tuple[tuple[int, int], ...], ...] = ()

    @cached_property
    def sentences(self) -> list[str]:
        """Every sentence's text, document by document."""
        return [doc[s:e] for doc, spans in zip(self.documents, self.spans) for s, e in spans]

    @cached_property
    def flat(self) -> list[tuple[int, int]]:
        """``(document, sentence)`` of every sentence, in order: the flat index used from here on."""
        return [(d, i) for d, spans in enumerate(self.spans) for i in range(len(spans))]

    @cached_property
    def per_document(self) -> tuple[DocumentSentences, ...]:
        """Each document's sentences (and their token ids, where known): what the scorer embeds, document by
        document."""
        views = []
        position = 0
        sentences = self.sentences
        for spans in self.spans:
            end = position + len(spans)
            ids = tuple(self.sentence_ids[position:end]) if self.sentence_ids is not None else None
            views.append(DocumentSentences(tuple(sentences[position:end]), ids, self.ids_tokenizer))
            position = end
        return tuple(views)

    @property
    def needs_scoring(self) -> bool:
        """Whether anything must be dropped: the prompt has sentences and is over budget."""
        return any(self.spans) and self.budget < self.origin_tokens


class TaskSource(ValueEnum):
    """Where a task description came from. Members compare equal to their strings (``"extracted"``), so
    results, JSON and corpus columns read as before.

    Attributes:
        QUESTION: The caller's question (or an adapter's fixed ``task_description``).
        EXTRACTED: The prompt's own request sentences, found by the request head; nothing generated.
        MATCHED: The prompt sentences that the CTD's description restates, used as written.
        GENERATED: The CTD's description, grounded in the prompt.
        FALLBACK: The checkpoint's neutral description: the CTD's text was not grounded in the prompt, or the
            CTD was skipped for a prompt with no written request (``describe_bare=False``).
        COVERAGE: No description at all (a request head but no CTD): coverage alone selects.
    """

    QUESTION = "question"
    EXTRACTED = "extracted"
    MATCHED = "matched"
    GENERATED = "generated"
    FALLBACK = "fallback"
    COVERAGE = "coverage"


class Selection(ValueEnum):
    """How sentences are chosen for a task.

    Attributes:
        RELEVANCE: By their score against the description (a question, a written request).
        COVERAGE: By the checkpoint's coverage settings (relevance, centrality, section leads, redundancy): the
            prompt asks for no specific fact (a bare document, a summary request).
    """

    RELEVANCE = "relevance"
    COVERAGE = "coverage"


@dataclass(frozen=True)
class Task:
    """What one prompt is compressed for.

    Attributes:
        description: The text sentences are scored against (``None`` for :attr:`TaskSource.COVERAGE`).
        source: Where it came from.
        selection: How sentences are chosen.
        request: Flat indices (ascending) of the sentences that write the user's request in the prompt: compression
            keeps every one of them verbatim, whatever its score and even over the budget (empty for a question
            given by the caller, and for a prompt that asks nothing).
        missed: ``(document, start, end)``: the character offsets of a sentence outside the material that asks the
            reader, where the prompt's task fell back or only points at a request it never writes (the caller
            is warned, :mod:`tpc_core.engine.task.missed`); ``None`` otherwise.
    """

    description: str | None
    source: TaskSource
    selection: Selection = Selection.RELEVANCE
    request: tuple[int, ...] = ()
    missed: tuple[int, int, int] | None = None

    @classmethod
    def from_question(cls, question: str) -> Task:
        """The caller's question: scored by relevance."""
        return cls(question, TaskSource.QUESTION, Selection.RELEVANCE)


@dataclass(frozen=True)
class Scored:
    """Sentence scores against the task (``scores is None``: nothing needed scoring).

    Attributes:
        segmented: The prompt.
        scores: One score per sentence, flat order.
        task: What the scores were computed against (``None`` when nothing was scored).
        embeddings: Sentence embeddings (flat order) when selection must avoid redundancy, else ``None``.
    """

    segmented: Segmented
    scores: tuple[float, ...] | None = None
    task: Task | None = None
    embeddings: Any = None


@dataclass(frozen=True)
class Selected:
    """The chosen sentences before the final recount.

    Attributes:
        scored: The scored prompt.
        chosen: Flat indices of the chosen sentences.
        forced: Per sentence, whether it was taken first: a chat-template marker, or forced by the caller's
            options.
        oversized: Sentences larger than the whole budget (skipped: a sentence is not shortened to fit).
        pinned: The request's sentences (``scored.task.request``): kept whatever the budget.
        context: Each bare heading (a flat index) and the sentences of its section it is context for: kept only
            with one of them (:func:`tpc_core.engine.selection.assembly.section_context`).
    """

    scored: Scored
    chosen: frozenset[int]
    forced: tuple[bool, ...]
    oversized: int
    pinned: frozenset[int] = frozenset()
    context: Mapping[int, frozenset[int]] = field(default_factory=dict, hash=False)


class CountTokens(Protocol):
    """What selection needs of a token counter (``tpc_core.engine.tokens.TokenCounter`` is one)."""

    def __call__(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...


def joined_count(counter: CountTokens, texts: Sequence[str], counts: Sequence[int], separator: str) -> int:
    """Tokens of ``separator.join(texts)``: the count of the one text, else the count of the join (from the
    texts' counts where the counter can tell it exactly, ``TokenCounter.count_from_sentences``)."""
    if len(texts) <= 1:
        return sum(counts)
    joined = separator.join(texts)
    spans = []
    position = 0
    for text in texts:
        spans.append((position, position + len(text)))
        position += len(text) + len(separator)
    known = getattr(counter, "count_from_sentences", lambda *_: None)(joined, spans, counts)
    return counter(joined) if known is None else known


@dataclass(frozen=True)
class Joined:
    """Compressed documents and their counts under the caller's counter.

    Attributes:
        kept: Kept sentence indices of each document, ascending.
        texts: Each document's compressed text ("" when it kept nothing).
        tokens: Each compressed text's count (0 for "").
        total: Count of the compressed prompt: the non-empty texts joined by the separator.
    """

    kept: tuple[tuple[int, ...], ...]
    texts: tuple[str, ...]
    tokens: tuple[int, ...]
    total: int

    def prompt(self, separator: str) -> str:
        """The compressed prompt: the non-empty documents joined by ``separator``."""
        return separator.join(text for text in self.texts if text)

    @classmethod
    def count(cls, kept: Sequence[Sequence[int]], texts: Sequence[str], counter: CountTokens, separator: str,
              tokens: Sequence[int] | None = None) -> Joined:
        """Count compressed documents, separators included.

        Args:
            kept: Kept sentence indices of each document.
            texts: Each document's compressed text ("" when it kept nothing).
            counter: The caller's counter.
            separator: Joins the non-empty texts.
            tokens: Each text's count where it is already known (a document kept whole); ``None``: counted here.
        """
        nonempty = [text for text in texts if text]
        if tokens is None:
            counted = iter(counter.count_many(nonempty))
            tokens = [next(counted) if text else 0 for text in texts]
        own = tuple(count if text else 0 for count, text in zip(tokens, texts))
        total = joined_count(counter, nonempty, [n for n, text in zip(own, texts) if text], separator)
        return cls(tuple(tuple(k) for k in kept), tuple(texts), own, total)


@dataclass(frozen=True)
class Assembled:
    """The compressed documents, counted with the caller's counter (total within budget)."""

    selected: Selected
    joined: Joined
