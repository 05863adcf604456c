"""Maximal-marginal-relevance selection under a hard token budget (coverage tasks with ``redundancy``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from tpc_core.engine.selection.budget import with_context

__all__ = ["mmr_within_budget"]


def mmr_within_budget(scores: Sequence[float], embeddings: torch.Tensor, token_counts: Sequence[int], budget: int, *,
                      redundancy: float, force_keep: Sequence[bool] | None = None,
                      context: Mapping[int, Sequence[int]] | None = None) -> list[int]:
    """Maximal-marginal-relevance selection under a hard token budget.

    Forced sentences are taken first while they fit. Then, repeatedly, the sentence that still fits with
    the highest ``score - redundancy * max cosine to a kept sentence`` is taken, until none fits. With
    ``redundancy == 0`` this is the greedy knapsack by score of
    :func:`tpc_core.engine.selection.budget.top_k_within_budget`. A context sentence (``context``: each
    sentence's section headings, the outermost first; never a forced one) is never taken on its own: it fills only
    the room the sentences left (:func:`tpc_core.engine.selection.budget.with_context`).

    Returns:
        Indices of the kept sentences, ascending (original order).
    """
    count = len(scores)
    if len(token_counts) != count or len(embeddings) != count:
        raise ValueError(f"{count} scores, {len(token_counts)} token counts, {len(embeddings)} embeddings.")
    if force_keep is not None and len(force_keep) != count:
        raise ValueError(f"force_keep has {len(force_keep)} entries for {count} sentences.")
    base = torch.tensor([float(s) for s in scores], dtype=torch.float32)
    closest = torch.full((count,), 0.0)
    costs = torch.tensor(list(token_counts), dtype=torch.long)
    available = costs <= budget
    context = context or {}
    for heading in {heading for headings in context.values() for heading in headings}:
        available[heading] = False
    kept: list[int] = []
    used = 0

    def take(index: int) -> None:
        nonlocal used
        kept.append(index)
        used += token_counts[index]
        available[index] = False
        if redundancy and count:
            similarity = embeddings.float() @ embeddings[index].float()
            torch.maximum(closest, similarity, out=closest)

    for index in range(count):
        if force_keep is not None and force_keep[index] and used + token_counts[index] <= budget:
            take(index)
    while True:
        room = budget - used
        fits = available & (costs <= room)
        if not bool(fits.any()):
            break
        gain = base - redundancy * closest if kept else base.clone()
        gain[~fits] = float("-inf")
        take(int(torch.argmax(gain)))  # the first of equal gains: earlier sentences win ties
    return sorted(with_context(kept, token_counts, budget - used, context))
