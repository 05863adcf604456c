"""Prompt-agnostic compression of generated prompts (:mod:`synthesis`): evidence recall and
request found per component, seen against held-out parts, beside prompt-aware on the same prompts.

``python -m benchmarks.generated_recall --split train-heldout --per-row 1 --limit 30 --out DIR``

Each ``qa_dev`` row is written as ``--per-row`` generated prompts, alternately from seen parts only and with a
held-out part (``components="seen"`` / ``"held_out"``). Every prompt is compressed twice at the same rate with
the MiniLM token counter (the benchmark protocol of :mod:`benchmarks.layout_recall`: one budget for every
method): ``agnostic`` (no question) and ``aware`` (the row's question given). Reported for every part of every
axis, and for ``seen`` / ``held_out`` overall and per held-out part: evidence recall (the share of the row's
supporting sentences that the prompt holds and the output keeps verbatim), **request found** (the agnostic task
description keeps >= 80 % of the request's content words, :func:`tpc_core.engine.task.grounding.request_covered`),
where the task came from, and budget overruns. ``--split train-heldout`` uses the ``qa_dev`` train rows the CSE
and the request head never trained on (for choices); ``--split dev`` the dev rows (rarely).
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchmarks.harness.recall_runs import recall_parser, write_recall_run
from data_access.loaders import Sample, recall_samples
from evaluation.budget import minilm_token_counter
from evaluation.metrics import evidence_recall
from synthesis import Generated, generate
from tpc_core import TPCCompressor
from tpc_core.engine.task.grounding import request_covered

__all__ = ["REPORTED_AXES", "generated_prompts", "main", "run", "summarise", "unescaped"]

#: The axes reported part by part.
REPORTED_AXES: tuple[str, ...] = ("shell_family", "shell", "position", "request_style", "vocabulary", "instructions",
                                  "material_questions", "distractor_place", "length", "labelled")


def _row(sample: Sample) -> dict[str, Any]:
    return {"id": sample.id, "question": sample.question, "answers": list(sample.answers), "context": sample.context,
            "supporting_sentences": list(sample.supporting_sentences), "meta": dict(sample.meta),
            "source": sample.source}


def generated_prompts(samples: Sequence[Sample], per_row: int, *, seed: int) -> list[tuple[Sample, Generated]]:
    """Each sample as ``per_row`` generated prompts, alternately seen-only and with a held-out part."""
    rows = [_row(s) for s in samples]
    prompts = []
    for number, (sample, row) in enumerate(zip(samples, rows)):
        for step in range(per_row):
            mode = ("seen", "held_out")[(number * per_row + step) % 2]
            prompts.append((sample, generate(row, seed=seed, index=step, components=mode, pool=rows)))
    return prompts


def unescaped(text: str, escaped: bool) -> str:
    """Compressed text of a prompt whose material is JSON-escaped, with its quotes and line breaks restored."""
    return text.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\") if escaped else text


def run(compressor: Any, samples: Sequence[Sample], *, per_row: int, rate: float, seed: int,
        log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Compress every generated prompt prompt-agnostic and prompt-aware; one result row per prompt."""
    counter = minilm_token_counter()
    rows: list[dict[str, Any]] = []
    work = generated_prompts(samples, per_row, seed=seed)
    for number, (sample, generated) in enumerate(work, 1):
        row: dict[str, Any] = {"sample_id": sample.id, "source": sample.source,
                               "components": dict(generated.components),
                               "request": generated.request, "prompt_tokens": counter(generated.prompt)}
        for setting, question in (("agnostic", None), ("aware", sample.question)):
            started = time.perf_counter()
            result = compressor.compress(generated.prompt, question=question, rate=rate, token_counter=counter)
            kept = unescaped(result.compressed_prompt, generated.material_escaped)
            row[setting] = {"evidence_recall": evidence_recall(kept, sample.supporting_sentences, generated.material),
                            "over_budget": int(result.compressed_tokens > result.budget),
                            "seconds": round(time.perf_counter() - started, 3)}
            if question is None:
                row[setting].update(source=str(result.task_source), task_description=result.task_description,
                                    found=request_covered(generated.request, result.task_description))
        rows.append(row)
        if log is not None and number % 10 == 0:
            log(f"{number}/{len(work)} prompts")
    return rows


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


def _group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    agnostic = [r["agnostic"]["evidence_recall"] for r in rows]
    return {"prompts": len(rows), "recall_samples": sum(v is not None for v in agnostic),
            "agnostic": _mean(agnostic), "aware": _mean([r["aware"]["evidence_recall"] for r in rows]),
            "request_found": _mean([float(r["agnostic"]["found"]) for r in rows]),
            "sources": dict(sorted(Counter(r["agnostic"]["source"] for r in rows).items())),
            "over_budget": sum(r["agnostic"]["over_budget"] + r["aware"]["over_budget"] for r in rows)}


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Overall, seen against held-out (and per held-out part), and per part of every :data:`REPORTED_AXES` axis."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        held = row["components"]["held_out"]
        groups["all"].append(row)
        groups["held_out" if held else "seen"].append(row)
        for part in filter(None, held.split(",")):
            groups[f"held_out:{part}"].append(row)
    axes: dict[str, dict[str, Any]] = {}
    for axis in REPORTED_AXES:
        parts: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for row in rows:
            parts[str(row["components"].get(axis, ""))].append(row)
        axes[axis] = {part: _group(items) for part, items in sorted(parts.items())}
    return {"groups": {name: _group(items) for name, items in sorted(groups.items())}, "axes": axes}


def _markdown(summary: Mapping[str, Any], title: str) -> str:
    header = ["| {} | prompts | agnostic recall | aware recall | request found | sources | over budget |",
              "|---|---|---|---|---|---|---|"]

    def line(name: str, row: Mapping[str, Any]) -> str:
        sources = ", ".join(f"{k} {v}" for k, v in row["sources"].items())
        return (f"| {name} | {row['prompts']} | {row['agnostic']} | {row['aware']} | {row['request_found']} | "
                f"{sources} | {row['over_budget']} |")

    lines = [f"## {title}", "", header[0].format("group"), header[1]]
    lines += [line(name, row) for name, row in summary["groups"].items()]
    for axis, parts in summary["axes"].items():
        lines += ["", header[0].format(axis), header[1], *(line(part, row) for part, row in parts.items())]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = recall_parser("python -m benchmarks.generated_recall", __doc__, splits=("train-heldout", "dev"),
                           per_row=2)
    args = parser.parse_args(argv)

    samples = [s for s in recall_samples(args.qa, dev=args.split == "dev")
               if not s.question.lstrip().startswith("Key:")]
    samples = samples[: args.limit]
    started = time.perf_counter()
    load_before = os.getloadavg()
    compressor = TPCCompressor.from_pretrained(args.checkpoint)
    rows = run(compressor, samples, per_row=args.per_row, rate=args.rate, seed=args.seed,
               log=lambda text: print(text, file=sys.stderr, flush=True))
    summary = {"split": args.split, "samples": len(samples), "prompts": len(rows), "rate": args.rate,
               "per_row": args.per_row, "checkpoint": args.checkpoint, "seconds": round(time.perf_counter() - started),
               "loadavg_before_after": [list(load_before), list(os.getloadavg())],
               "command": " ".join(["python -m benchmarks.generated_recall",
                                    *(argv if argv is not None else sys.argv[1:])]), **summarise(rows)}
    title = f"Generated-prompt recall, {args.split}, rate {args.rate}"
    write_recall_run(args.out, rows, summary, _markdown(summary, title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
