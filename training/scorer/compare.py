"""Compare experimental scorers on held-out train records, with the benchmark's protocol (issue 23).

``python -m training.scorer.compare --ids IDS.json [--out-dir runs/scorer]`` (the recorded run and its command:
training/README.md, "Scorer experiments")

1. Reference rows: the benchmark's ``minilm-cosine`` and ``bm25`` methods, and tpc-mini (pooled cosine) through
   ``TPCCompressor.compress`` exactly as ``training.evaluate`` runs it (prompt-aware, rate 0.2, MiniLM counts).
2. The same tpc-mini pass records every component per prompt (:class:`~training.scorer.scorers.ComponentScorer`:
   pooled cosine, MaxSim, BM25, rare-term match; cached under ``--cache``); every other row replays them fused
   (:class:`~training.scorer.scorers.CachedComponents`) through the same public ``compress`` call, so segmentation,
   budget and selection are the engine's.
3. A fusion family (one rule, a grid of weights) gets its weight by k-fold cross-validation over the records
   (folds stratified by source): each fold is scored with the weight best on the other folds (the CV row);
   the weight best on all records is reported as the chosen one (its all-record figure is optimistic).
4. Latency of a ~N-token prompt per scorer (median of repeats), with the load average before and after.

Choose on held-out *train* records only; never point this at dev.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from benchmarks.protocol.evaluate import compress_one
from benchmarks.protocol.methods.base import AWARE
from benchmarks.protocol.methods.registry import build_method
from data_access.loaders import load_qa_dev
from data_access.tokens import minilm_token_counter
from tpc_core import TPCCompressor
from tpc_core.engine.scoring.scorers import PooledCosine
from training.common.cli import start_cli
from training.evaluate import loaded_tpc_method, select_samples
from training.scorer.scorers import CachedComponents, ComponentScorer, FusedScorer, LateInteraction

__all__ = ["Config", "FAMILIES", "cross_validate", "folds_by_source", "format_interval", "latency_lines",
           "latency_prompt", "main", "paired_bootstrap", "summarise", "time_scorers"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Config:
    """One replayed scorer: fused components."""

    name: str
    weights: tuple[tuple[str, float], ...]
    method: str = "z"


def _grid(prefix: str, base: Mapping[str, float], vary: str, values: Sequence[float],
          method: str = "z") -> list[Config]:
    return [Config(f"{prefix} w={v:g}", tuple({**base, vary: v}.items()) if v else tuple(base.items()), method)
            for v in values]


FAMILIES: dict[str, list[Config]] = {
    "cos+bm25 (z)": _grid("cos+bm25 (z)", {"cos": 1.0}, "bm25", [0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5]),
    "cos+rare (z)": _grid("cos+rare (z)", {"cos": 1.0}, "rare", [0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5]),
    "cos+bm25 (rrf)": _grid("cos+bm25 (rrf)", {"cos": 1.0}, "bm25", [0, 0.25, 0.5, 0.75, 1.0, 1.5], "rrf"),
    "cos+maxsim (z)": _grid("cos+maxsim (z)", {"cos": 1.0}, "maxsim_content", [0, 0.25, 0.5, 1.0, 2.0, 4.0]),
    # Added after the first table: MaxSim over *all* question tokens beat the content-token variant alone.
    "cos+maxsim_all (z)": _grid("cos+maxsim_all (z)", {"cos": 1.0}, "maxsim", [0, 0.25, 0.5, 1.0, 2.0, 4.0]),
    "cos+maxsim+bm25 (z)": [Config(f"cos+maxsim+bm25 (z) m={m:g} b={b:g}",
                                   (("cos", 1.0), ("maxsim_content", m), ("bm25", b)))
                            for m in (0.5, 1.0, 2.0) for b in (0.1, 0.2, 0.3, 0.5)],
    "cos+maxsim_all+bm25 (z)": [Config(f"cos+maxsim_all+bm25 (z) m={m:g} b={b:g}",
                                       (("cos", 1.0), ("maxsim", m), ("bm25", b)))
                                for m in (0.5, 1.0, 2.0) for b in (0.1, 0.2, 0.3, 0.5)],
    # Added 2026-11-25 (training.scorer.derived): passage context and answer type on top of cos+bm25 (z) w=0.3.
    "cos+bm25+section (z)": _grid("cos+bm25+section (z)", {"cos": 1.0, "bm25": 0.3}, "section_max",
                                  [0, 0.25, 0.5, 1.0]),
    "cos+bm25+neighbour (z)": _grid("cos+bm25+neighbour (z)", {"cos": 1.0, "bm25": 0.3}, "neighbour",
                                    [0, 0.1, 0.25, 0.5]),
    "cos+bm25+numeric (z)": _grid("cos+bm25+numeric (z)", {"cos": 1.0, "bm25": 0.3}, "numeric",
                                  [0, 0.1, 0.25, 0.5, 1.0]),
}
SINGLES: list[Config] = [Config(name, ((name, 1.0),)) for name in ("maxsim", "maxsim_content", "bm25", "rare")]


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


def cross_validate(per_config: Mapping[str, Mapping[str, float]], names: Sequence[str],
                   folds: Mapping[str, int], k: int) -> tuple[dict[str, float], list[str]]:
    """Each fold scored with the config best (mean recall, first in ``names`` on ties) on the other folds.

    Returns:
        (sample id -> recall under its fold's choice, the config chosen for each fold).
    """
    out: dict[str, float] = {}
    chosen = []
    for fold in range(k):
        train = [i for i, f in folds.items() if f != fold]
        best = max(names, key=lambda n: (_mean([per_config[n][i] for i in train]), -names.index(n)))
        chosen.append(best)
        for i, f in folds.items():
            if f == fold:
                out[i] = per_config[best][i]
    return out, chosen


def paired_bootstrap(a: Mapping[str, float], b: Mapping[str, float], *, resamples: int = 2000,
                     seed: int = 0) -> dict[str, float]:
    """Mean of ``a - b`` over shared ids, with a 95% percentile interval from resampling ids (paired)."""
    ids = sorted(set(a) & set(b))
    diffs = [a[i] - b[i] for i in ids]
    rng = random.Random(seed)
    means = sorted(_mean([diffs[rng.randrange(len(diffs))] for _ in diffs]) for _ in range(resamples))
    return {"mean": round(_mean(diffs), 4), "low": round(means[int(0.025 * resamples)], 4),
            "high": round(means[int(0.975 * resamples) - 1], 4), "samples": len(ids)}


def summarise(label: str, records: Mapping[str, dict[str, Any]], sources: Mapping[str, str]) -> dict[str, Any]:
    """Overall and per-source mean evidence recall / answer retention (the evaluate harness's row shape)."""
    def stats(ids: Sequence[str]) -> dict[str, Any]:
        recall = [records[i]["evidence_recall"] for i in ids if records[i].get("evidence_recall") is not None]
        retention = [records[i]["answer_retention"] for i in ids if records[i].get("answer_retention") is not None]
        return {"evidence_recall": round(_mean(recall), 4), "answer_retention": round(_mean(retention), 4),
                "samples": len(ids)}
    ids = list(records)
    row = {"method": label, **stats(ids), "over_budget": sum(bool(records[i].get("over_budget")) for i in ids)}
    row["by_source"] = {s: stats([i for i in ids if sources[i] == s]) for s in sorted(set(sources.values()))}
    return row


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("sample_id", "source", "evidence_recall", "answer_retention", "over_budget",
                                       "budget", "compressed_tokens", "origin_tokens")}


def cached_records(cache: Path, label: str, method: Any, samples: Sequence[Any], counter: Any, rate: float,
                   sources: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Each sample's slim benchmark record for ``method``, compressed once and appended to a JSONL cache under
    ``cache`` (a rerun resumes where it stopped); keyed by sample id, for the ids in ``sources``."""
    path = cache / f"records_{label.replace(' ', '_').replace('/', '_')}.jsonl"
    done = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            done[record["sample_id"]] = record
    with path.open("a", encoding="utf-8") as handle:
        for sample in samples:
            if sample.id in done:
                continue
            record = compress_one(method, sample, AWARE, counter, rate=rate, target_tokens=None)
            if "error" in record:
                raise RuntimeError(f"{label} failed on {sample.id}: {record['error']}")
            done[sample.id] = _slim(record)
            handle.write(json.dumps(done[sample.id]) + "\n")
            handle.flush()
    return {i: done[i] for i in sources}


def latency_prompt(compressor: Any, samples: Sequence[Any], tokens: int, counter: Any) -> tuple[str, str]:
    """The latency prompt: the longest contexts joined until ``tokens`` counted tokens, cut to ``tokens`` encoder
    tokens; and the first sample's question."""
    parts = []
    total = 0
    for sample in sorted(samples, key=lambda s: -len(s.context)):
        if total >= tokens:
            break
        parts.append(sample.context)
        total += counter(sample.context)
    ids = compressor.encoder.tokenize(["\n\n".join(parts)])[0][:tokens]
    return compressor.encoder.tokenizer.decode(ids), samples[0].question


def time_scorers(compressor: Any, scorers: Mapping[str, Any], text: str, question: str, repeats: int,
                 counter: Any) -> dict[str, dict[str, float]]:
    """Per scorer, median seconds of the whole ``compress`` call (question given, rate 0.2) and of its relevance
    step, after one warm-up call; ``compressor.scorer`` is left set to the last scorer."""
    seconds: dict[str, dict[str, float]] = {}
    for name, scorer in scorers.items():
        compressor.scorer = scorer
        compressor.compress(text, question=question, rate=0.2, token_counter=counter)  # warm-up
        whole = []
        relevance = []
        for _ in range(repeats):
            prompt_holder: dict[str, Any] = {}
            original = scorer.relevance

            def timed(prompts, embeddings, descriptions, _orig=original, _holder=prompt_holder):
                started = time.perf_counter()
                result = _orig(prompts, embeddings, descriptions)
                _holder["relevance"] = time.perf_counter() - started
                return result
            scorer.relevance = timed  # type: ignore[method-assign]
            started = time.perf_counter()
            compressor.compress(text, question=question, rate=0.2, token_counter=counter)
            whole.append(time.perf_counter() - started)
            relevance.append(prompt_holder["relevance"])
            scorer.relevance = original  # type: ignore[method-assign]
        seconds[name] = {"compress_s": round(statistics.median(whole), 3),
                         "relevance_s": round(statistics.median(relevance), 3)}
    return seconds


def _latency(compressor: Any, samples: Sequence[Any], tokens: int, repeats: int, counter: Any) -> dict[str, Any]:
    """Median seconds to compress one ~``tokens``-token prompt (question given, rate 0.2) per scorer."""
    text, question = latency_prompt(compressor, samples, tokens, counter)
    scorers = {"pooled cosine (tpc-mini)": PooledCosine(compressor.encoder),
               "maxsim": LateInteraction(compressor.encoder),
               "cos+bm25": FusedScorer(compressor.encoder, {"cos": 1.0, "bm25": 0.3}),
               "cos+maxsim+bm25": FusedScorer(compressor.encoder, {"cos": 1.0, "maxsim_content": 1.0, "bm25": 0.3})}
    load_before = os.getloadavg()
    out: dict[str, Any] = {"prompt_tokens": counter(text), "repeats": repeats, "threads": torch.get_num_threads()}
    out["seconds"] = time_scorers(compressor, scorers, text, question, repeats, counter)
    out["loadavg_before"] = [round(x, 2) for x in load_before]
    out["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def run(ids_path: str, out_dir: Path, cache: Path, *, k: int = 5, rate: float = 0.2, latency_tokens: int = 10000,
        repeats: int = 3, skip_latency: bool = False) -> dict[str, Any]:
    """Everything in the module docstring; returns the report written to ``out_dir/compare.json``."""
    ids = json.loads(Path(ids_path).read_text(encoding="utf-8"))
    samples = select_samples(load_qa_dev(None, split="train"), ids)
    sources = {s.id: s.source for s in samples}
    counter = minilm_token_counter()
    cache.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    per_sample: dict[str, dict[str, dict[str, Any]]] = {}

    def cached_run(label: str, method: Any) -> dict[str, dict[str, Any]]:
        return cached_records(cache, label, method, samples, counter, rate, sources)

    started = time.perf_counter()
    for name in ("minilm-cosine", "bm25"):
        per_sample[name] = cached_run(name, build_method(name, counter))
        logger.info("%s done (%.0fs)", name, time.perf_counter() - started)

    compressor = TPCCompressor.from_pretrained("tpc-mini", device="cpu")
    recorder = ComponentScorer(compressor.encoder)
    components_path = cache / "components.pt"
    stored: dict[str, Any] = torch.load(components_path) if components_path.exists() else {}
    recorder.records.update(stored)
    compressor.scorer = recorder
    per_sample["tpc-mini (pooled cosine)"] = cached_run("tpc-mini",
                                                        loaded_tpc_method(counter, compressor, "tpc-mini", True))
    if set(recorder.records) - set(stored):
        torch.save(dict(recorder.records), components_path)
    logger.info("tpc-mini + components done (%.0fs)", time.perf_counter() - started)

    configs = [c for family in FAMILIES.values() for c in family] + SINGLES
    for config in configs:
        compressor.scorer = CachedComponents(recorder.records, dict(config.weights), config.method)
        per_sample[config.name] = cached_run(f"replay {config.name}",
                                             loaded_tpc_method(counter, compressor, config.name, True))
    logger.info("replays done (%.0fs)", time.perf_counter() - started)

    for label in ("minilm-cosine", "bm25", "tpc-mini (pooled cosine)"):
        rows.append({"kind": "reference", **summarise(label, per_sample[label], sources)})
    for config in SINGLES:
        rows.append({"kind": "single", **summarise(config.name, per_sample[config.name], sources)})
    folds = folds_by_source(samples, k)
    recall = {name: {i: r["evidence_recall"] or 0.0 for i, r in records.items()}
              for name, records in per_sample.items()}
    families: dict[str, Any] = {}
    for family, members in FAMILIES.items():
        names = [c.name for c in members]
        cv, chosen = cross_validate(recall, names, folds, k)
        best_all = max(names, key=lambda n: (_mean(list(recall[n].values())), -names.index(n)))
        cv_records = {i: {**per_sample[chosen[folds[i]]][i]} for i in sources}
        reference = recall["tpc-mini (pooled cosine)"]
        families[family] = {"grid": {n: round(_mean(list(recall[n].values())), 4) for n in names},
                            "fold_choices": chosen, "chosen_on_all": best_all,
                            "cv_evidence_recall": round(_mean(list(cv.values())), 4),
                            "cv_minus_tpc_mini": paired_bootstrap(cv, reference),
                            "cv_minus_minilm_cosine": paired_bootstrap(cv, recall["minilm-cosine"])}
        rows.append({"kind": "fusion, chosen on all", **summarise(best_all, per_sample[best_all], sources)})
        rows.append({"kind": f"fusion, {k}-fold CV", **summarise(f"{family} [CV]", cv_records, sources)})
    report: dict[str, Any] = {"split": "train", "ids": ids_path, "samples": len(samples),
                              "sources": {s: sum(v == s for v in sources.values())
                                          for s in sorted(set(sources.values()))},
                              "rate": rate, "token_counter": counter.name, "folds": k, "rows": rows,
                              "families": families,
                              "per_sample_recall": {n: {i: recall[n][i] for i in sources} for n in recall}}
    if not skip_latency:
        report["latency"] = _latency(compressor, samples, latency_tokens, repeats, counter)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "compare.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out_dir / "compare.md").write_text(to_markdown(report), encoding="utf-8")
    return report


def format_interval(stats: Mapping[str, float]) -> str:
    """A paired bootstrap's mean and 95 % interval as ``+0.012 [-0.003, +0.027]``."""
    return f"{stats['mean']:+.3f} [{stats['low']:+.3f}, {stats['high']:+.3f}]"


_SHORT = {"hotpotqa_dev_distractor": "hotpotqa", "nq_open_oracle": "nq", "kv_retrieval_75_keys": "kv"}


def source_table(report: Mapping[str, Any]) -> list[str]:
    """Markdown lines of the per-source table: one row per ``report["rows"]`` entry, recall against minilm-cosine's
    (a source a row has no records for shows ``nan``)."""
    sources = list(report["sources"])
    head = ["method", "kind", "recall", "×minilm", "retention", "over"] + [
        f"{_SHORT.get(s, s)} (n={report['sources'][s]})" for s in sources]
    base = next(r for r in report["rows"] if r["method"] == "minilm-cosine")["evidence_recall"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in report["rows"]:
        cells = [row["method"], row["kind"], f"{row['evidence_recall']:.3f}", f"{row['evidence_recall'] / base:.3f}",
                 f"{row['answer_retention']:.3f}", str(row["over_budget"])]
        cells += [f"{row['by_source'].get(s, {}).get('evidence_recall', float('nan')):.3f}" for s in sources]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def to_markdown(report: Mapping[str, Any]) -> str:
    """The per-source table, the fusion grids and the latency notes."""
    lines = [f"# Scorer comparison, held-out train ({report['samples']} records of {report['ids']}), prompt-aware, "
             f"rate {report['rate']}", "", "Evidence recall per source; retention = answer retention.", "",
             *source_table(report)]
    lines += ["", "## Fusion grids (mean evidence recall on all records; CV = each fold scored with the weight "
              f"best on the other {report['folds'] - 1} folds)", ""]
    for family, info in report["families"].items():
        grid = ", ".join(f"{n.split(') ', 1)[-1]}: {v:.3f}" for n, v in info["grid"].items())
        folds = ", ".join(c.split(") ", 1)[-1] for c in info["fold_choices"])
        lines.append(f"- **{family}**: {grid}. Chosen on all: `{info['chosen_on_all']}`; per-fold choices: {folds}; "
                     f"CV recall {info['cv_evidence_recall']:.3f}; CV − tpc-mini "
                     f"{format_interval(info['cv_minus_tpc_mini'])}, CV − minilm-cosine "
                     f"{format_interval(info['cv_minus_minilm_cosine'])} (paired bootstrap over records, 95%).")
    if "latency" in report:
        lines += latency_lines(report["latency"])
    return "\n".join(lines) + "\n"


def latency_lines(latency: Mapping[str, Any], note: str = "") -> list[str]:
    """Markdown lines of a latency section: its heading, the load average (then ``note``), a row per scorer."""
    lines = ["", f"## Latency, one ~{latency['prompt_tokens']}-token prompt, question given, rate 0.2, CPU, "
             f"{latency['threads']} thread(s), median of {latency['repeats']}", "",
             f"Load average before {latency['loadavg_before']}, after {latency['loadavg_after']} (2 shared cores)."
             + (f" {note}" if note else ""), "", "| scorer | compress (s) | relevance step (s) |", "|---|---|---|"]
    lines += [f"| {name} | {s['compress_s']:.3f} | {s['relevance_s']:.3f} |" for name, s in latency["seconds"].items()]
    return lines


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options a scorer comparison shares: ``--rate``, ``--latency-tokens``, ``--repeats``, ``--skip-latency``."""
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--latency-tokens", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-latency", action="store_true")


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m training.scorer.compare``)."""
    parser = argparse.ArgumentParser(prog="python -m training.scorer.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", required=True, help="JSON list of held-out train sample ids")
    parser.add_argument("--out-dir", default="runs/scorer")
    parser.add_argument("--cache", default="runs/scorer", help="resumable per-sample records and components")
    parser.add_argument("--folds", type=int, default=5)
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    start_cli(threads=1)
    report = run(args.ids, Path(args.out_dir), Path(args.cache), k=args.folds, rate=args.rate,
                 latency_tokens=args.latency_tokens, repeats=args.repeats, skip_latency=args.skip_latency)
    print(to_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
