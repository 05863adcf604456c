"""Measure trained checkpoints on the dev split with the benchmark's own protocol (no reader LLM needed).

``python -m training.evaluate --checkpoint trained=runs/tpc-mini-trained --checkpoint zero-shot=tpc-mini
--baseline minilm-cosine --setting aware --setting agnostic --rate 0.2 --out metrics.json``

Every method gets the same budget: ``evaluation.budget.budget_for`` on the text being compressed, counted
with the MiniLM tokenizer, and the TPC compressors count with it too. ``aware``: compress the context given
the question; ``agnostic``: fill the sample's LongBench-style template (question inside) and compress the
whole prompt with ``question=None`` (the CTD writes the task description). Metrics: evidence recall (share
of gold supporting sentences kept verbatim) and answer retention (``evaluation.metrics``).

Recipe choices are made on held-out training samples, never on dev: ``--split train --ids
RUN/validation_ids.json`` measures the samples a ``cse_train`` run with ``validation_fraction`` left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data_access.loaders import load_qa_dev
from data_access.tokens import minilm_token_counter
from evaluation.evaluate import compress_one
from evaluation.methods.base import AGNOSTIC, AWARE, Compressed, Method
from evaluation.methods.registry import build_method
from evaluation.methods.tpc import split_model_spec
from training.common.cli import report_json, start_cli
from training.curation.format_families import render

__all__ = ["evaluate_checkpoints", "in_family", "loaded_tpc_method", "select_samples", "spread_subset", "main"]

logger = logging.getLogger(__name__)


def loaded_tpc_method(counter: Any, compressor: Any, label: str, aware: bool) -> Any:
    """A ``benchmarks`` method named ``label`` that compresses with a TPC compressor already in memory (the question
    passed on only when ``aware``)."""
    class LoadedTPC(Method):
        """A TPC checkpoint already in memory, compressing through the public API."""

        def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
            result = compressor.compress(text, question=question if aware else None, target_tokens=max(budget, 1),
                                         token_counter=self.counter)
            return Compressed(result.compressed_prompt, {"task_description": result.task_description,
                                                         "task_source": result.task_source})

    method = LoadedTPC(counter)
    method.name = label
    method.settings = frozenset({AWARE if aware else AGNOSTIC})
    return method


def spread_subset(samples: Sequence[Any], limit: int | None) -> list[Any]:
    """``limit`` items at evenly spaced positions of ``samples`` (all of them when ``limit`` is None or larger)."""
    if limit is None or limit >= len(samples):
        return list(samples)
    if limit < 1:
        raise ValueError(f"max_samples must be >= 1, got {limit}.")
    return [samples[(position * len(samples)) // limit] for position in range(limit)]


def select_samples(samples: Sequence[Any], ids: Sequence[str] | None) -> list[Any]:
    """The samples whose id is in ``ids`` (all when ``None``); an id missing from ``samples`` is an error."""
    if ids is None:
        return list(samples)
    wanted = set(ids)
    missing = wanted - {sample.id for sample in samples}
    if missing:
        raise ValueError(f"{len(missing)} requested sample ids are not in this split, e.g. {sorted(missing)[0]!r}.")
    return [sample for sample in samples if sample.id in wanted]


def in_family(samples: Sequence[Any], family: str) -> list[Any]:
    """The samples with their prompt template replaced by a CTD-data template family
    (``training.curation.format_families``), phrasing variants drawn per sample id, so every run sees the same
    prompts.
    """
    changed = []
    for sample in samples:
        seed = int(hashlib.sha256(f"{family}:{sample.id}".encode()).hexdigest()[:8], 16)
        template, _ = render(family, "{context}", "{input}", rng=random.Random(seed))
        changed.append(dataclasses.replace(sample, template=template))
    return changed


def evaluate_checkpoints(checkpoints: dict[str, str], *, baselines: Sequence[str] = ("minilm-cosine",),
                         settings: Sequence[str] = ("aware",), data_path: str | None = None,
                         max_samples: int | None = None, rate: float = 0.2, split: str = "dev",
                         ids: Sequence[str] | None = None, families: Sequence[str] = ()) -> dict[str, Any]:
    """Evidence recall and answer retention of each checkpoint and baseline on a split (dev by default).

    Args:
        checkpoints: Label -> checkpoint (name, directory or Hub id) for ``TPCCompressor.from_pretrained``.
        baselines: ``evaluation.methods.registry`` names, run in the prompt-aware setting.
        settings: ``"aware"`` and/or ``"agnostic"`` for the checkpoints.
        data_path: qa_dev JSONL (default: the benchmark's default location).
        max_samples: N dev samples spread evenly over the split (``None``: all); the file is grouped by
            source, so an even spread keeps every source in proportion where the first N would not.
        rate: Kept fraction of tokens.
        split: ``"dev"`` (reported figures) or ``"train"`` (with ``ids``: held-out validation samples).
        ids: Only these sample ids of the split (before ``max_samples``).
        families: Also run the prompt-agnostic setting with the samples filled into these template families
            of the CTD data (held-out families measure whether the descriptor generalises beyond the
            LongBench templates the dev prompts use); one row per checkpoint and family.

    Returns:
        ``{"rows": [{"method", "setting", "evidence_recall", "answer_retention", "samples", "seconds"}], ...}``.
    """
    from tpc_core import TPCCompressor  # lazy: loads torch

    if split not in ("dev", "train"):
        raise ValueError(f"split must be 'dev' or 'train', got {split!r}.")
    samples = spread_subset(select_samples(load_qa_dev(data_path, split=split), ids), max_samples)
    counter = minilm_token_counter()
    runs: list[tuple[str, str, Any, str]] = [(name, AWARE, build_method(name, counter), "longbench")
                                             for name in baselines]
    for label, checkpoint in checkpoints.items():
        name, scorer = split_model_spec(checkpoint)  # "DIR@cosine_bm25": the same weights, another scorer
        compressor = TPCCompressor.from_pretrained(name, device="cpu", trust_config_paths=True, scorer=scorer)
        for setting in settings:
            aware = setting == "aware"
            runs.append((label, AWARE if aware else AGNOSTIC, loaded_tpc_method(counter, compressor, label, aware),
                         "longbench"))
        for family in families:
            runs.append((label, AGNOSTIC, loaded_tpc_method(counter, compressor, label, False), family))
    by_family = {family: in_family(samples, family) for family in families}
    rows = []
    for label, setting, method, family in runs:
        started = time.perf_counter()
        records = [compress_one(method, sample, setting, counter, rate=rate, target_tokens=None)
                   for sample in by_family.get(family, samples)]
        failed = [r for r in records if "error" in r]
        if failed:
            raise RuntimeError(f"{label}/{setting} failed on {len(failed)} samples, first: {failed[0]['error']}")
        recall = [r["evidence_recall"] for r in records if r["evidence_recall"] is not None]
        retention = [r["answer_retention"] for r in records if r["answer_retention"] is not None]
        row = {"method": label, "setting": setting, "family": family, "checkpoint": checkpoints.get(label),
               "evidence_recall": round(sum(recall) / max(len(recall), 1), 4), "recall_samples": len(recall),
               "answer_retention": round(sum(retention) / max(len(retention), 1), 4),
               "over_budget": sum(bool(r["over_budget"]) for r in records),
               "samples": len(records), "seconds": round(time.perf_counter() - started, 1),
               "by_source": _by_source(records),
               "task_sources": dict(Counter(str((r.get("info") or {}).get("task_source")) for r in records))}
        logger.info("%s", row)
        rows.append(row)
    return {"data": data_path or "benchmarks default qa_dev", "split": split,
            "ids": None if ids is None else len(ids), "max_samples": max_samples,
            "samples": len(samples), "sources": _source_counts(samples),
            "rate": rate, "token_counter": counter.name, "rows": rows}


def _by_source(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean evidence recall and answer retention per source."""
    table: dict[str, dict[str, float]] = {}
    for source in sorted({r["source"] for r in records}):
        mine = [r for r in records if r["source"] == source]
        recall = [r["evidence_recall"] for r in mine if r["evidence_recall"] is not None]
        retention = [r["answer_retention"] for r in mine if r["answer_retention"] is not None]
        table[source] = {"evidence_recall": round(sum(recall) / max(len(recall), 1), 4),
                         "answer_retention": round(sum(retention) / max(len(retention), 1), 4), "samples": len(mine)}
    return table


def _source_counts(samples: Sequence[Any]) -> dict[str, int]:
    return dict(Counter(sample.source for sample in samples))


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m training.evaluate``)."""
    parser = argparse.ArgumentParser(prog="python -m training.evaluate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", action="append", default=[], metavar="LABEL=PATH",
                        help="a checkpoint to measure (repeatable)")
    parser.add_argument("--baseline", action="append", default=None,
                        help="benchmark method (default minilm-cosine; 'none' for no baseline)")
    parser.add_argument("--setting", action="append", default=None, choices=["aware", "agnostic"])
    parser.add_argument("--data", default=None, help="qa_dev.jsonl path")
    parser.add_argument("--split", default="dev", choices=["dev", "train"],
                        help="dev (reported figures) or train (with --ids: held-out validation samples)")
    parser.add_argument("--ids", default=None, metavar="JSON",
                        help="JSON list of sample ids to measure, e.g. a cse_train run's validation_ids.json")
    parser.add_argument("--max-samples", type=int, default=None,
                        help="N dev samples spread evenly over the split (default: all 193)")
    parser.add_argument("--family", action="append", default=[], metavar="NAME",
                        help="also measure prompt-agnostic mode with the samples in this CTD-data template family "
                             "(repeatable; see training.curation.format_families)")
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--out", default=None, help="write the metrics JSON here")
    args = parser.parse_args(argv)
    start_cli()
    checkpoints = {}
    for item in args.checkpoint:
        label, sep, path = item.partition("=")
        if not sep or not label or not path:
            parser.exit(2, f"error: --checkpoint expects LABEL=PATH, got {item!r}\n")
        checkpoints[label] = path
    if args.max_samples is not None and args.max_samples < 1:
        parser.exit(2, f"error: --max-samples must be >= 1, got {args.max_samples}\n")
    if not 0 < args.rate <= 1:
        parser.exit(2, f"error: --rate must be in (0, 1], got {args.rate}\n")
    ids = None
    if args.ids is not None:
        try:
            ids = json.loads(Path(args.ids).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            parser.exit(2, f"error: --ids {args.ids}: {error}\n")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or not ids:
            parser.exit(2, f"error: --ids {args.ids} must hold a non-empty JSON list of sample id strings\n")
    baselines = [b for b in (args.baseline or ["minilm-cosine"]) if b != "none"]
    report = evaluate_checkpoints(checkpoints, baselines=baselines, settings=args.setting or ["aware"],
                                  data_path=args.data,
                                  max_samples=args.max_samples, rate=args.rate, split=args.split, ids=ids,
                                  families=args.family)
    report_json(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
