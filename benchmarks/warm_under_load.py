"""The query-time cache's warm call on busy cores: quiet, and beside busy-loop processes, in one run.

Usage:
    PYTHONPATH=. python -m benchmarks.warm_under_load [--calls 20] [--rounds 3] [--busy 2]
                                                      [--out benchmarks/results/warm_under_load]

One compressor (``tpc-mini``) and a memory cache hold ``--chunks`` (20) chunks of about 500 MiniLM tokens cut from
qa_dev ``train`` contexts (:func:`evaluation.chunks.retrieval_set`). Each timed call compresses all of them
at rate 0.2 with a question never asked before in the run (qa_dev ``train`` questions, in order), so nothing but
the documents comes from the cache. Two settings of ``small_pass_threads``: ``1`` (the default: the small passes on
a worker with one intra-op thread) and ``None`` (every pass in the caller's thread with torch's setting). Each round
times both (the first one first, then the other first, in turn), quiet and then beside ``--busy`` processes that
spin on a core each, and also the cold call (no cache) quiet. Medians over every round; the ratios are between
medians of this run. The 1-minute load average is recorded before and after each phase: "quiet" means only that
this run adds no load (other processes may).
Prints the table and writes ``warm_under_load.{md,json}`` to ``--out``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SETTINGS: dict[str, int | None] = {"1 (default)": 1, "None (caller's threads)": None}


def busy_processes(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` processes that each spin on one core until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def timed_calls(call: Callable[[], Any], count: int) -> list[float]:
    """Seconds of each of ``count`` calls."""
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def _median_ms(seconds: Sequence[float]) -> float:
    return 1000 * statistics.median(seconds)


def summary(times: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    """Per setting: the median of each phase (ms) and the loaded over quiet ratio of the warm call."""
    rows = {}
    for setting, phases in times.items():
        row = {phase: _median_ms(seconds) for phase, seconds in phases.items()}
        row["loaded_over_quiet"] = row["warm_loaded"] / row["warm_quiet"]
        rows[setting] = row
    return rows


def table(payload: dict[str, Any]) -> str:
    """The result as a markdown table, with the run's settings and load averages."""
    lines = [f"Warm call over {payload['chunks']} cached chunks ({payload['tokens']} tokens), rate "
             f"{payload['rate']}, a new question per call; {payload['rounds']} rounds x {payload['calls']} calls; "
             f"busy processes: {payload['busy']}; torch threads in the caller: {payload['torch_threads']}.", "",
             "| small_pass_threads | warm quiet (ms) | warm loaded (ms) | loaded / quiet | cold quiet (ms) |",
             "|---|---|---|---|---|"]
    for setting, row in payload["summary"].items():
        lines.append(f"| {setting} | {row['warm_quiet']:.1f} | {row['warm_loaded']:.1f} | "
                     f"{row['loaded_over_quiet']:.2f} | {row['cold_quiet']:.0f} |")
    loads = ", ".join(f"{phase} {before:.2f}->{after:.2f}" for phase, before, after in payload["load_average"])
    lines += ["", f"1-minute load average (before->after each phase): {loads}."]
    return "\n".join(lines) + "\n"


def _questions(samples: Sequence[Any], needed: int) -> Iterator[str]:
    """``needed`` distinct questions of ``samples``, in order."""
    distinct = list(dict.fromkeys(sample.question for sample in samples))
    if len(distinct) < needed:
        raise SystemExit(f"{needed} distinct questions are needed and qa_dev train has {len(distinct)}: "
                         "lower --calls or --rounds.")
    return iter(distinct[:needed])


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--calls", type=int, default=20, help="timed calls per phase and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=2, help="busy-loop processes beside the loaded phase")
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "warm_under_load")
    args = parser.parse_args(argv)

    import torch  # lazy: loads torch

    from data_access.loaders import load_qa_dev
    from evaluation.budget import minilm_token_counter
    from evaluation.chunks import retrieval_set
    from tpc_core import TPCCompressor

    samples = load_qa_dev(split="train")
    chunks, first_question = retrieval_set(samples, minilm_token_counter(), args.chunks, 500)
    texts = [chunk.text for chunk in chunks]
    cold_calls = max(1, args.calls // 10)
    questions = _questions(samples, args.rounds * len(SETTINGS) * (2 * (args.calls + 1) + cold_calls + 1))
    compressor = TPCCompressor.from_pretrained("tpc-mini")
    cache = "memory"
    compressor.compress(texts, question=first_question, rate=args.rate, cache=cache)  # fills the cache

    def call(threads: int | None, cached: bool) -> Callable[[], Any]:
        extra = {"cache": cache} if cached else {}
        return lambda: compressor.compress(texts, question=next(questions), rate=args.rate,
                                           small_pass_threads=threads, **extra)

    times: dict[str, dict[str, list[float]]] = {setting: {"warm_quiet": [], "warm_loaded": [], "cold_quiet": []}
                                                for setting in SETTINGS}
    loads: list[tuple[str, float, float]] = []
    for round_number in range(args.rounds):
        # The settings swap places every round, so neither is always the first after a change of load.
        order = list(SETTINGS.items())[:: 1 if round_number % 2 == 0 else -1]
        for phase in ("warm_quiet", "warm_loaded", "cold_quiet"):
            before = os.getloadavg()[0]
            busy = busy_processes(args.busy) if phase == "warm_loaded" else []
            try:
                for setting, threads in order:
                    calls = args.calls if phase != "cold_quiet" else cold_calls
                    run = call(threads, cached=phase != "cold_quiet")
                    run()  # one untimed call per setting and phase
                    times[setting][phase] += timed_calls(run, calls)
            finally:
                for process in busy:
                    process.kill()
                    process.wait()
            loads.append((phase, before, os.getloadavg()[0]))
    payload: dict[str, Any] = {
        "chunks": len(chunks), "tokens": sum(chunk.tokens for chunk in chunks), "rate": args.rate,
        "rounds": args.rounds, "calls": args.calls, "busy": args.busy, "torch_threads": torch.get_num_threads(),
        "cpus": os.cpu_count(), "summary": summary(times), "times_s": times, "load_average": loads,
    }  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "warm_under_load.json").write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    text = table(payload)
    (args.out / "warm_under_load.md").write_text(text, encoding="utf-8")
    print(text, end="")
    return payload


if __name__ == "__main__":
    main()
