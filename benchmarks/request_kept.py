"""Is the user's request kept? Prompt-agnostic compression of real requests and stock templates, checked for the
request the prompt writes.

``python -m benchmarks.request_kept --set real --split train --out runs/eval/request_kept_real``
``python -m benchmarks.request_kept --set stock --split heldout-train --out runs/eval/request_kept_stock``
``python -m benchmarks.request_kept --set bare --split train --out runs/eval/request_kept_bare``
``python -m benchmarks.request_kept --set generated --documents 60 --per-document 3 --out runs/eval/request_kept_gen``

- ``real``: requests written by people (``real_requests``: L-Eval questions and instructions over long documents),
  each placed in the everyday shapes of :data:`benchmarks.harness.stock_templates.EVERYDAY_SHAPES`;
- ``stock``: ``qa_dev`` rows in the frameworks' stock templates
  (:data:`~benchmarks.harness.stock_templates.STOCK_TEMPLATES`), with evidence recall against prompt-aware
  compression of the same prompt at the same budget;
- ``bare``: the ``real_requests`` documents alone (prompts that ask nothing);
- ``generated``: prompts of the open-ended layout generator (``synthesis.generator``) over the held-out ``qa_dev``
  train rows, with held-out parts (``--components``); every labelled request span must be kept.

Every prompt goes through ``TPCCompressor.compress(prompt, rate=...)`` with no question, as a user calls it. Per
prompt: **kept** (the request, exactly as the prompt writes it, is a substring of the compressed prompt),
**found** (at least 80 % of its content words are in the task description), **clean** (at least 80 % of the
description's content words come from the request), the task's source, and budget overruns (the result's own
``over_budget``). Reported per shape or template and per request kind. ``--split train`` (``real``, ``bare``) and
``heldout-train`` (``stock``) are for choices; ``dev`` is measured rarely. ``--words`` cuts each document at a
paragraph break after that many words (0: whole), so a check runs in minutes on two cores. Results are appended
to ``rows.jsonl`` as they come: a run that stops resumes where it stopped.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness.stock_templates import EVERYDAY_SHAPES, STOCK_TEMPLATES, fill
from data_access.loaders import default_qa_dev_path, read_jsonl, recall_samples
from data_access.paths import data_file
from evaluation.budget import minilm_token_counter
from evaluation.metrics import evidence_recall
from tpc_core import TPCCompressor
from tpc_core.engine.task.grounding import content_words, request_covered

__all__ = ["bare_prompts", "clean", "generated_prompts", "main", "real_prompts", "request_kind", "stock_prompts",
           "summarise"]

_QUESTION_START = re.compile(r"^(?:what|who|whom|whose|when|where|which|why|how|is|are|was|were|do|does|did|can|"
                             r"could|should|would|will|has|have)\b", re.IGNORECASE)


def request_kind(task: str, request: str) -> str:
    """The kind of a real request: ``few_shot`` (a question after solved examples), ``question`` or
    ``imperative``."""
    if task == "gsm100":
        return "few_shot"
    first = request.strip().splitlines()[0] if request.strip() else ""
    return "question" if first.rstrip().endswith("?") or _QUESTION_START.match(first) else "imperative"


def cut_words(text: str, words: int) -> str:
    """``text`` cut at the first paragraph (else line) break after ``words`` words; 0 keeps it whole."""
    if words <= 0 or len(text.split()) <= words:
        return text
    count = 0
    for match in re.finditer(r"\S+", text):
        count += 1
        if count >= words:
            rest = text[match.end():]
            stop = rest.find("\n\n")
            stop = rest.find("\n") if stop < 0 or stop > 4000 else stop
            return text[: match.end() + (stop if stop >= 0 else len(rest))].rstrip()
    return text


def _real_rows(split: str) -> list[dict[str, Any]]:
    path = data_file("real_requests.jsonl.gz", "TPC_REAL_REQUESTS")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [row for row in map(json.loads, handle) if row["split"] == split]


def real_prompts(split: str, *, documents: int, per_document: int, words: int, seed: int) -> list[dict[str, Any]]:
    """Real requests in every everyday shape: ``documents`` documents (spread over the tasks), ``per_document``
    requests each."""
    rng = random.Random(seed)
    rows = _real_rows(split)
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_task[row["meta"]["task"]].append(row)
    for group in by_task.values():
        rng.shuffle(group)
    picked: list[dict[str, Any]] = []
    while len(picked) < documents and any(by_task.values()):
        for task in sorted(by_task):
            if by_task[task] and len(picked) < documents:
                picked.append(by_task[task].pop())
    prompts = []
    for row in picked:
        context = cut_words(row["context"], words)
        for number in rng.sample(range(len(row["requests"])), min(per_document, len(row["requests"]))):
            request = row["requests"][number].strip()
            for shape, template in EVERYDAY_SHAPES.items():
                prompt, written = fill(template, context, request)
                prompts.append({"id": f"{row['id']}/{number}/{shape}", "prompt": prompt, "request": written,
                                "group": shape, "kind": request_kind(row["meta"]["task"], request)})
    return prompts


def bare_prompts(split: str, *, documents: int, words: int, seed: int) -> list[dict[str, Any]]:
    """The real documents alone: prompts that ask nothing."""
    rows = _real_rows(split)
    random.Random(seed).shuffle(rows)
    return [{"id": row["id"], "prompt": cut_words(row["context"], words), "request": "", "group": row["meta"]["task"],
             "kind": "bare"} for row in rows[:documents]]


def stock_prompts(split: str, *, rows: int, words: int, seed: int) -> list[dict[str, Any]]:
    """``qa_dev`` rows (key-value rows left out) in every stock template, with their gold evidence."""
    samples = [s for s in recall_samples(None, dev=split == "dev") if s.meta.get("task_type") != "synthetic"]
    random.Random(seed).shuffle(samples)
    prompts = []
    for sample in samples[:rows]:
        context = cut_words(sample.context, words)
        for name, template in STOCK_TEMPLATES.items():
            prompt, written = fill(template, context, sample.question.strip())
            prompts.append({"id": f"{sample.id}/{name}", "prompt": prompt, "request": written, "group": name,
                            "kind": "question", "evidence": list(sample.supporting_sentences),
                            "question": sample.question.strip()})
    return prompts


def generated_prompts(*, rows: int, per_row: int, components: str, seed: int) -> list[dict[str, Any]]:
    """Prompts of the open-ended generator (:func:`synthesis.generator.generate`) over the held-out ``qa_dev`` train
    rows (the head never trained on them): ``group`` is the shell, ``kind`` the request style; ``requests`` are
    the texts of the labelled request spans, each of which must be kept."""
    from synthesis.generator import generate

    samples = recall_samples(None, dev=False)
    held = {s.id for s in samples}
    source = [row for row in read_jsonl(default_qa_dev_path())
              if str(row["id"]) in held and row.get("task_type") != "synthetic"]  # the generator writes questions
    random.Random(seed).shuffle(source)
    prompts = []
    for row in source[:rows]:
        for index in range(per_row):
            made = generate(row, seed=seed, index=index, components=components)  # type: ignore[arg-type]
            pieces = [made.prompt[a:b] for a, b in made.request_spans] if made.kind == "request" else []
            prompts.append({"id": f"{row['id']}/{index}", "prompt": made.prompt, "request": made.request if pieces
                            else "", "requests": pieces, "group": made.components.get("shell", "?"),
                            "kind": made.components.get("request_style", made.kind)})
    return prompts


def clean(request: str, description: str | None) -> bool:
    """Whether at least 80 % of the description's distinct content words come from the request."""
    words = set(content_words(description or ""))
    return not words or len(words & set(content_words(request))) >= 0.8 * len(words)


def measure(compressor: TPCCompressor, record: Mapping[str, Any], *, rate: float, counter: Any,
            aware: bool) -> dict[str, Any]:
    """One prompt compressed with no question (and, with ``aware``, with its question at the same budget)."""
    start = time.perf_counter()
    result = compressor.compress(record["prompt"], rate=rate, token_counter=counter)
    seconds = time.perf_counter() - start
    request = record["request"]
    pieces = record.get("requests") or ([request] if request else [])
    row = {"id": record["id"], "group": record["group"], "kind": record["kind"], "source": str(result.task_source),
           "kept": bool(pieces) and all(piece in result.compressed_prompt for piece in pieces),
           "found": bool(request) and request_covered(request, result.task_description),
           "clean": bool(request) and clean(request, result.task_description),
           "over_budget": result.compressed_tokens > result.budget, "seconds": round(seconds, 3),
           "description": (result.task_description or "")[:300]}
    if record.get("evidence"):
        row["recall"] = evidence_recall(result.compressed_prompt, record["evidence"], record["prompt"])
        if aware:
            given = compressor.compress(record["prompt"], question=record["question"], rate=rate,
                                        token_counter=counter)
            row["recall_aware"] = evidence_recall(given.compressed_prompt, record["evidence"], record["prompt"])
    return row


def _mean(values: Iterable[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 3) if values else None


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Shares per group (shape or template), per kind and overall."""
    def block(members: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        sources: dict[str, int] = defaultdict(int)
        for row in members:
            sources[row["source"]] += 1
        return {"n": len(members), "kept": _mean(float(r["kept"]) for r in members),
                "found": _mean(float(r["found"]) for r in members), "clean": _mean(float(r["clean"]) for r in members),
                "recall": _mean(r.get("recall") for r in members),
                "recall_aware": _mean(r.get("recall_aware") for r in members),
                "over_budget": sum(bool(r["over_budget"]) for r in members), "sources": dict(sorted(sources.items())),
                "seconds": _mean(r["seconds"] for r in members)}

    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    kinds: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["group"]].append(row)
        kinds[row["kind"]].append(row)
    return {"all": block(rows), "groups": {k: block(v) for k, v in sorted(groups.items())},
            "kinds": {k: block(v) for k, v in sorted(kinds.items())}}


def _table(title: str, blocks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    lines = [f"### {title}", "", "| | n | kept | found | clean | recall | aware | over | sources |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, b in blocks.items():
        sources = ", ".join(f"{k} {v}" for k, v in b["sources"].items())
        lines.append(f"| {name} | {b['n']} | {b['kept']} | {b['found']} | {b['clean']} | {b['recall']} | "
                     f"{b['recall_aware']} | {b['over_budget']} | {sources} |")
    return [*lines, ""]


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.request_kept", description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("real", "stock", "bare", "generated"), required=True)
    parser.add_argument("--components", default="held_out", help="generated: all | seen | held_out")
    parser.add_argument("--split", choices=("train", "heldout-train", "dev"), default="train")
    parser.add_argument("--checkpoint", default="tpc-mini")
    parser.add_argument("--documents", type=int, default=40, help="real / bare: documents (stock: rows)")
    parser.add_argument("--per-document", type=int, default=1)
    parser.add_argument("--words", type=int, default=1500, help="cut each document after this many words (0: whole)")
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--aware", action="store_true", help="stock: also compress with the question given")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    split = "train" if args.split == "heldout-train" and args.set != "stock" else args.split
    if args.set == "real":
        records = real_prompts(split, documents=args.documents, per_document=args.per_document, words=args.words,
                               seed=args.seed)
    elif args.set == "bare":
        records = bare_prompts(split, documents=args.documents, words=args.words, seed=args.seed)
    elif args.set == "generated":
        records = [r for r in generated_prompts(rows=args.documents, per_row=args.per_document,
                                                components=args.components, seed=args.seed) if r["requests"]]
    else:
        records = stock_prompts(args.split, rows=args.documents, words=args.words, seed=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / "rows.jsonl"
    done = {json.loads(line)["id"]: json.loads(line) for line in rows_path.read_text().splitlines()} \
        if rows_path.exists() else {}
    compressor = TPCCompressor.from_pretrained(args.checkpoint)
    counter = minilm_token_counter()
    with rows_path.open("a", encoding="utf-8") as handle:
        for number, record in enumerate(records, 1):
            if record["id"] in done:
                continue
            row = measure(compressor, record, rate=args.rate, counter=counter, aware=args.aware)
            done[row["id"]] = row
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            if number % 20 == 0:
                print(f"{number}/{len(records)}", file=sys.stderr, flush=True)
    rows = [done[record["id"]] for record in records]
    summary = summarise(rows)
    summary["args"] = vars(args)
    (out / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    report = [f"# request_kept --set {args.set} --split {args.split} (rate {args.rate}, {args.words} words)", "",
              *_table("all", {"all": summary["all"]}), *_table("per shape / template", summary["groups"]),
              *_table("per kind", summary["kinds"])]
    (out / "report.md").write_text("\n".join(report), encoding="utf-8")
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
