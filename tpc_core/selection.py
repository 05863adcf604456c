"""Budgeting and TopK sentence selection: pure functions, no model.

Selection follows Eq. 1 of the paper: keep the highest-scoring sentences, then restore their original
order. The budget is a hard limit: a sentence that does not fit is skipped and smaller, lower-scoring
sentences may still fill the remaining room (greedy knapsack by score).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["DEFAULT_RATE", "resolve_budget", "select_sentences"]

DEFAULT_RATE = 0.2


def resolve_budget(
    origin_tokens: int,
    *,
    target_tokens: int | None = None,
    rate: float | None = None,
    default_rate: float = DEFAULT_RATE,
) -> int:
    """Turn the user's budget request into a number of tokens.

    Args:
        origin_tokens: Token count of the uncompressed input.
        target_tokens: Absolute budget in tokens (mutually exclusive with ``rate``).
        rate: Fraction of ``origin_tokens`` to keep, in (0, 1].
        default_rate: Rate used when neither is given.

    Returns:
        The budget in tokens (``floor(rate * origin_tokens)`` for a rate).

    Raises:
        ValueError: If both are given, ``target_tokens <= 0`` or ``rate`` is outside (0, 1].
        TypeError: If a value has the wrong type.
    """
    validate_budget_args(target_tokens, rate)
    if target_tokens is not None:
        return int(target_tokens)
    chosen_rate = default_rate if rate is None else float(rate)
    return int(math.floor(chosen_rate * origin_tokens))


def validate_budget_args(target_tokens: int | None, rate: float | None) -> None:
    """Raise a clear error for an impossible budget request (shared by every entry point)."""
    if target_tokens is not None and rate is not None:
        raise ValueError("Give either target_tokens or rate, not both.")
    if target_tokens is not None:
        if isinstance(target_tokens, bool) or not isinstance(target_tokens, int):
            raise TypeError(f"target_tokens must be an int, got {type(target_tokens).__name__}.")
        if target_tokens <= 0:
            raise ValueError(f"target_tokens must be a positive number of tokens, got {target_tokens}.")
    if rate is not None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise TypeError(f"rate must be a float in (0, 1], got {type(rate).__name__}.")
        if not (0.0 < float(rate) <= 1.0) or math.isnan(float(rate)):
            raise ValueError(f"rate must be in (0, 1] (the fraction of tokens to keep), got {rate}.")


def select_sentences(
    scores: Sequence[float],
    token_counts: Sequence[int],
    budget: int,
    *,
    force_keep: Sequence[bool] | None = None,
    separator_tokens: int = 0,
) -> list[int]:
    """Pick the highest-scoring sentences whose total size stays within ``budget``.

    Forced sentences are taken first (in original order) as long as they fit; then the rest by descending
    score (ties broken by position). A sentence larger than the remaining room is skipped, never
    truncated.

    Args:
        scores: One relevance score per sentence.
        token_counts: One token count per sentence.
        budget: Maximum total tokens.
        force_keep: Optional mask of sentences to take first (e.g. matched by a regex).
        separator_tokens: Tokens charged for each kept sentence after the first (joiners).

    Returns:
        Indices of the kept sentences, ascending (original order).
    """
    if len(scores) != len(token_counts):
        raise ValueError(f"{len(scores)} scores but {len(token_counts)} token counts.")
    if force_keep is not None and len(force_keep) != len(scores):
        raise ValueError(f"force_keep has {len(force_keep)} entries for {len(scores)} sentences.")
    forced = [i for i in range(len(scores)) if force_keep is not None and force_keep[i]]
    forced_set = set(forced)
    ranked = sorted((i for i in range(len(scores)) if i not in forced_set), key=lambda i: (-scores[i], i))
    kept: list[int] = []
    used = 0
    for index in [*forced, *ranked]:
        cost = token_counts[index] + (separator_tokens if kept else 0)
        if used + cost <= budget:
            kept.append(index)
            used += cost
    return sorted(kept)
