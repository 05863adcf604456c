"""Prompt-aware latency while a prompt-agnostic call runs on the same engine.

Eight prompt-aware calls start together on one shared ``TPCCompressor``: first alone, then while one
prompt-agnostic call (which generates a task description with the CTD) is under way. Before Engine v2 a lock
covered each whole call, so the aware calls waited for the generation; now only the CTD is guarded.

    python -m benchmarks.concurrency            # one short run (about a minute on 2 CPU cores)

Timings are wall-clock seconds on this machine, printed as JSON; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "data" / "declaration_of_independence.txt"


def aware_latencies(compressor, text: str, question: str, calls: int) -> list[float]:
    """Seconds each of ``calls`` concurrent prompt-aware calls took, all started together."""
    barrier = threading.Barrier(calls)
    latencies = []
    lock = threading.Lock()

    def one() -> None:
        barrier.wait()
        started = time.perf_counter()
        compressor.compress(text, question=question, rate=0.2)
        with lock:
            latencies.append(time.perf_counter() - started)

    threads = [threading.Thread(target=one) for _ in range(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--aware-chars", type=int, default=4000, help="size of each aware prompt")
    args = parser.parse_args()
    from tpc_core import TPCCompressor  # lazy: loads torch

    compressor = TPCCompressor.from_pretrained("tpc-mini", device="cpu", load_ctd=True)
    declaration = EXAMPLE.read_text(encoding="utf-8")
    aware_text = declaration[: args.aware_chars]
    question = "What grievances are listed against the King?"
    compressor.compress(aware_text, question=question, rate=0.2)  # warm-up
    alone = aware_latencies(compressor, aware_text, question, args.calls)

    agnostic_seconds: list[float] = []

    def agnostic() -> None:
        started = time.perf_counter()
        compressor.compress(declaration, rate=0.1)  # no written request: the CTD generates
        agnostic_seconds.append(time.perf_counter() - started)

    runner = threading.Thread(target=agnostic)
    runner.start()
    time.sleep(1.0)  # let the agnostic call reach its generation
    during = aware_latencies(compressor, aware_text, question, args.calls)
    runner.join()
    print(json.dumps({
        "calls": args.calls, "aware_chars": len(aware_text),
        "aware_alone_median_s": round(statistics.median(alone), 3), "aware_alone_max_s": round(max(alone), 3),
        "aware_during_agnostic_median_s": round(statistics.median(during), 3),
        "aware_during_agnostic_max_s": round(max(during), 3),
        "agnostic_call_s": round(agnostic_seconds[0], 3),
    }, indent=1))


if __name__ == "__main__":
    main()
