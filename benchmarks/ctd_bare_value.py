"""Does the CTD's description help selection on bare documents? Evidence recall with and without it.

Usage:
    python -m benchmarks.ctd_bare_value [--per-source 12] [--rate 0.5] [--out benchmarks/results/corpus]

Index-time compression sees a document with no question and, mostly, no written request. The CTD then writes a
description that the task finder keeps (generated / matched) or throws away (fallback). This benchmark compresses
qa_dev **train**-split contexts (never dev) bare, each on its own (``question=None``, no template), at ``--rate``,
twice: with the CTD (``describe_bare=True``, the engine's default) and without it (``describe_bare=False``: the
fallback task at once). It then scores each train question on its context's compressed text with
:func:`benchmarks.protocol.metrics.evidence_recall`. Up to ``--per-source`` distinct contexts per source are taken, in
file order. Prints a markdown table (overall, by task source under the CTD, by data source) and writes it with the
per-question records to ``--out`` (``ctd_bare_value.{md,json}``). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings
from collections import defaultdict
from pathlib import Path

from benchmarks.protocol.loaders import default_qa_dev_path
from benchmarks.protocol.metrics import evidence_recall

ROOT = Path(__file__).resolve().parents[1]


def train_contexts(per_source: int) -> tuple[list[str], list[dict]]:
    """Up to ``per_source`` distinct train contexts per source, and the train questions asked about them."""
    rows = [json.loads(line) for line in default_qa_dev_path().read_text(encoding="utf-8").splitlines()]
    rows = [row for row in rows if row["split"] == "train"]
    taken: dict[str, int] = defaultdict(int)
    contexts: dict[str, None] = {}
    for row in rows:
        if row["context"] not in contexts and taken[row["source"]] < per_source:
            contexts[row["context"]] = None
            taken[row["source"]] += 1
    return list(contexts), [row for row in rows if row["context"] in contexts]


def _mean(values: list[float]) -> float | None:
    return statistics.mean(values) if values else None


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-source", type=int, default=12)
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--model", default="tpc-mini")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "corpus")
    args = parser.parse_args(argv)
    from tpc_core import TPCCompressor  # lazy: loads torch

    warnings.simplefilter("ignore", UserWarning)  # oversized sentences: counted in the results, not needed here
    compressor = TPCCompressor.from_pretrained(args.model)
    contexts, questions = train_contexts(args.per_source)
    runs: dict[bool, dict[str, tuple[str, str]]] = {}
    seconds: dict[bool, float] = {}
    for describe in (True, False):
        started = time.perf_counter()
        results = compressor.compress_batch(contexts, question=None, rate=args.rate, batch_size=4,
                                            describe_bare=describe)
        seconds[describe] = time.perf_counter() - started
        runs[describe] = {c: (r.compressed_prompt, str(r.task_source)) for c, r in zip(contexts, results)}
    records = []
    for row in questions:
        with_ctd, source = runs[True][row["context"]]
        without_ctd, _ = runs[False][row["context"]]
        recall_with = evidence_recall(with_ctd, row["supporting_sentences"], row["context"])
        recall_without = evidence_recall(without_ctd, row["supporting_sentences"], row["context"])
        if recall_with is None:
            continue
        records.append({"id": row["id"], "source": row["source"], "task_source_with_ctd": source,
                        "recall_with_ctd": recall_with, "recall_without_ctd": recall_without,
                        "same_text": with_ctd == without_ctd})
    groups: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        groups["all"].append(record)
        groups[f"task source with CTD: {record['task_source_with_ctd']}"].append(record)
        groups[f"data: {record['source'].split(' ')[0]}"].append(record)
    lines = [f"qa_dev train contexts compressed bare at rate {args.rate} ({len(contexts)} contexts, "
             f"{len(records)} questions with verbatim evidence; {args.model}; load average "
             f"{os.getloadavg()[0]:.1f}). Compression time: {seconds[True]:.0f} s with the CTD, "
             f"{seconds[False]:.0f} s without (noisy when the machine is shared).", "",
             "| group | questions | evidence recall, with CTD | without CTD (fallback task) | same kept text |",
             "|---|---|---|---|---|"]
    for name, group in groups.items():
        lines.append(f"| {name} | {len(group)} | {_fmt(_mean([r['recall_with_ctd'] for r in group]))} | "
                     f"{_fmt(_mean([r['recall_without_ctd'] for r in group]))} | "
                     f"{sum(r['same_text'] for r in group)} |")
    table = "\n".join(lines) + "\n"
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ctd_bare_value.md").write_text(table, encoding="utf-8")
    (args.out / "ctd_bare_value.json").write_text(json.dumps(
        {"rate": args.rate, "contexts": len(contexts), "seconds_with_ctd": seconds[True],
         "seconds_without_ctd": seconds[False], "records": records}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
