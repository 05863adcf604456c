"""Fusing per-sentence score vectors of one prompt: z-score sums and reciprocal-rank fusion (RRF).

Selection keeps the best-scored sentences under a budget, so only the order of the fused scores matters;
both rules are per prompt and scale-free.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["RRF_K", "fuse", "ranks", "rrf", "zscore", "zscore_sum"]

RRF_K = 60.0


def zscore(scores: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``(x - mean) / std`` over one prompt's sentences; a constant vector (std < eps) becomes all zeros."""
    scores = scores.double()
    if scores.numel() == 0:
        return scores
    std = scores.std(unbiased=False)
    if std < eps:
        return torch.zeros_like(scores)
    return (scores - scores.mean()) / std


def ranks(scores: torch.Tensor) -> torch.Tensor:
    """1-based rank of each entry, best (highest) first; ties broken by position (earlier first)."""
    order = sorted(range(scores.numel()), key=lambda i: (-float(scores[i]), i))
    out = torch.empty(scores.numel(), dtype=torch.float64)
    for rank, index in enumerate(order, 1):
        out[index] = float(rank)
    return out


def zscore_sum(components: Sequence[torch.Tensor], weights: Sequence[float]) -> torch.Tensor:
    """``sum_i w_i * zscore(c_i)``."""
    return sum((w * zscore(c) for c, w in zip(components, weights, strict=True)),
               torch.zeros(components[0].numel(), dtype=torch.float64))


def rrf(components: Sequence[torch.Tensor], weights: Sequence[float], k: float = RRF_K) -> torch.Tensor:
    """Weighted reciprocal-rank fusion: ``sum_i w_i / (k + rank_i)``."""
    return sum((w / (k + ranks(c)) for c, w in zip(components, weights, strict=True)),
               torch.zeros(components[0].numel(), dtype=torch.float64))


def fuse(components: Sequence[torch.Tensor], weights: Sequence[float], method: str = "z") -> torch.Tensor:
    """Fuse one prompt's component score vectors (each ``(n_sentences,)``) with ``method`` ``"z"`` or ``"rrf"``."""
    if len(components) != len(weights) or not components:
        raise ValueError("need one weight per component and at least one component")
    if method == "z":
        return zscore_sum(components, weights)
    if method == "rrf":
        return rrf(components, weights)
    raise ValueError(f"unknown fusion method {method!r}; use 'z' or 'rrf'")
