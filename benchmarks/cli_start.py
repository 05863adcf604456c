"""How long a one-shot ``tpc compress`` takes, beside importing torch and transformers alone.

Usage:
    python -m benchmarks.cli_start [--runs 3] [--file examples/data/declaration_of_independence.txt] [--rate 0.2]
                                   [--extra=--describe-bare] [--out benchmarks/results/cli_start]

Each command runs ``--runs`` times in a fresh process, alternating (the import, then the CLI, then the import
again...), so a change in the machine's load touches both alike; the model files must already be cached (the first
run of a fresh install converts and caches them). Reports the median wall time of each, their difference, the CPU
(user + system) time of the children, and the 1-minute load average before and after each run (other processes
share the CPU: a run is only comparable with one made at a similar load). Writes ``cli_start.{md,json}`` to
``--out``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: Sequence[str]) -> dict[str, float | str]:
    """One run of ``command``: wall seconds, children's CPU seconds, load average before and after, its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(list(command), capture_output=True, text=True, check=True, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "load_before": load, "load_after": os.getloadavg()[0], "stdout": done.stdout}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--file", default="examples/data/declaration_of_independence.txt")
    parser.add_argument("--rate", default="0.2")
    parser.add_argument("--extra", action="append", default=[], help="more arguments for tpc compress")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "cli_start")
    args = parser.parse_args(argv)
    commands = {
        "import torch, transformers": [sys.executable, "-c", "import torch, transformers"],
        "tpc compress": [sys.executable, "-m", "tpc_core", "compress", args.file, "--rate", args.rate, *args.extra],
    }
    runs: dict[str, list[dict[str, float | str]]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            runs[name].append(timed(command))
    outputs = {str(run["stdout"]) for run in runs["tpc compress"]}
    medians = {name: statistics.median(float(run["wall"]) for run in done) for name, done in runs.items()}
    lines = [f"`tpc compress {args.file} --rate {args.rate} {' '.join(args.extra)}`, {args.runs} runs each, "
             f"alternating, fresh processes ({os.cpu_count()} CPUs)", "",
             "| command | median wall s | walls s | CPU s (user + sys) | load average before each run |",
             "|---|---|---|---|---|"]
    for name, done in runs.items():
        cells = [", ".join(f"{float(run[key]):.2f}" for run in done) for key in ("wall", "cpu", "load_before")]
        lines.append(f"| {name} | {medians[name]:.2f} | {' | '.join(cells)} |")
    difference = medians["tpc compress"] - medians["import torch, transformers"]
    lines += ["", f"Difference of the medians: {difference:+.2f} s. The CLI's output was the same in every run: "
              f"{len(outputs) == 1}."]
    report = "\n".join(lines) + "\n"
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cli_start.md").write_text(report, encoding="utf-8")
    (args.out / "cli_start.json").write_text(json.dumps(
        {"command": "python -m benchmarks.cli_start " + " ".join(argv if argv is not None else sys.argv[1:]),
         "medians": medians, "runs": {name: [{k: v for k, v in run.items() if k != "stdout"} for run in done]
                                      for name, done in runs.items()}}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
