"""Sweep the coverage weights of prompt-agnostic selection on question-less prompts (summ_dev).

    python -m benchmarks.coverage_sweep --model runs/tpc-mini-trained [--max-samples N] [--rate 0.2]

Each multi_news prompt is split, encoded and described once (``TPCCompressor.describe_task``); then every
combination of relevance / centrality / section-lead weights and MMR redundancy selects sentences under the
prompt's budget (``tpc_core.engine.scoring.coverage``) and ROUGE-1/2 recall of the reference summary is measured. Prints
a markdown table, best first, and writes it as JSON with ``--out``. summ_dev is evaluation data: a weight picked here is
picked on the evaluation set, and the report should say so (the whole table is printed for that).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from data_access.loaders import load_summ_dev
from evaluation.budget import budget_for, minilm_token_counter
from evaluation.metrics import rouge_n_recall
from evaluation.summ import evenly_spaced
from synthesis.templates import fill_template
from tpc_core.segmentation import get_splitter

__all__ = ["Variant", "PreparedPrompt", "prepare", "score_variant", "main"]


@dataclass(frozen=True)
class Variant:
    """One setting of the coverage weights (``tpc_core.config.AgnosticConfig`` names)."""

    relevance_weight: float
    centrality_weight: float
    position_weight: float
    redundancy: float


@dataclass
class PreparedPrompt:
    """A prompt's sentences, embeddings, section ranks, relevance to its description, counts and budget."""

    texts: list[str]
    embeddings: Any
    ranks: list[int]
    relevance: Any
    counts: list[int]
    budget: int
    reference: str


def prepare(compressor: Any, prompt: str, reference: str, counter: Any, rate: float) -> PreparedPrompt:
    """Split, encode and describe one prompt with the public ``tpc_core`` API."""
    from tpc_core.engine.scoring.coverage import section_ranks  # lazy: loads torch

    spans = get_splitter(compressor.config.splitter).spans(prompt)
    texts = [prompt[start:end] for start, end in spans]
    embeddings = compressor.encoder.encode_contexts([compressor.encoder.tokenize(texts)])[0]
    description = compressor.describe_task(prompt)
    relevance = embeddings @ compressor.encoder.encode_questions([description])[0]
    return PreparedPrompt(texts, embeddings, section_ranks(prompt, spans), relevance,
                          [counter(text) for text in texts], budget_for(counter(prompt), rate=rate), reference)


def score_variant(prepared: PreparedPrompt, variant: Variant) -> tuple[float, float]:
    """ROUGE-1 and ROUGE-2 recall of the reference by the sentences this variant keeps."""
    from tpc_core.engine.scoring.coverage import coverage_scores
    from tpc_core.engine.selection.mmr import mmr_within_budget  # lazy: loads torch

    scores = coverage_scores(prepared.relevance, prepared.embeddings, prepared.ranks,
                             relevance_weight=variant.relevance_weight, centrality_weight=variant.centrality_weight,
                             position_weight=variant.position_weight)
    kept = mmr_within_budget(scores.tolist(), prepared.embeddings, prepared.counts, prepared.budget,
                             redundancy=variant.redundancy)
    text = " ".join(prepared.texts[i] for i in kept)
    return rouge_n_recall(text, prepared.reference, 1), rouge_n_recall(text, prepared.reference, 2)


def main(argv: list[str] | None = None) -> None:
    """CLI entry point."""
    from tpc_core import TPCCompressor  # lazy: loads torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tpc-mini")
    parser.add_argument("--data", default=None, help="summ_dev.jsonl (default: ../shared/data)")
    parser.add_argument("--max-samples", type=int, default=None)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--out", default=None, help="write the table as JSON here")
    args = parser.parse_args(argv)
    compressor = TPCCompressor.from_pretrained(args.model, device="cpu")
    counter = minilm_token_counter()
    samples = evenly_spaced(load_summ_dev(args.data), args.max_samples)
    prepared = [prepare(compressor, fill_template(s.template, s.context, ""), s.answers[0], counter, args.rate)
                for s in samples]
    grid = [Variant(*values) for values in itertools.product((0.0, 0.5, 1.0), (0.0, 0.5, 1.0), (0.0, 0.5, 1.0, 2.0),
                                                             (0.0, 0.3, 0.6))]
    rows = []
    for variant in grid:
        if not (variant.relevance_weight or variant.centrality_weight or variant.position_weight):
            continue
        scores = [score_variant(p, variant) for p in prepared]
        rows.append({**variant.__dict__, "rouge1_recall": round(statistics.mean(s[0] for s in scores), 4),
                     "rouge2_recall": round(statistics.mean(s[1] for s in scores), 4)})
    rows.sort(key=lambda row: (-row["rouge1_recall"], -row["rouge2_recall"]))
    print(f"{len(prepared)} prompts, rate {args.rate}, model {args.model}")
    print("| relevance | centrality | position | redundancy | ROUGE-1 recall | ROUGE-2 recall |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['relevance_weight']} | {row['centrality_weight']} | {row['position_weight']} | "
              f"{row['redundancy']} | {row['rouge1_recall']:.4f} | {row['rouge2_recall']:.4f} |")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"model": args.model, "rate": args.rate, "samples": len(prepared),
                                              "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
