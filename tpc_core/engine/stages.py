"""Compression as a pipeline of immutable values: ``Segmented → Scored → Selected → Assembled → result``.

One prompt goes through these functions (:meth:`tpc_core.TPCCompressor.compress_batch` runs them on batches)::

    segmented = segment(documents, splitter, counter, options)          # sentences, counts, budget
    embeddings = scorer.embed([segmented])                              # tpc_core.engine.scoring (the CSE)
    task = finder.find([segmented], embeddings, [question], ...)        # tpc_core.engine.task (question or cascade)
    scored = score_prompts(scorer, [segmented], embeddings, [task], coverage)[0]    # tpc_core.engine.scoring
    selected = select(scored, options, redundancy)                      # who is kept: budget, then filters
    assembled = assemble(selected, counter, options.document_separator) # verbatim text, recounted: fits
    result = to_result(assembled, options.document_separator)           # CompressionResult

A prompt that needs no scoring (blank, or within its budget) skips the model calls: ``Scored(segmented)``.
Every stage is a frozen dataclass holding the one before it, so a value can be inspected (or tested) at
any point and nothing is changed after it is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from tpc_core.engine.coverage import select_diverse
from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.result import CompressionResult, SentenceRecord
from tpc_core.segmentation import SentenceSplitter, split_sentences
from tpc_core.engine.selection import (
    Counter,
    Joined,
    allocate,
    document_budgets,
    filter_kept,
    fit_to_budget,
    joined_count,
    resolve_budget,
    select_sentences,
)
from tpc_core.engine.task import Task

__all__ = ["Assembled", "Scored", "Segmented", "Selected", "assemble", "segment", "select", "to_result"]

Span = tuple[int, int]


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
    """

    documents: tuple[str, ...]
    spans: tuple[tuple[Span, ...], ...]
    counts: tuple[tuple[int, ...], ...]
    document_tokens: tuple[int, ...]
    origin_tokens: int
    budget: int

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
        forced: Per sentence, whether the caller's options forced it in first.
        oversized: Sentences larger than the whole budget (skipped: sentences are never truncated).
    """

    scored: Scored
    chosen: frozenset[int]
    forced: tuple[bool, ...]
    oversized: int


@dataclass(frozen=True)
class Assembled:
    """The compressed documents, counted with the caller's counter (total within budget)."""

    selected: Selected
    joined: Joined


def segment(documents: tuple[str, ...], splitter: SentenceSplitter, counter: Counter,
            options: CompressionOptions) -> Segmented:
    """Split documents into sentence spans, count sentences and documents, and resolve the budget.

    Raises:
        ValueError: A custom splitter returned spans that break the contract (unsorted, overlapping, padded
            with whitespace, out of range, or leaving text uncovered): checked here, where every splitter's
            spans enter the pipeline, so they can never reach selection or the output.
    """
    spans = tuple(tuple(split_sentences(doc, splitter)) if doc.strip() else () for doc in documents)
    sentences = [doc[s:e] for doc, doc_spans in zip(documents, spans) for s, e in doc_spans]
    flat_counts = counter.count_many(sentences) if sentences else []
    counts, position = [], 0
    for doc_spans in spans:
        counts.append(tuple(flat_counts[position: position + len(doc_spans)]))
        position += len(doc_spans)
    document_tokens = tuple(counter.count_many(list(documents))) if documents else ()
    origin = joined_count(counter, list(documents), document_tokens, options.document_separator)
    budget = resolve_budget(origin, target_tokens=options.target_tokens, rate=options.rate)
    return Segmented(documents, spans, tuple(counts), document_tokens, origin, budget)


def select(scored: Scored, options: CompressionOptions, redundancy: float = 0.0) -> Selected:
    """Choose sentences within the budget: forced ones first, then by score (MMR when embeddings are given);
    then the filters (``min_score``, ``top_n``) only remove (:func:`tpc_core.engine.selection.filter_kept`)."""
    prompt = scored.segmented
    documents = [d for d, _ in prompt.flat]
    if scored.scores is None:
        chosen = filter_kept(frozenset(range(len(prompt.flat))), documents, None, min_score=options.min_score,
                             top_n=options.top_n)
        return Selected(scored, chosen, tuple(False for _ in prompt.flat), 0)
    counts = [prompt.counts[d][i] for d, i in prompt.flat]
    forced = tuple((options.keep_first_sentence and i == 0) or any(
        pattern.search(text) for pattern in options.force_keep_patterns)
        for (_, i), text in zip(prompt.flat, prompt.sentences))
    scores = scored.scores

    def pick(members: list[int], budget: int) -> list[int]:
        member_scores, member_counts = [scores[k] for k in members], [counts[k] for k in members]
        member_forced = [forced[k] for k in members]
        if scored.embeddings is None:
            return select_sentences(member_scores, member_counts, budget, force_keep=member_forced)
        return select_diverse(member_scores, scored.embeddings[members], member_counts, budget,
                              redundancy=redundancy, force_keep=member_forced)

    budgets = document_budgets(prompt.budget, prompt.document_tokens, prompt.origin_tokens, options.budget_scope)
    groups = [0 if options.budget_scope == "global" else d for d, _ in prompt.flat]
    chosen = filter_kept(allocate(groups, budgets, pick), documents, scores, min_score=options.min_score,
                         top_n=options.top_n)
    return Selected(scored, chosen, forced, sum(1 for count in counts if count > prompt.budget))


def assemble(selected: Selected, counter: Counter, separator: str) -> Assembled:
    """Join the chosen sentences verbatim and recount; drop the weakest until the whole prompt fits (the one
    budget loop: :func:`tpc_core.engine.selection.fit_to_budget`)."""
    prompt, scored = selected.scored.segmented, selected.scored
    if scored.scores is None:  # empty input, or the budget covers everything: the documents as they are
        chosen_documents = {prompt.flat[k][0] for k in selected.chosen}
        texts = tuple(doc if spans and d in chosen_documents else ""
                      for d, (doc, spans) in enumerate(zip(prompt.documents, prompt.spans)))
        tokens = tuple(count if text else 0 for count, text in zip(prompt.document_tokens, texts))
        total = joined_count(counter, [t for t in texts if t], [n for n, t in zip(tokens, texts) if t], separator)
        kept = tuple(tuple(range(len(spans))) if texts[d] else () for d, spans in enumerate(prompt.spans))
        return Assembled(selected, Joined(kept, texts, tokens, total))
    priority = [(forced, score) for forced, score in zip(selected.forced, scored.scores)]
    joined = fit_to_budget(prompt.documents, prompt.spans, selected.chosen, priority, prompt.budget, counter,
                           separator)
    return Assembled(selected, joined)


def to_result(assembled: Assembled, separator: str) -> CompressionResult:
    """The public value: every sentence with its score and fate, the compressed prompt and its counts."""
    selected, joined = assembled.selected, assembled.joined
    scored, prompt = selected.scored, selected.scored.segmented
    records, kept = [], [set(doc_kept) for doc_kept in joined.kept]
    for k, (d, i) in enumerate(prompt.flat):
        start, end = prompt.spans[d][i]
        records.append(SentenceRecord(d, i, start, end, prompt.documents[d][start:end],
                                      scored.scores[k] if scored.scores is not None else None,
                                      prompt.counts[d][i], i in kept[d]))
    return CompressionResult(
        compressed_prompt=joined.prompt(separator), compressed_documents=list(joined.texts),
        origin_tokens=prompt.origin_tokens if any(prompt.spans) else 0, compressed_tokens=joined.total,
        budget=prompt.budget, task_description=scored.task.description if scored.task is not None else None,
        task_source=scored.task.source if scored.task is not None else None, sentences=records,
        document_origin_tokens=list(prompt.document_tokens), document_compressed_tokens=list(joined.tokens),
        oversized_sentences=selected.oversized, scored=scored.scores is not None,
        documents=list(prompt.documents))
