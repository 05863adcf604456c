"""Latency of each scorer by prompt length: prompt-aware ``compress`` against plain MiniLM forward passes.

Usage:
    python -m benchmarks.scorer_latency [--lengths 1000,4000,10000,32000] [--repeats 3]
        [--scorer tpc-mini@pooled_cosine --scorer tpc-mini@cosine_bm25] [--out benchmarks/results/scorer_latency]

Each ``--scorer`` is a TPC model, optionally with ``@SCORER`` (``evaluation.methods.tpc.split_model_spec``).
Prompts are real dev contexts concatenated to each length (``benchmarks.engine_overhead.build_prompt``, MiniLM tokens),
with the first row's question. For every length and scorer, in one process: the median wall time of ``compress(text,
question=..., rate=0.2)`` over ``--repeats`` runs after one warm-up, and the MiniLM forward floor over the same tokens
(:mod:`evaluation.methods.forward_floor`); the ratio column is compress / floor.
Scorers share the CSE pass, so the difference between two rows of one length is what the scoring function itself costs.
The 1-minute load average before and after is printed with the table: on shared cores the seconds are noise. Writes
``scorer_latency.{md,json}`` to ``--out``; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.timing_inputs import build_prompt
from evaluation.methods.forward_floor import MiniLMForward
from evaluation.methods.tpc import split_model_spec

DEFAULT_SCORERS = ("tpc-mini@pooled_cosine", "tpc-mini@cosine_bm25")


def _median_seconds(call: Any, repeats: int) -> float:
    call()  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(scorers: list[str], lengths: list[int], repeats: int) -> list[dict[str, Any]]:
    """One row per (length, scorer): compress seconds, relevance-step seconds, floor seconds."""
    from tpc_core import TPCCompressor  # lazy: loads torch

    compressors = {}
    for spec in scorers:
        name, scorer = split_model_spec(spec)
        compressors[spec] = TPCCompressor.from_pretrained(name, scorer=scorer)
    first = next(iter(compressors.values()))
    counter = first.token_counter
    backbone = MiniLMForward(first.device, first.dtype)
    rows = []
    for length in lengths:
        text, question = build_prompt(counter, length)
        tokens = counter(text)
        floor = backbone.median_seconds(text, repeats)
        for spec, compressor in compressors.items():
            seconds = _median_seconds(lambda c=compressor: c.compress(text, question=question, rate=0.2), repeats)
            sentences = len(compressor.compress(text, question=question, rate=0.2).sentences)
            rows.append({"tokens": tokens, "target_tokens": length, "scorer": spec, "compress_s": seconds,
                         "floor_s": floor, "over_floor": seconds / floor, "sentences": sentences})
            print(f"{length:>6} {spec:<28} compress {seconds:7.3f} s  floor {floor:6.3f} s  "
                  f"x{seconds / floor:.2f}", flush=True)
    return rows


def table(rows: list[dict[str, Any]], load: tuple[float, float]) -> str:
    """The markdown table."""
    lines = [f"1-minute load average before {load[0]:.2f}, after {load[1]:.2f} (2 shared cores: seconds are "
             "indicative only).", "",
             "| tokens | scorer | sentences | compress (s) | MiniLM forward floor (s) | compress / floor |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['tokens']} | {row['scorer']} | {row['sentences']} | {row['compress_s']:.3f} | "
                     f"{row['floor_s']:.3f} | {row['over_floor']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="1000,4000,10000,32000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scorer", action="append", default=None)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/scorer_latency"))
    args = parser.parse_args(argv)
    before = os.getloadavg()[0]
    rows = measure(args.scorer or list(DEFAULT_SCORERS), [int(x) for x in args.lengths.split(",")], args.repeats)
    after = os.getloadavg()[0]
    text = table(rows, (before, after))
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scorer_latency.md").write_text(text, encoding="utf-8")
    (args.out / "scorer_latency.json").write_text(json.dumps({"load_before": before, "load_after": after,
                                                              "rows": rows}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
