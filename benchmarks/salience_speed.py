"""Index-time speed of two checkpoints' salience models, timed alternately in one process.

Usage:
    python -m benchmarks.salience_speed --model tpc-mini --model runs/ckpt/tpc-mini-salience-head [--contexts 96]
        [--rounds 3] [--threads 2] [--out benchmarks/results/salience_speed]

Every distinct qa_dev **dev** context is compressed bare, as ``tpc compress-corpus`` and the index-time adapters
compress (``compress_batch(contexts, question=None, rate=0.5, describe_bare=False)``), by each model in turn, round
after round, so that both see the same load; the median of the rounds is reported as contexts and MiniLM tokens per
second, with the load average before and after. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from data_access.loaders import load_qa_dev
from tpc_core import TPCCompressor

__all__ = ["main"]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True, help="a checkpoint name or directory (repeat)")
    parser.add_argument("--contexts", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/salience_speed"))
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    contexts = list(dict.fromkeys(sample.context for sample in load_qa_dev()))[: args.contexts]
    models = {name: TPCCompressor.from_pretrained(name) for name in args.model}
    for compressor in models.values():  # warm-up: first calls load lazily
        compressor.compress_batch(contexts[:2], question=None, rate=args.rate, describe_bare=False)
    load_before = os.getloadavg()[0]
    seconds: dict[str, list[float]] = {name: [] for name in models}
    tokens = 0
    for _ in range(args.rounds):
        for name, compressor in models.items():
            started = time.perf_counter()
            results = compressor.compress_batch(contexts, question=None, rate=args.rate, describe_bare=False)
            seconds[name].append(time.perf_counter() - started)
            tokens = sum(result.origin_tokens for result in results)
    report = {"contexts": len(contexts), "tokens": tokens, "rounds": args.rounds, "threads": args.threads,
              "load_before": load_before, "load_after": os.getloadavg()[0],
              "models": {name: {"median_s": statistics.median(values), "seconds": values,
                                "contexts_per_s": len(contexts) / statistics.median(values),
                                "tokens_per_s": tokens / statistics.median(values)}
                         for name, values in seconds.items()}}
    lines = [f"Index time, {len(contexts)} qa_dev dev contexts ({tokens} MiniLM tokens) compressed bare at rate "
             f"{args.rate}, {args.threads} threads, median of {args.rounds} alternating rounds; load "
             f"{report['load_before']:.2f} -> {report['load_after']:.2f}", "",
             "| model | contexts/s | tokens/s | median s |", "|---|---|---|---|"]
    lines += [f"| {name} | {row['contexts_per_s']:.2f} | {row['tokens_per_s']:.0f} | {row['median_s']:.2f} |"
              for name, row in report["models"].items()]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "salience_speed.json").write_text(json.dumps(report, indent=1))
    (args.out / "salience_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
