"""Choose the ``cosine_bm25`` scorer's ``lexical_weight`` by cross-validation on held-out train records.

``python -m training.lexical_weight --ids training/results/2026-11-23/validation_ids.json --out OUT.json``

Every weight of the grid is a checkpoint scorer (``scorer=ScorerConfig("cosine_bm25", lexical_weight=w)`` in
``TPCCompressor.from_pretrained``), run prompt-aware through the public ``compress`` with the evaluation protocol
(rate 0.2, MiniLM counts; :func:`evaluation.evaluate.compress_one`). The records are dealt into ``k`` folds
stratified by source; each fold is scored with the weight whose mean evidence recall is best on the other folds
(the CV figure), and the weight best on all records is the one a checkpoint ships. Choose on held-out *train*
records only (the ones the CSE never trained on); never point this at dev. The shipped choice and its figures are
in the model card (``tpc_core/checkpoints/tpc-mini/README.md``, "scorer").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from data_access.loaders import load_qa_dev
from data_access.tokens import minilm_token_counter
from evaluation.evaluate import compress_one
from evaluation.methods.base import AWARE
from training.common.cli import report_json, start_cli
from training.evaluate import loaded_tpc_method, select_samples

__all__ = ["WEIGHTS", "choose_weight", "cross_validate", "folds_by_source", "main", "recall_by_weight"]

WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5)
"""The grid of BM25 weights compared (0: the pooled cosine alone)."""


def folds_by_source(samples: Sequence[Any], k: int) -> dict[str, int]:
    """Sample id -> fold in [0, k): within each source, ids ordered by hash and dealt round-robin."""
    folds: dict[str, int] = {}
    by_source: dict[str, list[str]] = {}
    for sample in samples:
        by_source.setdefault(sample.source, []).append(sample.id)
    offset = 0
    for source in sorted(by_source):
        ids = sorted(by_source[source], key=lambda i: hashlib.sha256(i.encode()).hexdigest())
        for position, sample_id in enumerate(ids):
            folds[sample_id] = (offset + position) % k
        offset += len(ids)
    return folds


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def cross_validate(per_weight: Mapping[float, Mapping[str, float]], folds: Mapping[str, int],
                   k: int) -> tuple[dict[str, float], list[float]]:
    """Each fold scored with the weight best (mean recall; the smaller weight on ties) on the other folds.

    Returns:
        (sample id -> recall under its fold's choice, the weight chosen for each fold).
    """
    weights = sorted(per_weight)
    out: dict[str, float] = {}
    chosen = []
    for fold in range(k):
        train = [i for i, f in folds.items() if f != fold]
        best = max(weights, key=lambda w: (_mean([per_weight[w][i] for i in train]), -w))
        chosen.append(best)
        out.update({i: per_weight[best][i] for i, f in folds.items() if f == fold})
    return out, chosen


def choose_weight(per_weight: Mapping[float, Mapping[str, float]]) -> float:
    """The weight with the best mean recall over all records (the smaller on ties)."""
    return max(sorted(per_weight), key=lambda w: (_mean(list(per_weight[w].values())), -w))


def recall_by_weight(samples: Sequence[Any], weights: Sequence[float], *, checkpoint: str = "tpc-mini",
                     rate: float = 0.2) -> dict[float, dict[str, float]]:
    """Weight -> sample id -> evidence recall, each weight's scorer compressing every sample prompt-aware."""
    from tpc_core import TPCCompressor  # lazy: loads torch
    from tpc_core.config import ScorerConfig  # lazy: with the compressor

    counter = minilm_token_counter()
    table: dict[float, dict[str, float]] = {}
    for weight in weights:
        scorer = ScorerConfig(name="cosine_bm25", lexical_weight=weight)
        compressor = TPCCompressor.from_pretrained(checkpoint, device="cpu", scorer=scorer)
        method = loaded_tpc_method(counter, compressor, f"cosine_bm25 w={weight:g}", aware=True)
        records = [compress_one(method, sample, AWARE, counter, rate=rate, target_tokens=None) for sample in samples]
        failed = [record for record in records if "error" in record]
        if failed:
            raise RuntimeError(f"weight {weight:g} failed on {len(failed)} samples, first: {failed[0]['error']}")
        table[weight] = {record["sample_id"]: record["evidence_recall"] for record in records
                         if record["evidence_recall"] is not None}
    return table


def report(per_weight: Mapping[float, Mapping[str, float]], folds: Mapping[str, int], k: int) -> dict[str, Any]:
    """Each weight's mean recall, the CV figure with the per-fold choices, and the chosen weight."""
    cross, chosen = cross_validate(per_weight, folds, k)
    return {"by_weight": {f"{w:g}": round(_mean(list(ids.values())), 4) for w, ids in sorted(per_weight.items())},
            "cv_evidence_recall": round(_mean(list(cross.values())), 4), "fold_choices": chosen,
            "chosen": choose_weight(per_weight), "records": len(folds), "folds": k}


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m training.lexical_weight``)."""
    parser = argparse.ArgumentParser(prog="python -m training.lexical_weight", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", required=True, metavar="JSON", help="held-out train sample ids (a JSON list)")
    parser.add_argument("--checkpoint", default="tpc-mini")
    parser.add_argument("--data", default=None, help="qa_dev.jsonl path")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--out", default=None, help="write the report JSON here")
    args = parser.parse_args(argv)
    if args.folds < 2:
        parser.exit(2, f"error: --folds must be >= 2, got {args.folds}\n")
    start_cli()
    ids = json.loads(Path(args.ids).read_text(encoding="utf-8"))
    samples = select_samples(load_qa_dev(args.data, split="train"), ids)
    per_weight = recall_by_weight(samples, WEIGHTS, checkpoint=args.checkpoint, rate=args.rate)
    scored = set.intersection(*(set(ids) for ids in per_weight.values()))
    folds = {i: f for i, f in folds_by_source(samples, args.folds).items() if i in scored}
    report_json(report(per_weight, folds, args.folds), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
