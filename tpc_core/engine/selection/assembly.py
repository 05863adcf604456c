"""Who is kept, and the kept text: a scored prompt through its budget (:func:`compress_scored`).

:func:`compress_scored` is :func:`apply_budget` (who is kept: forced sentences, then by score or MMR within the
budget, then the filters) then :func:`assemble` (verbatim text, recounted: fits). A prompt that needs no scoring
(blank, or within its budget) takes the one other branch: its documents are kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.selection.budget import (
    CountTokens,
    Joined,
    allocate,
    document_budgets,
    filter_kept,
    fit_to_budget,
    top_k_within_budget,
)
from tpc_core.engine.selection.mmr import mmr_within_budget
from tpc_core.engine.values import Assembled, Scored, Segmented, Selected
from tpc_core.segmentation import heading_sections, is_turn_marker

__all__ = ["apply_budget", "assemble", "compress_scored", "section_context"]



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
    (:func:`tpc_core.engine.selection.budget.filter_kept`).

    With ``options.keep_request`` (the default), the sentences that write the user's request (``scored.task.request``)
    are kept first and always, even where they alone exceed the budget (the request wins; the result says by how
    much it is over), and with them every chat-template marker of a flattened chat, so that the request stays in
    its turn. Forced are the sentences the caller's options name and every chat-template marker
    (:func:`tpc_core.segmentation.is_turn_marker`: the built-in splitters make each marker a span of its own), so a
    flattened chat keeps every turn's markers, at their token cost, whatever else is dropped. Forced sentences are
    taken in order while they fit: a budget smaller than the markers keeps the first that fit.

    A bare heading (``## Impact``, ``**Action items**``, ``What went well.``:
    :func:`tpc_core.segmentation.heading_sections`) has no standing of its own: it fills only the room the chosen
    sentences left, for a chosen sentence of its section, and goes when its section keeps nothing
    (:func:`tpc_core.engine.selection.fitting.drop_to_fit`). A forced or pinned heading, and the label right above a
    request, keep their own standing.
    """
    prompt = scored.segmented
    scores = scored.scores
    if scores is None:
        raise ValueError("apply_budget takes a scored prompt; compress_scored keeps an unscored one whole.")
    documents = [d for d, _ in prompt.flat]
    counts = [prompt.counts[d][i] for d, i in prompt.flat]
    forced = tuple((options.keep_first_sentence and i == 0) or is_turn_marker(text) or any(
        pattern.search(text) for pattern in options.force_keep_patterns)
        for (_, i), text in zip(prompt.flat, prompt.sentences))

    pinned = frozenset(scored.task.request) if scored.task is not None and options.keep_request else frozenset()
    if pinned:  # a kept request keeps its chat's markers too: the compressed chat still parses into its roles
        pinned |= {k for k, text in enumerate(prompt.sentences) if is_turn_marker(text)}

    serves = section_context(prompt, forced, pinned)

    def pick(members: list[int], budget: int) -> list[int]:
        free = [k for k in members if k not in pinned]
        room = max(0, budget - sum(counts[k] for k in members if k in pinned))
        member_scores = [scores[k] for k in free]
        member_counts = [counts[k] for k in free]
        member_forced = [forced[k] for k in free]
        context = _context_of(serves, free)
        if scored.embeddings is None:
            picked = top_k_within_budget(member_scores, member_counts, room, force_keep=member_forced,
                                         context=context)
        else:
            picked = mmr_within_budget(member_scores, scored.embeddings[free], member_counts, room,
                                       redundancy=redundancy, force_keep=member_forced, context=context)
        position = {k: j for j, k in enumerate(members)}
        return sorted([position[free[j]] for j in picked] + [position[k] for k in members if k in pinned])

    budgets = document_budgets(prompt.budget, prompt.document_tokens, prompt.origin_tokens, options.budget_scope)
    groups = [0 if options.budget_scope == "global" else d for d, _ in prompt.flat]
    chosen = filter_kept(allocate(groups, budgets, pick), documents, scores, min_score=options.min_score,
                         top_n=options.top_n) | pinned
    oversized = sum(1 for k, count in enumerate(counts) if count > prompt.budget and k not in pinned)
    return Selected(scored, chosen, forced, oversized, pinned, serves)


def section_context(prompt: Segmented, forced: Sequence[bool], pinned: frozenset[int]) -> dict[int, frozenset[int]]:
    """Each bare heading of ``prompt`` (a flat index) and the sentences of its section it is context for.

    A forced or pinned heading, and one right above a pinned sentence (the label of the user's request), is no
    context: it keeps its own standing. Pinned sentences need no context (they are kept whatever the budget).
    """
    serves: dict[int, frozenset[int]] = {}
    offset = 0
    for document, spans in zip(prompt.documents, prompt.spans):
        for heading, section in heading_sections(document, spans).items():
            flat = offset + heading
            served = frozenset(offset + k for k in section) - pinned
            if served and not forced[flat] and flat not in pinned and flat + 1 not in pinned:
                serves[flat] = served
        offset += len(spans)
    return serves


def _context_of(serves: Mapping[int, frozenset[int]], members: Sequence[int]) -> dict[int, list[int]]:
    """For a picker over ``members`` (flat indices), each member's headings among them, as positions, in order."""
    position = {k: j for j, k in enumerate(members)}
    context: dict[int, list[int]] = {}
    for heading in sorted(serves):
        if heading in position:
            for sentence in serves[heading]:
                if sentence in position:
                    context.setdefault(position[sentence], []).append(position[heading])
    return context


def assemble(selected: Selected, counter: CountTokens, separator: str) -> Assembled:
    """Join the chosen sentences of a scored prompt verbatim and recount; drop the weakest until the whole prompt
    fits (the one budget loop: :func:`tpc_core.engine.selection.budget.fit_to_budget`)."""
    scored = selected.scored
    prompt = scored.segmented
    if scored.scores is None:
        raise ValueError("assemble takes the selection of a scored prompt; compress_scored keeps an unscored one "
                         "whole.")
    priority = list(zip(selected.forced, scored.scores))
    joined = fit_to_budget(prompt.documents, prompt.spans, selected.chosen, priority, prompt.budget, counter,
                           separator, prompt.counts, protected=selected.pinned, serves=selected.context)
    return Assembled(selected, joined)
