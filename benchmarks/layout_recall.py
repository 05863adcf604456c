"""Prompt-agnostic compression of the same QA rows written in many layouts: evidence recall at one
rate, per layout, familiar against seen-in-training against held-out.

``python -m benchmarks.layout_recall --split heldout-train --out runs/eval/layout_recall [--per-row 4]``

Every row is compressed three ways at the same rate with the MiniLM token counter (the benchmark protocol):

- ``aware``: its context with its question given (the reference);
- ``familiar``: its LongBench-style template (``synthesis.templates``) filled and compressed with no question;
- ``--per-row`` layouts of :mod:`synthesis.layouts` (dealt so each layout gets as many rows), the question
  written as the request, compressed with no question.

Reported per layout: evidence recall (the share of the row's gold supporting sentences kept verbatim), how the
task was found (``extracted`` / ``matched`` / ``generated`` / ``fallback``), the share whose task description
keeps the written question, and budget overruns. ``--split heldout-train`` uses the ``qa_dev`` train rows the
CSE and the request head never trained on (:data:`data_access.paths.HELDOUT_IDS`): use it for
choices. ``--split dev`` measures the dev rows (rarely).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.harness.recall_runs import recall_parser, write_recall_run
from data_access.loaders import Sample, recall_samples
from evaluation.budget import minilm_token_counter
from evaluation.metrics import evidence_recall
from synthesis.layouts import HELD_OUT_LAYOUTS, LAYOUTS, render, written_question
from synthesis.templates import fill_template
from tpc_core import TPCCompressor
from tpc_core.engine.task.grounding import request_covered

__all__ = ["layout_prompts", "main", "summarise_layouts"]



def layout_prompts(samples: Sequence[Sample], per_row: int, *, seed: int,
                   layouts: Sequence[str] = tuple(LAYOUTS)) -> list[tuple[Sample, str, str]]:
    """``(sample, layout, prompt)``: each sample in ``per_row`` layouts, dealt round the list so each layout gets
    as many samples; ``familiar`` is the sample's own template."""
    prompts = []
    for number, sample in enumerate(samples):
        prompts.append((sample, "familiar", fill_template(sample.template, sample.context, sample.question)))
        for step in range(per_row):
            layout = layouts[(number * per_row + step) % len(layouts)]
            rng = random.Random(f"{seed}:{sample.id}:{layout}")
            rendered = render(layout, written_question(sample.question), sample.context, rng)
            prompts.append((sample, layout, rendered.prompt))
    return prompts


def _unescaped(text: str, layout: str) -> str:
    """The JSON layout's context is a JSON string: its quotes and line breaks are escaped."""
    return text.replace('\\"', '"').replace("\\n", "\n") if layout == "json" else text


def _group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    recalls = [r["evidence_recall"] for r in rows if r["evidence_recall"] is not None]
    return {"prompts": len(rows), "evidence_recall": round(sum(recalls) / len(recalls), 4) if recalls else None,
            "recall_samples": len(recalls), "request_found": round(sum(r["found"] for r in rows) / len(rows), 4),
            "sources": dict(sorted(Counter(r["source"] for r in rows).items())),
            "over_budget": sum(r["over_budget"] for r in rows),
            "seconds_per_prompt": round(sum(r["seconds"] for r in rows) / len(rows), 3)}


def summarise_layouts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per layout, and per group: ``aware`` (question given), ``familiar`` (LongBench-style templates), ``seen``
    (layouts trained on) and ``held_out`` (layouts never trained on)."""
    by_layout: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        by_layout[row["layout"]].append(row)

    def group_of(layout: str) -> str:
        return layout if layout in ("aware", "familiar") else "held_out" if layout in HELD_OUT_LAYOUTS else "seen"

    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[group_of(row["layout"])].append(row)
    return {"groups": {name: _group(items) for name, items in sorted(groups.items())},
            "layouts": {name: {"group": group_of(name), **_group(items)} for name, items in sorted(by_layout.items())}}


def _markdown(summary: Mapping[str, Any], title: str) -> str:
    lines = [f"## {title}", "",
             "| layout | group | prompts | evidence recall | request found | sources | over budget |",
             "|---|---|---|---|---|---|---|"]
    for name, row in (*summary["groups"].items(), *summary["layouts"].items()):
        group = row.get("group", "**group**")
        sources = ", ".join(f"{k} {v}" for k, v in row["sources"].items())
        lines.append(f"| {name} | {group} | {row['prompts']} | {row['evidence_recall']} | {row['request_found']} | "
                     f"{sources} | {row['over_budget']} |")
    return "\n".join(lines) + "\n"


def run(compressor: Any, samples: Sequence[Sample], *, per_row: int, rate: float, seed: int,
        log: Any = None) -> list[dict[str, Any]]:
    """Compress every prompt; one result row each (the aware reference first per sample)."""
    counter = minilm_token_counter()
    rows: list[dict[str, Any]] = []
    work = [(s, "aware", s.context) for s in samples] + layout_prompts(samples, per_row, seed=seed)
    for number, (sample, layout, prompt) in enumerate(work, 1):
        question = sample.question if layout == "aware" else None
        started = time.perf_counter()
        result = compressor.compress(prompt, question=question, rate=rate, token_counter=counter)
        seconds = time.perf_counter() - started
        kept = _unescaped(result.compressed_prompt, layout)
        rows.append({"sample_id": sample.id, "source": str(result.task_source), "layout": layout,
                     "evidence_recall": evidence_recall(kept, sample.supporting_sentences, sample.context),
                     "found": layout == "aware" or request_covered(sample.question, result.task_description),
                     "over_budget": int(result.compressed_tokens > result.budget), "seconds": round(seconds, 3),
                     "task_description": result.task_description})
        if log is not None and number % 25 == 0:
            log(f"{number}/{len(work)} prompts")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = recall_parser("python -m benchmarks.layout_recall", __doc__, splits=("heldout-train", "dev"), per_row=4)
    args = parser.parse_args(argv)

    samples = recall_samples(args.qa, dev=args.split == "dev")[: args.limit]
    compressor = TPCCompressor.from_pretrained(args.checkpoint)
    rows = run(compressor, samples, per_row=args.per_row, rate=args.rate, seed=args.seed,
               log=lambda text: print(text, file=sys.stderr, flush=True))
    summary = {"split": args.split, "samples": len(samples), "rate": args.rate, "per_row": args.per_row,
               "checkpoint": args.checkpoint, "command": " ".join(["python -m benchmarks.layout_recall",
                                                                   *(argv if argv is not None else sys.argv[1:])]),
               **summarise_layouts(rows)}
    write_recall_run(args.out, rows, summary, _markdown(summary, f"Layout recall, {args.split}, rate {args.rate}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
