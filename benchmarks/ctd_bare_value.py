"""Is the CTD's description worth its cost on bare documents? The lead correction with and without it.

Usage:
    python -m benchmarks.ctd_bare_value --set qa --split train --limit 60 --out benchmarks/results/ctd_bare/train
    python -m benchmarks.ctd_bare_value --set qa --split dev --out benchmarks/results/ctd_bare/dev
    python -m benchmarks.ctd_bare_value --set summ --split train --limit 30 --out benchmarks/results/ctd_bare/train
    python -m benchmarks.ctd_bare_value --set summ --split dev --limit 40 --out benchmarks/results/ctd_bare/dev

A bare document (no question, no written request) is compressed twice by tpc-mini through the benchmark protocol
(:func:`evaluation.evaluate.evaluate`: MiniLM token counts, ``budget = rate x origin``, a sqlite cache so an
interrupted run resumes where it stopped): with ``describe_bare=True`` (the CTD writes a description, which the task
finder uses — generated / matched / extracted — or throws away: fallback) and with ``describe_bare=False`` (the
fallback task at once: the lead correction alone). The same budget both ways.

``--set qa``: the index-time protocol (:mod:`evaluation.index`): every distinct qa_dev context alone at
``--rate`` (default 0.5), each question then scored by evidence recall on its context's compressed text. ``--split
train`` takes the held-out train rows (:data:`data_access.paths.HELDOUT_IDS`), never dev; ``dev`` the dev rows.
``--set summ``: summary sources compressed bare (the documents alone, no instruction) at ``--rate`` (default 0.2),
ROUGE-1/2 recall of the reference summary: ``dev`` = summ_dev (LongBench multi_news), ``train`` = summ_train's
Multi-News rows in original case, untruncated (none of them in summ_dev), joined as LongBench joins its passages.
``--limit N`` keeps N contexts (round-robin over sources for qa, evenly spaced for summ).

Writes ``ctd_bare_{set}.md`` (overall, by the task source the CTD run reached, by data source) and
``ctd_bare_{set}.json`` (every record) to ``--out``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from data_access.loaders import Sample, load_summ_dev, recall_samples
from data_access.paths import data_file
from evaluation.budget import minilm_token_counter
from evaluation.cache import JsonCache
from evaluation.evaluate import evaluate
from evaluation.index import BARE_TEMPLATE, index_contexts
from evaluation.methods.base import AGNOSTIC
from evaluation.methods.tpc import DEFAULT_TPC_MODEL, TPCMethod
from evaluation.metrics import evidence_recall, rouge_n_recall
from evaluation.summ import evenly_spaced

ROOT = Path(__file__).resolve().parents[1]
WITH = "lead+ctd"
WITHOUT = "lead"
USED = ("generated", "matched", "extracted")  # a description the finder kept (fallback: thrown away)


def round_robin_contexts(contexts: Sequence[Sample], limit: int | None) -> list[Sample]:
    """The first ``limit`` contexts taken in turn from each source (all when ``limit`` is None), in file order."""
    if limit is None or limit >= len(contexts):
        return list(contexts)
    queues: dict[str, list[Sample]] = defaultdict(list)
    for context in contexts:
        queues[context.source].append(context)
    taken: list[Sample] = []
    while len(taken) < limit:
        for queue in queues.values():
            if queue and len(taken) < limit:
                taken.append(queue.pop(0))
    return taken


def qa_inputs(split: str, limit: int | None, order: str = "sources",
              ) -> tuple[list[Sample], list[Sample], dict[str, str]]:
    """The bare contexts, the questions asked about them (with evidence), and question id -> context id.

    ``order``: ``"sources"`` takes the first ``limit`` contexts in turn from each source, ``"file"`` the first
    ``limit`` in file order (what an interrupted run computed first)."""
    questions = recall_samples(None, dev=split == "dev")
    contexts, context_of = index_contexts(questions)
    kept = round_robin_contexts(contexts, limit) if order == "sources" else contexts[:limit]
    ids = {context.id for context in kept}
    return kept, [q for q in questions if context_of[q.id] in ids], context_of


def summ_train_samples() -> list[Sample]:
    """summ_train's Multi-News rows in original case and untruncated, as bare LongBench-style passages."""
    samples = []
    with gzip.open(data_file("summ_train.jsonl.gz"), "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    for row in rows:
        meta = row["meta"]
        if meta.get("dataset") != "multi_news" or meta.get("lowercased") or meta.get("truncated"):
            continue
        context = "\n\n".join(f"Passage {k}:\n{document.strip()}" for k, document in enumerate(row["documents"], 1))
        samples.append(Sample(id=row["id"], dataset="summ_train", source="multi_news", context=context, question="",
                              answers=(row["summary"],), template=BARE_TEMPLATE, metric="rouge", max_new_tokens=0))
    return samples


def summ_inputs(split: str, limit: int | None) -> list[Sample]:
    """Bare summary sources: summ_dev's contexts without their instruction, or summ_train's Multi-News rows."""
    if split == "dev":
        samples = [replace(s, template=BARE_TEMPLATE, question="") for s in load_summ_dev()]
    else:
        samples = summ_train_samples()
    return evenly_spaced(samples, limit)


def _methods(model: str) -> dict[str, TPCMethod]:
    counter = minilm_token_counter()
    return {WITH: TPCMethod(counter, aware=False, model=model, label=WITH, describe_bare=True),
            WITHOUT: TPCMethod(counter, aware=False, model=model, label=WITHOUT, describe_bare=False)}


def _by_context(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Mapping[str, Any]]]:
    table: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for record in records:
        table[record["sample_id"]][record["method"]] = record
    return table


def _pair(record_with: Mapping[str, Any], record_without: Mapping[str, Any]) -> dict[str, Any]:
    return {"task_source": (record_with.get("info") or {}).get("task_source", "?"),
            "description": (record_with.get("info") or {}).get("task_description"),
            "same_text": record_with.get("prompt") == record_without.get("prompt"),
            "over_budget": bool(record_with.get("over_budget")) or bool(record_without.get("over_budget")),
            "seconds": {WITH: record_with.get("seconds"), WITHOUT: record_without.get("seconds")}}


def qa_rows(records: Sequence[Mapping[str, Any]], questions: Sequence[Sample],
            context_of: Mapping[str, str]) -> list[dict[str, Any]]:
    """One row per question: evidence recall with and without the description, and its context's task source."""
    table = _by_context(records)
    rows = []
    for question in questions:
        pair = table.get(context_of[question.id], {})
        if WITH not in pair or WITHOUT not in pair or "prompt" not in pair[WITH] or "prompt" not in pair[WITHOUT]:
            continue
        scores = {label: evidence_recall(pair[label]["prompt"], question.supporting_sentences, question.context)
                  for label in (WITH, WITHOUT)}
        if scores[WITH] is None or scores[WITHOUT] is None:
            continue
        rows.append({"id": question.id, "context_id": context_of[question.id], "source": question.source,
                     "metric": scores, **_pair(pair[WITH], pair[WITHOUT])})
    return rows


def summ_rows(records: Sequence[Mapping[str, Any]], samples: Sequence[Sample]) -> list[dict[str, Any]]:
    """One row per document set: ROUGE-1 and ROUGE-2 recall of its reference, with and without the description."""
    table = _by_context(records)
    rows = []
    for sample in samples:
        pair = table.get(sample.id, {})
        if WITH not in pair or WITHOUT not in pair or "prompt" not in pair[WITH] or "prompt" not in pair[WITHOUT]:
            continue
        scores = {label: [rouge_n_recall(pair[label]["prompt"], sample.answers[0], n) for n in (1, 2)]
                  for label in (WITH, WITHOUT)}
        rows.append({"id": sample.id, "context_id": sample.id, "source": sample.source, "metric": scores,
                     **_pair(pair[WITH], pair[WITHOUT])})
    return rows


def _mean(values: Sequence[float]) -> str:
    return f"{statistics.mean(values):.3f}" if values else "—"


def _cell(rows: Sequence[Mapping[str, Any]], label: str) -> str:
    first = [row["metric"][label] if not isinstance(row["metric"][label], list) else row["metric"][label][0]
             for row in rows]
    if rows and isinstance(rows[0]["metric"][label], list):
        return f"{_mean(first)} / {_mean([row['metric'][label][1] for row in rows])}"
    return _mean(first)


def _groups(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups["all"].append(row)
        used = row["task_source"] in USED
        groups["description used (generated / matched / extracted)" if used else "description thrown away "
               "(fallback)"].append(row)
        groups[f"task source with the CTD: {row['task_source']}"].append(row)
        groups[f"data: {row['source']}"].append(row)
    return groups


def _seconds(rows: Sequence[Mapping[str, Any]], label: str) -> float:
    per_context = {row["context_id"]: row["seconds"][label] for row in rows if row["seconds"][label] is not None}
    return statistics.mean(per_context.values()) if per_context else float("nan")


def table(rows: Sequence[Mapping[str, Any]], heading: str, metric: str) -> str:
    """The markdown report: one line per group (questions or documents, contexts, both scores, same text)."""
    lines = [heading, "", f"| group | rows | contexts | {metric}, lead + CTD description (`describe_bare=True`) | "
             f"lead alone (`describe_bare=False`) | difference | same kept text |", "|---|---|---|---|---|---|---|"]
    for name, group in _groups(rows).items():
        contexts = len({row["context_id"] for row in group})
        diff = [_first(row, WITH) - _first(row, WITHOUT) for row in group]
        lines.append(f"| {name} | {len(group)} | {contexts} | {_cell(group, WITH)} | {_cell(group, WITHOUT)} | "
                     f"{statistics.mean(diff):+.3f} | {sum(row['same_text'] for row in group)} |")
    lines += ["", f"Seconds per context (one process, shared 2-core CPU, load {os.getloadavg()[0]:.1f} at the end): "
              f"{_seconds(rows, WITH):.2f} with the CTD, {_seconds(rows, WITHOUT):.2f} without. Over budget: "
              f"{sum(row['over_budget'] for row in rows)}."]
    return "\n".join(lines) + "\n"


def _first(row: Mapping[str, Any], label: str) -> float:
    value = row["metric"][label]
    return float(value[0] if isinstance(value, list) else value)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--set", choices=("qa", "summ"), default="qa")
    parser.add_argument("--split", choices=("train", "dev"), default="train")
    parser.add_argument("--limit", type=int, default=None, help="at most N contexts")
    parser.add_argument("--order", choices=("sources", "file"), default="sources",
                        help="qa: --limit takes contexts in turn from each source, or the first in file order")
    parser.add_argument("--rate", type=float, default=None, help="default 0.5 (qa), 0.2 (summ)")
    parser.add_argument("--model", default=DEFAULT_TPC_MODEL)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "ctd_bare")
    parser.add_argument("--cache", type=Path, default=None, help="sqlite cache (default OUT/cache.sqlite)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    rate = args.rate if args.rate is not None else (0.5 if args.set == "qa" else 0.2)
    cache = JsonCache(args.cache or args.out / "cache.sqlite")
    counter = minilm_token_counter()
    started = time.perf_counter()
    if args.set == "qa":
        contexts, questions, context_of = qa_inputs(args.split, args.limit, args.order)
        records, _ = evaluate(contexts, _methods(args.model), counter, rate=rate, settings=(AGNOSTIC,), cache=cache,
                              keep_prompts=True)
        rows = qa_rows(records, questions, context_of)
        metric = "evidence recall"
        what = f"qa_dev {args.split} ({'held-out train rows' if args.split == 'train' else 'dev rows'})"
    else:
        contexts = summ_inputs(args.split, args.limit)
        records, _ = evaluate(contexts, _methods(args.model), counter, rate=rate, settings=(AGNOSTIC,), cache=cache,
                              keep_prompts=True)
        rows = summ_rows(records, contexts)
        metric = "ROUGE-1 / ROUGE-2 recall"
        what = "summ_dev (multi_news)" if args.split == "dev" else "summ_train Multi-News (original case)"
    heading = (f"## Bare documents, {what}: {len(contexts)} contexts compressed alone at rate {rate} (MiniLM tokens), "
               f"{args.model}, describe_bare on vs off")
    report = table(rows, heading, metric)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"ctd_bare_{args.set}.md").write_text(report, encoding="utf-8")
    (args.out / f"ctd_bare_{args.set}.json").write_text(json.dumps(
        {"set": args.set, "split": args.split, "rate": rate, "contexts": len(contexts), "limit": args.limit,
         "model": args.model, "seconds": time.perf_counter() - started,
         "command": "python -m benchmarks.ctd_bare_value " + " ".join(argv if argv is not None else sys.argv[1:]),
         "rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
