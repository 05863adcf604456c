"""The one token counter, budget rule and sentence selection every method is held to.

Selection and the budget arithmetic are the engine's own (``tpc_core.engine.selection.budget``), so baselines and TPC
are held to exactly the rule the engine applies; only the benchmark's extra policy lives here (a budget is capped at the
text's length and never zero for a non-empty text), plus :func:`join_spans`' uniform layout.

All methods are measured with the MiniLM WordPiece tokenizer (no special tokens, no truncation; the counter is
:mod:`data_access.tokens`', handed on here). BERT's
pre-tokenizer splits on whitespace and punctuation, so the count of sentences joined by whitespace equals
the sum of their counts: a selection whose per-sentence counts fit the budget fits as joined text too.
"""

from __future__ import annotations

from collections.abc import Sequence

from data_access.tokens import MiniLMTokenCounter, TokenCounter, minilm_token_counter
from tpc_core.engine.selection.budget import resolve_budget, top_k_within_budget

__all__ = [
    "MiniLMTokenCounter",
    "TokenCounter",
    "minilm_token_counter",
    "budget_for",
    "select_under_budget",
    "join_spans",
]


def budget_for(origin_tokens: int, *, rate: float | None = None, target_tokens: int | None = None) -> int:
    """Token budget for a text of ``origin_tokens``.

    ``target_tokens`` wins when given (capped at the original length); otherwise ``floor(rate * origin)``,
    at least 1 token for a non-empty text.
    """
    if target_tokens is not None:
        if target_tokens < 0:
            raise ValueError(f"target_tokens must be >= 0, got {target_tokens}")
        return min(target_tokens, origin_tokens)
    if rate is None or not 0 < rate <= 1:
        raise ValueError(f"rate must be in (0, 1], got {rate}")
    return min(origin_tokens, max(1 if origin_tokens else 0, resolve_budget(origin_tokens, rate=rate)))


def select_under_budget(scores: Sequence[float], token_counts: Sequence[int], budget: int) -> list[int]:
    """Indices (ascending) of the best-scored sentences whose counts sum to at most ``budget``.

    The engine's rule (:func:`tpc_core.engine.selection.budget.top_k_within_budget`): greedy by descending score (ties:
    earlier sentence first); a sentence that no longer fits is skipped and smaller, lower-scored ones may still be
    taken. Never exceeds the budget.
    """
    return top_k_within_budget(scores, token_counts, budget)


def join_spans(text: str, spans: Sequence[tuple[int, int]], kept: Sequence[int]) -> str:
    """Kept sentences in original order; a newline between two of them if the original gap had one.

    Deliberately not the engine's ``tpc_core.engine.selection.budget.join_kept`` (which keeps each original gap
    verbatim): the benchmark lays out every method's output alike, peers' included, so the reader sees the same shape.
    Token counts are the same either way (WordPiece ignores whitespace).
    """
    parts: list[str] = []
    previous_end: int | None = None
    for index in kept:
        start, end = spans[index]
        if previous_end is not None:
            parts.append("\n" if "\n" in text[previous_end:start] else " ")
        parts.append(text[start:end])
        previous_end = end
    return "".join(parts)
