"""One command line for every suite: ``python -m benchmarks SUITE [ARGS ...]``.

``python -m benchmarks`` (or ``--help``) lists the suites; ``python -m benchmarks SUITE --help`` shows a suite's
own options. Each suite is a module of this package with a ``main(argv)``, imported only when it runs, so listing
them loads no model; ``python -m benchmarks.SUITE`` runs the same module directly.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

__all__ = ["SUITES", "main", "usage"]

SUITES: dict[str, str] = {
    "run": "every peer and baseline: --suite dev, speed, longbench, zeroscrolls, summ, index, cache or all",
    "agents": "agent trajectories: what a tool-calling agent's model receives, call after call",
    "agents_latency": "an agent's first model call over a long history, cold and warm",
    "conversations": "conversations as input, against the ways a user shortens a chat",
    "request_kept": "is the user's request kept: real requests and stock templates",
    "request_found": "is the written request found by the prompt-agnostic task description",
    "layout_recall": "prompt-agnostic recall of the same QA rows written in many layouts",
    "generated_recall": "prompt-agnostic recall of prompts composed from random parts",
    "composed_recall": "prompt-agnostic recall over layouts composed from position, pointer, label and container",
    "request_pins": "the sentences the request finder pins over a corpus of prompts (the differential reference)",
    "coverage_sweep": "the coverage weights of prompt-agnostic selection on question-less prompts",
    "ctd_bare_value": "whether the CTD's description is worth its cost on bare documents",
    "segmentation_accuracy": "accuracy and speed of the sentence splitters",
    "engine_overhead": "the engine's own milliseconds per ~10k-token prompt, part by part",
    "device_check": "the same prompts on the CPU and on a device: agreement and latency",
    "cli_start": "how long a one-shot `tpc compress` takes",
    "corpus_throughput": "`tpc compress-corpus`: local engine against Ray Data",
    "index_throughput": "index-time throughput of many short passages",
    "cache_storage": "each sentence-cache storage dtype: recall and bytes per sentence",
    "cache_redis": "the Redis sentence cache across a fleet of replicas",
    "warm_under_load": "the warm cached call, quiet and beside busy processes on every core",
    "write_benchmarks_md": "BENCHMARKS.md from benchmarks/results/ (--check: fail on drift)",
}
"""Suite name -> what it measures; the name is the module ``benchmarks.<name>``."""


def usage() -> str:
    """The list of suites, one a line."""
    width = max(map(len, SUITES))
    rows = "\n".join(f"  {name:<{width}}  {what}" for name, what in SUITES.items())
    return f"usage: python -m benchmarks SUITE [ARGS ...]\n\nsuites:\n{rows}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``argv[0]``'s suite with the rest of ``argv``; list the suites when none is named."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "list"):
        print(usage(), end="")
        return 0
    name = args[0]
    rest = args[1:]
    if name not in SUITES:
        print(f"python -m benchmarks: unknown suite {name!r}\n\n{usage()}", end="", file=sys.stderr)
        return 2
    suite = importlib.import_module(f"benchmarks.{name}")
    saved = sys.argv
    sys.argv = [f"python -m benchmarks {name}", *rest]  # a suite's parser names itself from sys.argv[0]
    try:
        code = suite.main(rest)
    finally:
        sys.argv = saved
    return code if isinstance(code, int) else 0
