"""Is the written request found? The prompt-agnostic task description checked against the request a prompt writes.

A prompt's written request counts as **found** when at least 80 % of its content words appear in the task
description that prompt-agnostic compression uses (``tpc_core.engine.task.grounding.request_covered``). Reported
per phrasing family and per prompt shape (:mod:`synthesis.instructions`), with where each description came from
(extracted, matched, generated, fallback) and, for prompts that write no request, the share kept empty of an
extracted request.

``python -m benchmarks.request_found --split dev --out DIR`` fills the instruction families and shapes with the
``qa_dev`` **dev** rows (evaluation only: run it once, for the report). ``--records FILE --role check`` reads
records built from train rows instead (``python -m training.curation.instruction_set``), for choices.
Both run the whole prompt through the checkpoint exactly as compression does (``TaskFinder.find``: the request
head, then the CTD where the head finds nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from data_access.loaders import default_qa_dev_path, read_jsonl
from evaluation.request_outcomes import Outcome, summarise, summary_markdown
from synthesis.instructions import INSTRUCTION_FAMILIES, instruction_records, request_of
from tpc_core import TPCCompressor
from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.reading import segment

__all__ = ["dev_records", "find_tasks", "main"]


def dev_records(qa_path: str, *, seed: int) -> list[dict[str, Any]]:
    """Every family and shape filled with the ``qa_dev`` dev rows (key-value rows skipped), one per row."""
    rows = [row for row in read_jsonl(qa_path) if row.get("split") == "dev"]
    return instruction_records(rows, rows, seed=seed, families=tuple(INSTRUCTION_FAMILIES), prefix="dev",
                               split_by_family=False)


def find_tasks(compressor: Any, records: Iterable[Mapping[str, Any]], *, batch: int = 4,
               log: Any = None) -> list[Outcome]:
    """Each record's prompt through the checkpoint's task finder, as prompt-agnostic compression runs it."""
    options = CompressionOptions()
    records = list(records)
    outcomes: list[Outcome] = []
    for start in range(0, len(records), batch):
        chunk = records[start: start + batch]
        segmented = [segment((r["prompt"],), compressor.engine.splitter(), compressor.token_counter, options)
                     for r in chunk]
        engine = compressor.engine
        tasks = engine.task_finder.find(segmented, engine.scorer.embed(segmented), [None] * len(chunk),
                                        separator=options.document_separator)
        outcomes += [Outcome(str(r["id"]), str(r["family"]), str(r.get("shape", "")), request_of(r),
                             task.description or "", str(task.source)) for r, task in zip(chunk, tasks)]
        if log is not None:
            log(f"{len(outcomes)}/{len(records)} prompts")
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.request_found", description=__doc__)
    parser.add_argument("--checkpoint", default="tpc_core/checkpoints/tpc-mini")
    parser.add_argument("--split", choices=("dev", "records"), default="records")
    parser.add_argument("--records", default="runs/curation/instructions/records.jsonl")
    parser.add_argument("--role", default="check", help="records of this role only (--split records)")
    parser.add_argument("--qa", default=str(default_qa_dev_path()))
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--limit", type=int, default=None, help="at most this many records, spread evenly")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    if args.split == "dev":
        records = dev_records(args.qa, seed=args.seed)
    else:
        records = [json.loads(line) for line in Path(args.records).read_text(encoding="utf-8").splitlines()]
        records = [r for r in records if r.get("role") == args.role]
    if args.limit is not None and args.limit < len(records):
        records = [records[(i * len(records)) // args.limit] for i in range(args.limit)]
    started = time.perf_counter()
    compressor = TPCCompressor.from_pretrained(args.checkpoint, device="cpu")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    outcomes = find_tasks(compressor, records, log=lambda m: print(m, file=sys.stderr, flush=True))
    summary = {"checkpoint": args.checkpoint, "split": args.split, "records": len(records),
               "seconds": round(time.perf_counter() - started, 1), "command": " ".join(["python", "-m",
                                                                                         "benchmarks.request_found",
                                                                                         *(argv or sys.argv[1:])]),
               **summarise(outcomes)}
    (out / "request_found.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "request_found.md").write_text(summary_markdown(summary, f"Written request found ({args.split})"),
                                          encoding="utf-8")
    with (out / "outcomes.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(asdict(o)) + "\n" for o in outcomes)
    print(json.dumps(summary["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
