"""Seconds per 10k tokens for a Llama-3.2-1B CSE (``cpc-llama-1b``'s shapes) on this machine, without a download.

The model is *randomly initialised* from the real Llama-3.2-1B configuration (written out below): same shapes,
same cost, no weights. It runs through the engine's own encoder (``ContextSentenceEncoder.encode_contexts``,
``pooling="cpc"``, bidirectional mask) on synthetic sentence ids, one window per measured length. A full 10k-token
run at CPC's 6144-token window takes minutes and ~5 GB of attention scores on top of the 5 GB model, so the
script measures shorter windows and extrapolates with ``seconds = a * tokens + b * sum(window_length**2)`` fitted
to two window lengths (the linear part is the weights, the quadratic part attention).

Usage::

    python -m benchmarks.hub_cse_timing --lengths 512 2048 --threads 2 --out results/hub_cse_timing.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

from tpc_core.config import CSEConfig
from tpc_core.loading.offline import minilm_dir

__all__ = ["LLAMA_32_1B", "extrapolate", "main"]

# config.json of meta-llama/Llama-3.2-1B-Instruct (and its unsloth copy), the fields that set the cost.
LLAMA_32_1B: dict[str, Any] = {
    "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-5, "rope_theta": 500000.0, "tie_word_embeddings": True,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
SENTENCE_TOKENS = 24


def extrapolate(measured: dict[int, float], windows: list[int]) -> float:
    """Seconds for ``windows`` (token lengths) from two measured single-window times ``{length: seconds}``.

    Solves ``t = a * L + b * L**2`` for the two lengths, then sums over ``windows``.
    """
    (l1, t1), (l2, t2) = sorted(measured.items())[:2]
    b = (t2 / l2 - t1 / l1) / (l2 - l1)
    a = t1 / l1 - b * l1
    return sum(a * length + b * length * length for length in windows)


def cpc_windows(tokens: int, window: int = 6144, overlap: int = 512) -> list[int]:
    """Window lengths the engine reads ``tokens`` in with cpc-llama-1b's settings (overlapping windows)."""
    lengths = []
    start = 0
    while True:
        lengths.append(min(window, tokens - start))
        if start + window >= tokens:
            return lengths
        start += window - overlap


def _encoder(threads: int) -> Any:
    import torch  # lazy: loads torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaModel  # lazy: loads torch

    from tpc_core.engine.scoring.cse import ContextSentenceEncoder  # lazy: loads torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = LlamaModel(LlamaConfig(**LLAMA_32_1B)).eval()
    # Any fast tokenizer will do: the encoder is fed token ids, the tokenizer only gives a pad id.
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir()))
    config = CSEConfig(base_model="random", architecture="decoder", pooling="cpc", use_special_tokens=False,
                       max_window_tokens=8192, window_overlap_tokens=0, batch_size=1)
    return ContextSentenceEncoder(model, tokenizer, config, "decoder", torch.device("cpu"))


def measure(encoder: Any, length: int) -> float:
    """Forward seconds of one window of ``length`` tokens (sentences of 24 tokens), through the engine."""
    whole, rest = divmod(length, SENTENCE_TOKENS)
    sizes = [SENTENCE_TOKENS] * whole + ([rest] if rest else [])
    sentences = [[1000 + index] * size for index, size in enumerate(sizes)]
    encoder.forward_seconds = 0.0
    encoder.encode_contexts([sentences])
    return encoder.forward_seconds


def main(argv: list[str] | None = None) -> int:
    """Measure, extrapolate, print and (``--out``) save a JSON record."""
    import torch  # lazy: loads torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs=2, default=[512, 2048], help="two window lengths to measure")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    encoder = _encoder(args.threads)
    load_seconds = time.perf_counter() - started
    measure(encoder, 96)  # warm-up: first-call allocations and kernel selection
    measured = {length: measure(encoder, length) for length in args.lengths}
    cpc = cpc_windows(10_000)
    record = {
        "model": "LlamaModel, random init, Llama-3.2-1B config", "dtype": "fp32", "device": "cpu",
        "threads": args.threads, "cpu": platform.processor() or platform.machine(), "torch": torch.__version__,
        "load_avg_before": os.getloadavg(), "build_seconds": round(load_seconds, 1),
        "measured_window_seconds": {str(k): round(v, 2) for k, v in measured.items()},
        "seconds_per_10k_tokens_in_windows_of": {str(k): round(v * 10_000 / k, 1) for k, v in measured.items()},
        "cpc_windows_for_10k": cpc,
        "seconds_per_10k_tokens_cpc_windows_extrapolated": round(extrapolate(measured, cpc), 1),
        "method": "in_windows_of: measured window seconds x 10000 / window length (no overlap); cpc_windows: "
                  "t = a*L + b*L^2 fitted to the two measured windows, summed over the windows of 10k tokens",
    }
    print(json.dumps(record, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
