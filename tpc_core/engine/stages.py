"""Compression as a pipeline of immutable values: ``Segmented → Scored → Selected → Assembled → result``.

One prompt goes through these functions (:meth:`tpc_core.TPCCompressor.compress_batch` runs them on batches)::

    segmented = segment(documents, splitter, counter, options)          # sentences, counts, budget
    embeddings = scorer.embed([segmented])                              # tpc_core.engine.scoring (the CSE)
    task = finder.find([segmented], embeddings, [question], ...)        # tpc_core.engine.task (question or cascade)
    scored = score_prompts(scorer, [segmented], embeddings, [task], coverage)[0]    # tpc_core.engine.scoring
    assembled = compress_scored(scored, options, counter, redundancy)  # who is kept; verbatim text, recounted
    result = to_result(assembled, options.document_separator)           # CompressionResult

:func:`compress_scored` is :func:`apply_budget` (who is kept: budget, then filters) then :func:`assemble`
(verbatim text, recounted: fits). A prompt that needs no scoring (blank, or within its budget) skips the model
calls, ``Scored(segmented)``, and takes the one other branch there: its documents are kept whole.
Every stage is a frozen dataclass holding the one before it, so a value can be inspected (or tested) at
any point and nothing is changed after it is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tpc_core.engine.coverage import mmr_within_budget
from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.result import CompressionResult, SentenceRecord
from tpc_core.engine.segmented import KnownDocument, Segmented, Span
from tpc_core.engine.selection import (
    CountTokens,
    Joined,
    allocate,
    document_budgets,
    filter_kept,
    fit_to_budget,
    joined_count,
    resolve_budget,
    top_k_within_budget,
)
from tpc_core.engine.task import Task
from tpc_core.segmentation import SentenceSplitter, is_turn_marker, split_sentences

__all__ = ["Assembled", "Scored", "Segmented", "Selected", "Span", "apply_budget", "assemble", "compress_scored",
           "segment", "to_result"]


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


def compress_scored(scored: Scored, options: CompressionOptions, counter: CountTokens,
                    redundancy: float = 0.0) -> Assembled:
    """What a prompt keeps, assembled: :func:`apply_budget` then :func:`assemble` for a scored prompt.

    A prompt nothing scored (blank, or within its budget) is the one other branch: its documents are kept as they
    are, with their own counts; only ``top_n`` applies (the first ``top_n`` documents that have text keep it).
    """
    if scored.scores is None:
        return _keep_whole(scored, options, counter)
    return assemble(apply_budget(scored, options, redundancy), counter, options.document_separator)


def _keep_whole(scored: Scored, options: CompressionOptions, counter: CountTokens) -> Assembled:
    """The documents of an unscored prompt as they are (``top_n`` may drop whole ones), counted."""
    prompt = scored.segmented
    documents = [d for d, _ in prompt.flat]
    chosen = filter_kept(frozenset(range(len(prompt.flat))), documents, None, top_n=options.top_n)
    whole = {documents[k] for k in chosen}
    kept = [range(len(spans)) if d in whole else () for d, spans in enumerate(prompt.spans)]
    texts = [doc if d in whole else "" for d, doc in enumerate(prompt.documents)]
    joined = Joined.count(kept, texts, counter, options.document_separator, tokens=prompt.document_tokens)
    return Assembled(Selected(scored, chosen, (False,) * len(prompt.flat), 0), joined)


def apply_budget(scored: Scored, options: CompressionOptions, redundancy: float = 0.0) -> Selected:
    """Choose the sentences of a scored prompt within its budget: forced ones first, then by score (MMR when
    embeddings are given); then the filters (``min_score``, ``top_n``) only remove
    (:func:`tpc_core.engine.selection.filter_kept`).

    Forced are the sentences the caller's options name and every chat-template marker
    (:func:`tpc_core.segmentation.is_turn_marker`: the built-in splitters make each marker a span of its own), so a
    flattened chat keeps every turn's markers, at their token cost, whatever else is dropped. Forced sentences are
    taken in order while they fit: a budget smaller than the markers keeps the first that fit.
    """
    prompt, scores = scored.segmented, scored.scores
    if scores is None:
        raise ValueError("apply_budget takes a scored prompt; compress_scored keeps an unscored one whole.")
    documents = [d for d, _ in prompt.flat]
    counts = [prompt.counts[d][i] for d, i in prompt.flat]
    forced = tuple((options.keep_first_sentence and i == 0) or is_turn_marker(text) or any(
        pattern.search(text) for pattern in options.force_keep_patterns)
        for (_, i), text in zip(prompt.flat, prompt.sentences))

    def pick(members: list[int], budget: int) -> list[int]:
        member_scores, member_counts = [scores[k] for k in members], [counts[k] for k in members]
        member_forced = [forced[k] for k in members]
        if scored.embeddings is None:
            return top_k_within_budget(member_scores, member_counts, budget, force_keep=member_forced)
        return mmr_within_budget(member_scores, scored.embeddings[members], member_counts, budget,
                                 redundancy=redundancy, force_keep=member_forced)

    budgets = document_budgets(prompt.budget, prompt.document_tokens, prompt.origin_tokens, options.budget_scope)
    groups = [0 if options.budget_scope == "global" else d for d, _ in prompt.flat]
    chosen = filter_kept(allocate(groups, budgets, pick), documents, scores, min_score=options.min_score,
                         top_n=options.top_n)
    return Selected(scored, chosen, forced, sum(1 for count in counts if count > prompt.budget))


def assemble(selected: Selected, counter: CountTokens, separator: str) -> Assembled:
    """Join the chosen sentences of a scored prompt verbatim and recount; drop the weakest until the whole prompt
    fits (the one budget loop: :func:`tpc_core.engine.selection.fit_to_budget`)."""
    scored = selected.scored
    prompt, priority = scored.segmented, list(zip(selected.forced, scored.scores))
    joined = fit_to_budget(prompt.documents, prompt.spans, selected.chosen, priority, prompt.budget, counter,
                           separator, prompt.counts)
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
