"""The CTD training set in many prompt formats: the offline builder.

Every train row becomes one record in its own kind, in a template family of
:mod:`training.curation.format_families` (families dealt evenly within a kind; whole families are held out,
records with ``split = "validation"``), then more records per kind are made from the text pools. A NQ question
is used only inside one split. Every record carries the ``request_spans`` of its filled template.

Run ``python -m training.curation.formats --out runs/curation/ctd_formats [--seed 13] [--max-per-kind N]``
from the checkout: it writes ``ctd.jsonl`` and ``stats.json``, deterministically for a seed (the code
chunks come from the running Python's standard library). ``summ_dev.jsonl`` is never read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import statistics
import sys
import sysconfig
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from data_access.paths import data_file
from training.common.cli import start_cli
from training.curation.format_families import FAMILIES, FAMILIES_BY_KIND, HELD_OUT_FAMILIES, Template, split_of
from training.curation.format_tasks import (
    KINDS,
    FormatInputs,
    TaskItem,
    TextPools,
    bare_item,
    classification_item,
    code_item,
    extraction_item,
    few_shot_classification_item,
    few_shot_qa_item,
    load_format_inputs,
    nq_mcq_item,
    row_item,
    summarise_many_item,
    summarise_one_item,
    synthetic_kv_item,
    text_pools,
)

__all__ = ["EXTRA_RECORDS", "build_records", "dataset_stats", "make_record", "main", "write_dataset"]

logger = logging.getLogger("training.curation.formats")

# Records made beyond one per input row, by kind (``mcq``: NQ questions with four options; ``kv_lookup``:
# synthetic JSON objects; both come on top of the rows' own multiple-choice and key-value questions).
EXTRA_RECORDS: Mapping[str, int] = {
    "mcq": 250, "kv_lookup": 300, "few_shot_qa": 300, "field_extraction": 300, "summarise_one": 360,
    "summarise_many": 300, "classification": 300, "few_shot_classification": 240, "code_completion": 500,
    "bare_document": 400,
}


def build_records(inputs: FormatInputs, pools: TextPools, *, seed: int,
                  max_per_kind: int | None = None) -> list[dict[str, Any]]:
    """All records: every input row once in its own kind, then :data:`EXTRA_RECORDS` more per kind.

    Families are dealt evenly within a kind; rows asking the same question share one. The NQ questions
    reused by ``mcq``, ``few_shot_qa`` and ``few_shot_classification`` records are drawn from the rows whose
    own record has the same split, so a question never appears in both splits.

    Args:
        inputs: Train rows from :func:`~training.curation.format_tasks.load_format_inputs`.
        pools: Texts from :func:`~training.curation.format_tasks.text_pools`.
        seed: Seeds every random choice.
        max_per_kind: At most this many records per kind (rows first); ``None`` for all.
    """
    placed, row_split = _place_rows(inputs, seed, max_per_kind)
    nq_by_split = {split: [row for row in inputs.nq if row_split.get(str(row["id"])) == split]
                   for split in ("train", "validation")}
    makers = _extra_makers(pools, nq_by_split, seed)
    for kind, extra in EXTRA_RECORDS.items():
        if max_per_kind is not None:
            extra = min(extra, max_per_kind - sum(item.kind == kind for item, _ in placed))
        rng = _rng(seed, f"extra:{kind}")
        placed += [(makers[kind](split_of(family), rng), family)
                   for family in _deal(kind, extra, _rng(seed, f"extra-families:{kind}"))]
    numbers: Counter[str] = Counter()
    records = []
    for item, family in placed:
        numbers[item.kind] += 1
        record_id = f"fmt-{item.kind}-{numbers[item.kind]:05d}"
        records.append(_record(record_id, item, family, _rng(seed, f"render:{record_id}")))
    return records


def _place_rows(inputs: FormatInputs, seed: int,
                max_per_kind: int | None) -> tuple[list[tuple[TaskItem, str]], dict[str, str]]:
    """Every row's item with its family (capped per kind), and every row's split, capped away or not."""
    items_by_kind: dict[str, list[TaskItem]] = defaultdict(list)
    rows_rng = _rng(seed, "rows")
    for row in (*inputs.nq, *inputs.qa):
        item = row_item(row, rows_rng)
        items_by_kind[item.kind].append(item)
    placed: list[tuple[TaskItem, str]] = []
    row_split: dict[str, str] = {}
    for kind, items in items_by_kind.items():
        same_question: dict[str, list[TaskItem]] = defaultdict(list)  # AltQA asks one question of several texts
        for item in items:
            same_question[item.task_description].append(item)
        families = _deal(kind, len(same_question), _rng(seed, f"families:{kind}"))
        dealt = [(item, family) for group, family in zip(same_question.values(), families) for item in group]
        row_split.update((item.source_id, split_of(family)) for item, family in dealt)
        if max_per_kind is not None and len(dealt) > max_per_kind:
            dealt = [dealt[i] for i in sorted(_rng(seed, f"cap:{kind}").sample(range(len(dealt)), max_per_kind))]
        placed += dealt
    return placed, row_split


def _extra_makers(pools: TextPools, nq_by_split: Mapping[str, list[dict[str, Any]]],
                  seed: int) -> dict[str, Callable[[str, random.Random], TaskItem]]:
    """Per kind, a function of (split, rng) making one more item; NQ rows are drawn without replacement
    (until a split's rows run out, then again in a new order)."""
    draws = {(kind, split): _shuffled_cycle(rows, _rng(seed, f"draw:{kind}:{split}"))
             for kind in ("mcq", "few_shot_qa") for split, rows in nq_by_split.items()}
    return {
        "mcq": lambda split, rng: nq_mcq_item(next(draws["mcq", split]), nq_by_split[split], rng),
        "kv_lookup": lambda split, rng: synthetic_kv_item(rng),
        "few_shot_qa": lambda split, rng: few_shot_qa_item(next(draws["few_shot_qa", split]), nq_by_split[split], rng),
        "field_extraction": lambda split, rng: extraction_item(pools, rng),
        "summarise_one": lambda split, rng: summarise_one_item(pools, rng),
        "summarise_many": lambda split, rng: summarise_many_item(pools, rng),
        "classification": lambda split, rng: classification_item(pools, rng),
        "few_shot_classification": lambda split, rng: few_shot_classification_item(pools, nq_by_split[split], rng),
        "code_completion": lambda split, rng: code_item(pools, rng),
        "bare_document": lambda split, rng: bare_item(pools, rng),
    }


def _shuffled_cycle(rows: Sequence[dict[str, Any]], rng: random.Random) -> Iterator[dict[str, Any]]:
    if not rows:
        raise ValueError("no NQ rows in this split to draw questions from")
    while True:
        yield from rng.sample(list(rows), len(rows))


def _record(record_id: str, item: TaskItem, family: str, rng: random.Random) -> dict[str, Any]:
    return make_record(record_id, item, FAMILIES[family], split_of(family), rng)


def make_record(record_id: str, item: TaskItem, template: Template, split: str,
                rng: random.Random) -> dict[str, Any]:
    """One CTD record: ``item`` filled into ``template`` (phrasings drawn with ``rng``), with its request spans."""
    prompt, spans = template.fill(item.values, rng, item.shots)
    return {
        "id": record_id,
        "prompt": prompt,
        "task_description": item.task_description,
        "source": item.source,
        "family": template.name,
        "kind": item.kind,
        "split": split,
        "request_spans": [list(span) for span in spans],
        "source_id": item.source_id,
    }


def _deal(kind: str, count: int, rng: random.Random) -> list[str]:
    """``count`` family names for ``kind``, as evenly spread as possible, in random order."""
    names = FAMILIES_BY_KIND[kind]
    dealt = [names[i % len(names)] for i in range(count)]
    rng.shuffle(dealt)
    return dealt


def _rng(seed: int, purpose: str) -> random.Random:
    return random.Random(f"{seed}:{purpose}")  # str seeds hash with sha512: stable across runs and machines


def dataset_stats(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per split, kind and family, the share without request spans, and approximate prompt tokens
    (words x 4/3) per kind."""
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    by_family: dict[str, Counter[str]] = defaultdict(Counter)
    tokens: dict[str, list[int]] = defaultdict(list)
    for record in records:
        by_kind[record["kind"]][record["split"]] += 1
        by_family[record["family"]][record["kind"]] += 1
        tokens[record["kind"]].append(round(len(record["prompt"].split()) * 4 / 3))
    return {
        "records": len(records),
        "by_split": dict(sorted(Counter(r["split"] for r in records).items())),
        "by_kind": {k: dict(sorted(by_kind[k].items())) for k in KINDS if k in by_kind},
        "by_family": {
            name: {"split": split_of(name), "records": sum(c.values()), "kinds": dict(sorted(c.items()))}
            for name, c in sorted(by_family.items())
        },
        "without_request_spans": round(sum(not r["request_spans"] for r in records) / max(1, len(records)), 4),
        "approx_tokens": {
            k: {"min": min(t), "median": round(statistics.median(t)), "max": max(t)} for k, t in tokens.items()
        },
    }


def write_dataset(records: Sequence[Mapping[str, Any]], out_dir: str | Path,
                  extra_stats: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write ``ctd.jsonl`` and ``stats.json`` (with ``sha256_16`` of the JSONL) to ``out_dir``; return the stats."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode("utf-8")
    (out / "ctd.jsonl").write_bytes(data)
    stats = {"sha256_16": hashlib.sha256(data).hexdigest()[:16], **dataset_stats(records), **(extra_stats or {})}
    (out / "stats.json").write_text(json.dumps(stats, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m training.curation.formats --out DIR [--seed 13] [--max-per-kind N]``."""
    parser = argparse.ArgumentParser(prog="python -m training.curation.formats", description=(
        "Build the CTD training set in many prompt formats from real train data, offline (no LLM)."))
    parser.add_argument("--out", required=True, type=Path, help="output directory (ctd.jsonl, stats.json)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-per-kind", type=int, default=None, help="at most N records per kind (quick runs)")
    parser.add_argument("--nq", type=Path, default=data_file("nq_train.jsonl.gz"))
    parser.add_argument("--qa", type=Path, default=data_file("qa_dev.jsonl"),
                        help="QA rows; only split=train rows without dev-context overlap are used")
    parser.add_argument("--stdlib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]),
                        help="Python files for code completion (default: this Python's standard library)")
    args = parser.parse_args(argv)
    start_cli()
    for path in (args.nq, args.qa, args.stdlib):
        if not path.exists():
            parser.error(f"{path} does not exist")
    if args.max_per_kind is not None and args.max_per_kind < 1:
        parser.error("--max-per-kind must be at least 1")
    inputs = load_format_inputs(args.nq, args.qa)
    pools = text_pools(inputs, args.stdlib)
    records = build_records(inputs, pools, seed=args.seed, max_per_kind=args.max_per_kind)
    stats = write_dataset(records, args.out, {
        "seed": args.seed,
        "max_per_kind": args.max_per_kind,
        "inputs": {"nq_rows": len(inputs.nq), "qa_rows": len(inputs.qa), "skipped": dict(inputs.skipped),
                   "code_files": len(pools.code_files), "python": sys.version.split()[0]},
        "held_out_families": sorted(HELD_OUT_FAMILIES),
    })
    logger.info("%d records (%s), %.1f%% without request spans, sha256[:16] %s -> %s", stats["records"],
                stats["by_split"], 100 * stats["without_request_spans"], stats["sha256_16"], args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
