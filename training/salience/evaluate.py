"""Choose the salience head by selection, as the engine selects, on whole held-out summ_train datasets.

For each held-out document set (capped as cached by :mod:`training.salience.features`): rank its sentences by
a method's score, take them greedily under ``floor(rate x the sentences' MiniLM tokens)`` (the engine's
:func:`tpc_core.engine.selection.budget.top_k_within_budget`, or :func:`tpc_core.engine.selection.mmr.mmr_within_budget`
with an MMR penalty on the CSE embeddings), restore order, and measure ROUGE-1/2 recall of the human summary
(:func:`training.salience.labels.rouge_recall`). Baselines at the same budget: lead, lead-per-passage (each source
document's first sentence in turn, then the second, ...), random (seeded by id), centroid (cosine to the prompt's mean
CSE embedding) and the greedy ROUGE oracle (upper bound, recomputed at each rate on the capped text).

``python -m training.salience.evaluate --out DIR`` runs
leave-one-dataset-out (train on six ``meta.dataset`` values, test on the seventh; both Multi-News variants are
held out together) for every head kind and, for the embedding heads, trained on the permissive subsets only
(QMSum, SQuALITY, ScisummNet, minus the held-out one). It writes ``heldout.json`` and ``heldout.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from tpc_core.engine.selection.budget import resolve_budget, top_k_within_budget
from tpc_core.engine.selection.mmr import mmr_within_budget
from training.common.cli import start_cli
from training.salience.data import PERMISSIVE_DATASETS, add_path_arguments, read_summ_rows
from training.salience.features import HAND_FEATURES, load_features, read_labels
from training.salience.labels import greedy_oracle, rouge_recall
from training.salience.train import HEAD_KINDS, build_training_set, train_head

__all__ = [
    "DEFAULT_REDUNDANCIES",
    "baseline_scores",
    "coverage_rule_scores",
    "lead_blend",
    "lead_per_passage_scores",
    "prior_blend",
    "main",
    "nested_choice",
    "select_by_score",
    "summary_table",
    "zscore",
]

logger = logging.getLogger(__name__)

DEFAULT_RATES: tuple[float, ...] = (0.2, 0.1)
DEFAULT_REDUNDANCIES: tuple[float, ...] = (0.0, 0.3, 0.6)
"""MMR penalties tried: ``z-scored score - penalty x max cosine to a kept sentence``."""
DEFAULT_LEAD_WEIGHTS: tuple[float, ...] = (0.5, 1.0, 2.0)
"""Lead blends tried: ``z(head score) + weight x z(lead-per-passage score)`` (plain greedy selection)."""


def zscore(values: Sequence[float]) -> list[float]:
    """``(v - mean) / std`` within one prompt (all zeros when the values are constant).

    >>> zscore([1.0, 2.0, 3.0])
    [-1.0, 0.0, 1.0]
    """
    tensor = torch.tensor(list(values), dtype=torch.float64)
    spread = tensor.std() if len(tensor) > 1 else torch.tensor(0.0)
    return ((tensor - tensor.mean()) / spread).tolist() if spread > 1e-12 else [0.0] * len(tensor)


def lead_blend(head_scores: Sequence[float], document_of: Sequence[int], weight: float) -> list[float]:
    """A head's scores blended with the lead-per-passage order: ``z(head) + weight x z(lead-per-passage)``."""
    return [h + weight * lead for h, lead in zip(zscore(head_scores), zscore(lead_per_passage_scores(document_of)))]


def prior_blend(head_scores: Sequence[float], prior: Sequence[float], weight: float) -> list[float]:
    """The engine's blend (:func:`tpc_core.engine.scoring.salience.salience_scores`):
    ``z(head) + weight x z(passage prior)``."""
    return [h + weight * p for h, p in zip(zscore(head_scores), zscore(prior))]


def lead_per_passage_scores(document_of: Sequence[int]) -> list[float]:
    """Round-robin over the prompt's documents: every document's 1st sentence, then every 2nd, ...

    >>> lead_per_passage_scores([0, 0, 1, 1, 1])
    [-0.0, -2.0, -1.0, -3.0, -4.0]
    """
    within = []
    seen = defaultdict(int)
    for document in document_of:
        within.append(seen[document])
        seen[document] += 1
    order = sorted(range(len(document_of)), key=lambda k: (within[k], document_of[k]))
    rank = {k: position for position, k in enumerate(order)}
    return [-float(rank[k]) for k in range(len(document_of))]


def select_by_score(scores: Sequence[float], counts: Sequence[int], budget: int, *,
                    embeddings: torch.Tensor | None = None, redundancy: float = 0.0) -> list[int]:  # fmt: skip
    """The engine's selection: greedy by score under ``budget`` (MMR when ``redundancy`` > 0), ascending indices.

    With a penalty, scores are z-scored within the prompt first so the penalty means the same for every head.
    Never exceeds the budget; sentences are never cut.
    """
    if not redundancy:
        return top_k_within_budget(list(scores), list(counts), budget)
    if embeddings is None:
        raise ValueError("an MMR penalty needs the sentence embeddings")
    values = torch.tensor(list(scores), dtype=torch.float32)
    spread = values.std() if len(values) > 1 else torch.tensor(1.0)
    values = (values - values.mean()) / (spread if spread > 1e-9 else 1.0)
    vectors = torch.nn.functional.normalize(embeddings.float(), dim=1)
    return mmr_within_budget(values.tolist(), vectors, list(counts), budget, redundancy=redundancy)


COVERAGE_RULE = {"centrality_weight": 1.0, "position_weight": 0.5, "redundancy": 0.6}
"""The hand-set coverage rule tpc-mini shipped before the salience head (its ``agnostic`` weights; the cosine to
a generated description left out, as for a prompt with no description)."""


def coverage_rule_scores(document: Mapping[str, Any]) -> list[float]:
    """Today's rule on cached features: ``centrality + 0.5 x section lead`` (selected with MMR 0.6 on raw scores)."""
    hand = document["hand"]
    centrality = hand[:, HAND_FEATURES.index("centrality")]
    lead = hand[:, HAND_FEATURES.index("section_lead")]
    return (COVERAGE_RULE["centrality_weight"] * centrality + COVERAGE_RULE["position_weight"] * lead).tolist()


def baseline_scores(document: Mapping[str, Any], document_of: Sequence[int]) -> dict[str, list[float]]:
    """Lead, lead-per-passage (by source document, and the engine's passage prior), random (seeded by the
    document's id) and centroid scores of one cached document."""
    n = document["sentences"]
    generator = torch.Generator().manual_seed(zlib.crc32(document["id"].encode()))
    return {
        "lead": [-float(k) for k in range(n)],
        "lead-per-passage": lead_per_passage_scores(document_of),
        "passage-prior": document["prior"].tolist(),
        "random": torch.rand(n, generator=generator).tolist(),
        "centroid": document["hand"][:, HAND_FEATURES.index("centrality")].tolist(),
    }


def _rouge(texts: Sequence[str], kept: Sequence[int], summary: str) -> tuple[float, float]:
    joined = "\n".join(texts[k] for k in kept)
    return rouge_recall(joined, summary, 1), rouge_recall(joined, summary, 2)


class _Held:
    """One held-out document set: texts, counts, summary, embeddings, and where its sentences sit."""

    def __init__(self, document: Mapping[str, Any], row: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        n = document["sentences"]
        self.document = document
        self.summary = row["summary"]
        self.spans = record["spans"][:n]
        self.texts = [row["documents"][d][s:e] for d, s, e in self.spans]
        self.counts = record["counts"][:n]
        self.document_of = [d for d, _, _ in self.spans]

    def budget(self, rate: float) -> int:
        return max(1, resolve_budget(sum(self.counts), rate=rate))

    def score(self, scores: Sequence[float], rate: float, redundancy: float = 0.0, *,
              raw: bool = False) -> dict[str, float]:
        """ROUGE of the selection; ``raw``: MMR on the scores as they are (today's rule), not z-scored."""
        budget = self.budget(rate)
        if raw:
            vectors = torch.nn.functional.normalize(self.document["embeddings"].float(), dim=1)
            kept = mmr_within_budget(list(scores), vectors, list(self.counts), budget, redundancy=redundancy)
        else:
            kept = select_by_score(scores, self.counts, budget, embeddings=self.document["embeddings"],
                                   redundancy=redundancy)  # fmt: skip
        used = sum(self.counts[k] for k in kept)
        if used > budget or kept != sorted(kept):
            raise AssertionError(f"{self.document['id']}: selection broke the budget or the order")
        rouge1, rouge2 = _rouge(self.texts, kept, self.summary)
        return {"r1": rouge1, "r2": rouge2, "tokens": used, "budget": budget}

    def oracle(self, rate: float) -> dict[str, float]:
        budget = self.budget(rate)
        kept = greedy_oracle(self.texts, self.summary, budget, self.counts)
        rouge1, rouge2 = _rouge(self.texts, kept, self.summary)
        return {"r1": rouge1, "r2": rouge2, "tokens": sum(self.counts[k] for k in kept), "budget": budget}


def _means(metrics: Mapping[str, list[float]]) -> dict[str, float]:
    """Each metric's mean over the documents, and the number of documents."""
    return {key: sum(v) / len(v) for key, v in metrics.items()} | {"documents": len(next(iter(metrics.values())))}


def summary_table(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Mean R1 / R2 per (held-out subset, method, rate): ``{subset: {method: {"r1@0.2": ..., ...}}}``.

    ``"macro"`` averages the subsets' means (each dataset counts once, whatever its size).
    """
    sums: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for result in results:
        for metric in ("r1", "r2"):
            sums[result["subset"]][result["method"]][f"{metric}@{result['rate']}"].append(result[metric])
    table = {subset: {method: _means(metrics) for method, metrics in methods.items()}
             for subset, methods in sorted(sums.items())}
    macro: dict[str, dict[str, float]] = {}
    methods = {method for per_subset in table.values() for method in per_subset}
    for method in methods:
        present = [table[subset][method] for subset in table if method in table[subset]]
        if len(present) == len(table):
            keys = [key for key in present[0] if key != "documents"]
            macro[method] = {key: sum(row[key] for row in present) / len(present) for key in keys}
    table["macro"] = macro
    return table


def markdown(table: Mapping[str, Mapping[str, Mapping[str, float]]], rates: Sequence[float], order: Sequence[str]
             ) -> str:  # fmt: skip
    """One block per rate: rows are methods, columns the held-out subsets' ``R1 / R2``."""
    subsets = [subset for subset in table if subset != "macro"] + ["macro"]
    methods = sorted({m for rows in table.values() for m in rows},
                     key=lambda m: (order.index(m) if m in order else len(order), m))  # fmt: skip
    lines = []
    for rate in rates:
        lines += [f"Rate {rate}: ROUGE-1 / ROUGE-2 recall of the reference summary (held-out dataset, each column "
                  "is a model trained without it)", "",
                  "| method | " + " | ".join(subsets) + " |", "|---|" + "---:|" * len(subsets)]  # fmt: skip
        for method in methods:
            cells = []
            for subset in subsets:
                row = table[subset].get(method)
                cells.append("—" if not row or f"r1@{rate}" not in row else
                             f"{row[f'r1@{rate}']:.3f} / {row[f'r2@{rate}']:.3f}")  # fmt: skip
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    documents = {subset: next(iter(rows.values())).get("documents") for subset, rows in table.items() if rows}
    lines.append("Documents per held-out subset: " + ", ".join(f"{s} {n}" for s, n in documents.items() if n))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ the CLI


def _scores_of(head: Any, document: Mapping[str, Any]) -> list[float]:
    with torch.inference_mode():
        return head(document["embeddings"], document["hand"]).tolist()


def run_folds(documents: Sequence[Mapping[str, Any]], labels: Mapping[str, Mapping[str, Any]],
              held: Mapping[str, _Held], kinds: Sequence[str], rates: Sequence[float],
              redundancies: Sequence[float], permissive_kinds: Sequence[str], seed: int,
              log: Callable[[str], None], lead_weights: Sequence[float] = ()) -> list[dict[str, Any]]:  # fmt: skip
    """Leave-one-dataset-out: per held-out ``meta.dataset``, train each kind on the rest and score its documents."""
    results = []
    datasets = sorted({d["dataset"] for d in documents})
    for dataset in datasets:
        test = [d for d in documents if d["dataset"] == dataset]
        trainings = {kind: [d for d in documents if d["dataset"] != dataset] for kind in kinds}
        permissive = [d for d in documents if d["dataset"] != dataset and d["dataset"] in PERMISSIVE_DATASETS]
        trainings |= {f"{kind} (permissive)": permissive for kind in permissive_kinds}
        for name, train_documents in trainings.items():
            kind = name.split(" ")[0]
            started = time.perf_counter()
            head = train_head(build_training_set(train_documents, labels), kind, seed=seed)
            trained = time.perf_counter() - started
            for document in test:
                scores = _scores_of(head, document)
                variants = [(name if not r else f"{name} +mmr{r}", scores, r) for r in redundancies]
                variants += [(f"{name} +lead{w}" + (f" +mmr{r}" if r else ""),
                              prior_blend(scores, document["prior"], w), r)
                             for w in lead_weights for r in redundancies]
                for method, values, redundancy in variants:
                    for rate in rates:
                        results.append({"id": document["id"], "subset": document["subset"], "held_out": dataset,
                                        "method": method, "rate": rate,
                                        **held[document["id"]].score(values, rate, redundancy)})  # fmt: skip
            log(f"held out {dataset}: {name} on {len(train_documents)} documents, trained in {trained:.0f} s, "
                f"scored {len(test)} documents")  # fmt: skip
    return results


def nested_choice(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per head family, the variant (MMR penalty or lead blend) chosen without the held-out dataset's scores.

    For each held-out dataset D and each trained head (``name`` before its `` +`` suffix), the variant with the
    best mean over the *other* held-out datasets of ``R1 + R2`` (subset means, both rates) is chosen, and D's
    own results under it are reported as ``"{name} [chosen]"``: the choice never sees D.
    """
    per: dict[tuple[str, str, str], list[float]] = defaultdict(list)  # (family, variant, subset) -> r1 + r2
    rows: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for result in results:
        if result["method"] in ("oracle", "lead", "lead-per-passage", "passage-prior", "random", "coverage-rule") \
                or result["method"].startswith("centroid"):
            continue
        family = result["method"].split(" +")[0]
        per[(family, result["method"], result["subset"])].append(result["r1"] + result["r2"])
        rows[(family, result["held_out"])].append(result)
    chosen_rows = []
    families = {family for family, _, _ in per}
    for family in sorted(families):
        variants = sorted({variant for f, variant, _ in per if f == family})
        for (row_family, _), held_rows in rows.items():
            if row_family != family:
                continue
            others = {subset for f, _, subset in per if f == family} - {r["subset"] for r in held_rows}

            def merit(variant: str) -> float:
                means = [sum(per[(family, variant, s)]) / len(per[(family, variant, s)]) for s in others
                         if per.get((family, variant, s))]  # fmt: skip
                return sum(means) / len(means) if means else float("-inf")

            best = max(variants, key=lambda v: (merit(v), v == family))
            chosen_rows += [{**r, "method": f"{family} [chosen]", "variant": best} for r in held_rows
                            if r["method"] == best]  # fmt: skip
    return chosen_rows


def in_domain_results(documents: Sequence[Mapping[str, Any]], labels: Mapping[str, Mapping[str, Any]],
                      held: Mapping[str, _Held], kinds: Sequence[str], rates: Sequence[float],
                      redundancies: Sequence[float], seed: int, log: Callable[[str], None],
                      lead_weights: Sequence[float] = ()) -> list[dict[str, Any]]:  # fmt: skip
    """In-domain: every dataset in training; a fifth of the documents (``crc32(id) % 5 == 0``) held out."""
    test = [d for d in documents if zlib.crc32(d["id"].encode()) % 5 == 0]
    train = [d for d in documents if zlib.crc32(d["id"].encode()) % 5 != 0]
    results = []
    for kind in kinds:
        head = train_head(build_training_set(train, labels), kind, seed=seed)
        for document in test:
            scores = _scores_of(head, document)
            variants = [(kind if not r else f"{kind} +mmr{r}", scores, r) for r in redundancies]
            variants += [(f"{kind} +lead{w}", prior_blend(scores, document["prior"], w), 0.0) for w in lead_weights]
            for method, values, redundancy in variants:
                for rate in rates:
                    results.append({"id": document["id"], "subset": document["subset"], "held_out": "in-domain",
                                    "method": method, "rate": rate,
                                    **held[document["id"]].score(values, rate, redundancy)})  # fmt: skip
        log(f"in-domain: {kind} on {len(train)} documents, scored {len(test)}")
    return results


def baseline_results(documents: Sequence[Mapping[str, Any]], held: Mapping[str, _Held], rates: Sequence[float],
                     redundancies: Sequence[float]) -> list[dict[str, Any]]:  # fmt: skip
    """Every baseline (and the oracle) on every document: they need no training, so no fold."""
    results = []
    for document in documents:
        item = held[document["id"]]
        for name, scores in baseline_scores(document, item.document_of).items():
            for redundancy in redundancies if name == "centroid" else (0.0,):
                method = name if not redundancy else f"{name} +mmr{redundancy}"
                for rate in rates:
                    results.append({"id": document["id"], "subset": document["subset"],
                                    "held_out": document["dataset"], "method": method, "rate": rate,
                                    **item.score(scores, rate, redundancy)})
        for rate in rates:
            results.append({"id": document["id"], "subset": document["subset"], "held_out": document["dataset"],
                            "method": "coverage-rule", "rate": rate,
                            **item.score(coverage_rule_scores(document), rate, COVERAGE_RULE["redundancy"], raw=True)})
            results.append({"id": document["id"], "subset": document["subset"], "held_out": document["dataset"],
                            "method": "oracle", "rate": rate, **item.oracle(rate)})  # fmt: skip
    return results


def _feature_summary(documents: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per subset: cached documents, sentences, capped documents, MiniLM tokens and encoding seconds."""
    summary: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for document in documents:
        for group in (document["subset"], "all"):
            row = summary[group]
            row["documents"] += 1
            row["sentences"] += document["sentences"]
            row["capped"] += bool(document["capped"])
            row["tokens"] += document["tokens"]
            row["encode_seconds"] += document["seconds"]
    return {name: {key: round(value, 1) for key, value in row.items()} for name, row in sorted(summary.items())}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.salience.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    add_path_arguments(parser, "input", "features", "labels")
    parser.add_argument("--kind", action="append", choices=HEAD_KINDS, help="head kinds (default: all)")
    parser.add_argument("--permissive-kind", action="append", choices=HEAD_KINDS,
                        help="kinds also trained on the permissive subsets only (default: emb-logreg, emb-mlp)")
    parser.add_argument("--rate", type=float, action="append", help=f"rates (default {DEFAULT_RATES})")
    parser.add_argument("--redundancy", type=float, action="append",
                        help=f"MMR penalties (default {DEFAULT_REDUNDANCIES}; 0 = plain greedy)")
    parser.add_argument("--lead-weight", type=float, action="append",
                        help=f"lead-per-passage blends of every head (default {DEFAULT_LEAD_WEIGHTS})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--in-domain", action="store_true", help="also a 80/20 split by document over all datasets")
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Baselines once, then every fold; write per-document results (runs/) and the tables (``--out``)."""
    args = parse_args(argv)
    start_cli(threads=1)
    rates = tuple(args.rate or DEFAULT_RATES)
    redundancies = tuple(args.redundancy or DEFAULT_REDUNDANCIES)
    kinds = tuple(args.kind or HEAD_KINDS)
    permissive_kinds = tuple(args.permissive_kind or ("emb-logreg", "emb-mlp"))
    started = time.perf_counter()
    documents = load_features(args.features)
    labels = {record["id"]: record for record in read_labels(args.labels)}
    wanted = {d["id"] for d in documents}
    rows = {row["id"]: row for row in read_summ_rows(args.input) if row["id"] in wanted}
    held = {d["id"]: _Held(d, rows[d["id"]], labels[d["id"]]) for d in documents}
    logger.info("%d documents, %d sentences loaded in %.0f s", len(documents),
                sum(d["sentences"] for d in documents), time.perf_counter() - started)  # fmt: skip
    results = baseline_results(documents, held, rates, redundancies)
    logger.info("baselines and oracle: %.0f s", time.perf_counter() - started)
    baselines = list(results)
    lead_weights = tuple(args.lead_weight or DEFAULT_LEAD_WEIGHTS)
    results += run_folds(documents, labels, held, kinds, rates, redundancies, permissive_kinds, args.seed, logger.info,
                         lead_weights)
    results += nested_choice(results)
    table = summary_table(results)
    order = ["oracle", "lead", "lead-per-passage", "passage-prior", "random", "centroid", "coverage-rule", *kinds]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.in_domain:
        inside = in_domain_results(documents, labels, held, kinds, rates, redundancies, args.seed, logger.info,
                                   lead_weights)
        test_ids = {r["id"] for r in inside}
        in_table = summary_table([r for r in baselines if r["id"] in test_ids] + inside)
        (args.out / "in_domain.json").write_text(json.dumps({"table": in_table}, indent=1) + "\n")
        (args.out / "in_domain.md").write_text(markdown(in_table, rates, order).replace(
            "held-out dataset, each column is a model trained without it",
            "in-domain: a fifth of the documents by id, the model trained on the rest of every dataset") + "\n")
    wall = time.perf_counter() - started
    meta = {"command": "python -m training.salience.evaluate " + " ".join(sys.argv[1:] if argv is None else argv),
            "documents": len(documents), "sentences": sum(d["sentences"] for d in documents),
            "rates": rates, "redundancies": redundancies, "lead_weights": lead_weights, "kinds": kinds,
            "permissive_kinds": permissive_kinds,
            "seed": args.seed, "wall_seconds": round(wall, 1), "features": _feature_summary(documents),
            "over_budget": sum(r["tokens"] > r["budget"] for r in results),
            "chosen_variants": {f"{r['method']} | held out {r['held_out']}": r["variant"] for r in results
                                if "variant" in r}}  # fmt: skip
    (args.out / "heldout.json").write_text(json.dumps({"meta": meta, "table": table}, indent=1) + "\n")
    (args.out / "heldout.md").write_text(markdown(table, rates, order) + "\n")
    runs = Path("runs/salience/eval")
    runs.mkdir(parents=True, exist_ok=True)
    (runs / f"{args.out.name}-per-document.json").write_text(json.dumps(results) + "\n")
    print(markdown(table, rates, order))
    logger.info("done in %.0f s; over budget: %d", wall, meta["over_budget"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
