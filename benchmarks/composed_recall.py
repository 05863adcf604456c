"""Prompt-agnostic compression of QA rows written in composed layouts (:mod:`synthesis.composed`), per family.

``python -m benchmarks.composed_recall --split heldout-train --families held-out --per-family 3 --out DIR``

Every row's question is written over its context in a family of composed layouts, and the prompt is compressed
twice at one budget (the same prompt, rate and MiniLM token counter): with no question, and with its question
given (``aware``, the reference). Per prompt: **kept** (the question, exactly as written, is in the compressed
prompt), **found** (the task description holds at least 80 % of the question's content words), evidence recall
of both, the share of the budget spent on the sentences pinned for the request, and the share spent on questions
proposed inside the material (``find_request``'s ``material`` spans that are kept). Reported per family and per
value of each factor.

``--families chosen`` measures the families choices may look at; ``held-out`` the families held out of every
choice (:func:`synthesis.composed.held_out_family`: none of them a family a former choice read).
``--split heldout-train`` reads the ``qa_dev`` train rows the CSE and the request head never trained on; ``dev``
the dev rows (once, for the report). Rows of key-value lookups and contexts over ``--max-words`` are skipped.
``rows.jsonl`` is appended as prompts are done: a run that stops resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.protocol.budget import minilm_token_counter
from benchmarks.protocol.metrics import evidence_recall
from data_access.loaders import Sample, recall_samples
from synthesis.composed import Family, compose, families, held_out_family
from synthesis.layouts import written_question
from tpc_core import TPCCompressor
from tpc_core.engine.task.grounding import request_covered

__all__ = ["main", "plan", "summarise"]


def plan(samples: Sequence[Sample], chosen: Sequence[Family], per_family: int,
         seed: int) -> list[tuple[Sample, Family, str, str]]:
    """``(sample, family, prompt, question as written)``: each family over ``per_family`` rows, dealt round the
    samples so every row serves as many families."""
    work = []
    position = 0
    for family in chosen:
        for _ in range(per_family):
            sample = samples[position % len(samples)]
            position += 1
            rng = random.Random(f"{seed}:{sample.id}:{family.name}")
            composed = compose(family, written_question(sample.question), sample.context, rng)
            work.append((sample, family, composed.prompt, composed.question))
    return work


def _row(compressor: TPCCompressor, sample: Sample, family: str, prompt: str, question: str | None, written: str,
         rate: float, counter: Any) -> dict[str, Any]:
    started = time.perf_counter()
    result = compressor.compress(prompt, question=question, rate=rate, token_counter=counter)
    seconds = time.perf_counter() - started
    aware = compressor.compress(prompt, question=sample.question, rate=rate, token_counter=counter)
    assert aware.budget == result.budget  # one budget for both methods: the same prompt, rate and counter
    found = compressor.find_request(prompt) if question is None else None
    kept = {(s.start, s.end) for s in result.sentences if s.kept}
    tokens = {(s.start, s.end): s.tokens for s in result.sentences}
    pinned = set(found.kept) & kept if found is not None else set()
    material = set(found.material) & kept if found is not None else set()
    budget = result.budget or 1
    return {"sample_id": sample.id, "family": family, "source": str(result.task_source),
            "evidence_recall": evidence_recall(result.compressed_prompt, sample.supporting_sentences, sample.context),
            "aware_recall": evidence_recall(aware.compressed_prompt, sample.supporting_sentences, sample.context),
            "kept": question is not None or written in result.compressed_prompt,
            "found": question is not None or request_covered(written, result.task_description),
            "pinned_share": round(sum(tokens[span] for span in pinned) / budget, 4),
            "material_share": round(sum(tokens[span] for span in material) / budget, 4),
            "over_budget": int(result.over_budget > 0), "seconds": round(seconds, 3),
            "task_description": result.task_description}


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _group(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    recalls = [r["evidence_recall"] for r in rows if r["evidence_recall"] is not None]
    reference = [r["aware_recall"] for r in rows if r["evidence_recall"] is not None and r["aware_recall"] is not None]
    return {"prompts": len(rows), "kept": _mean([float(r["kept"]) for r in rows]),
            "found": _mean([float(r["found"]) for r in rows]), "recall": _mean(recalls),
            "aware_recall": _mean(reference), "pinned_share": _mean([r["pinned_share"] for r in rows]),
            "material_share": _mean([r.get("material_share", 0.0) for r in rows]),
            "material_share_max": max((r.get("material_share", 0.0) for r in rows), default=None),
            "fallback": sum(r["source"] != "extracted" for r in rows),
            "over_budget": sum(r["over_budget"] for r in rows)}


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per family and per factor value (``position=...``, ...), and over all, against ``aware`` on the same rows."""
    composed = list(rows)
    by_family: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    by_factor: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in composed:
        by_family[row["family"]].append(row)
        for name, value in zip(("position", "pointer", "label", "container"), row["family"].split("/")):
            by_factor[f"{name}={value}"].append(row)
    return {"overall": _group(composed),
            "factors": {key: _group(items) for key, items in sorted(by_factor.items())},
            "families": {key: _group(items) for key, items in sorted(by_family.items())}}


def _markdown(summary: Mapping[str, Any], title: str) -> str:
    lines = [f"## {title}", "", "| group | prompts | kept | found | recall | aware recall | pinned share of budget "
             "| mid-material share (mean / max) | not extracted | over budget |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    groups = [("**all**", summary["overall"]), *summary["factors"].items(), *summary["families"].items()]
    for name, g in groups:
        lines.append(f"| {name} | {g['prompts']} | {g['kept']} | {g['found']} | {g['recall']} | {g['aware_recall']} "
                     f"| {g['pinned_share']} | {g['material_share']} / {g['material_share_max']} | {g['fallback']} "
                     f"| {g['over_budget']} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.composed_recall", description=__doc__)
    parser.add_argument("--checkpoint", default="tpc-mini")
    parser.add_argument("--split", choices=("heldout-train", "dev"), default="heldout-train")
    parser.add_argument("--families", choices=("chosen", "held-out"), default="chosen")
    parser.add_argument("--qa", default=None)
    parser.add_argument("--per-family", type=int, default=3)
    parser.add_argument("--max-words", type=int, default=1500)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    samples = [s for s in recall_samples(args.qa, dev=args.split == "dev")
               if not s.question.startswith("Key:") and "kv_retrieval" not in s.source
               and len(s.context.split()) <= args.max_words]
    wanted = [f for f in families() if held_out_family(f) == (args.families == "held-out")]
    work = plan(samples, wanted, args.per_family, args.seed)
    compressor = TPCCompressor.from_pretrained(args.checkpoint)
    counter = minilm_token_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "rows.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    done = {(r["sample_id"], r["family"]) for r in rows}
    used = {sample.id: sample for sample, *_ in work}
    todo = [(s, f.name, prompt, None, written) for s, f, prompt, written in work]
    with path.open("a", encoding="utf-8") as handle:
        for number, (sample, family, prompt, _, written) in enumerate(todo, 1):
            if (sample.id, family) in done:
                continue
            row = _row(compressor, sample, family, prompt, None, written, args.rate, counter)
            rows.append(row)
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            if number % 20 == 0:
                print(f"{number}/{len(todo)}", file=sys.stderr, flush=True)
    summary = {"split": args.split, "families": args.families, "per_family": args.per_family, "rate": args.rate,
               "samples": len(used), "command": " ".join(["python -m benchmarks.composed_recall",
                                                         *(argv if argv is not None else sys.argv[1:])]),
               **summarise(rows)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    markdown = _markdown(summary, f"Composed layouts, {args.families} families, {args.split}, rate {args.rate}")
    (out / "summary.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
