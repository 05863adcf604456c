"""What each sentence-cache storage dtype costs: held-out evidence recall and bytes per sentence.

    python -m benchmarks.cache_storage [--split train] [--rate 0.2] [--limit N] [--out benchmarks/results/cache_storage]

The protocol of the prompt-aware rows (``evaluation.evaluate``): each qa_dev sample's context compressed for
its question (or its instruction) to ``budget_for(MiniLM tokens, rate)``, counted with the one MiniLM counter, and
scored by evidence recall (the gold supporting sentences kept verbatim). Every context is read once by the CSE, into an
fp32 cache: that cold call is the uncached call, exactly. Each dtype's entries are the fp32 entries stored again in that
dtype (what a cache of that dtype would have written: the values are the same before rounding), and the warm call reads
them. fp32 must reproduce the uncached prompts byte for byte.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import statistics
import time
from pathlib import Path
from typing import Any

from data_access.loaders import load_qa_dev
from evaluation.budget import budget_for, minilm_token_counter
from evaluation.metrics import evidence_recall
from synthesis.templates import instruction_query

__all__ = ["main", "measure"]

logger = logging.getLogger(__name__)
DTYPES = ("fp32", "fp16", "int8")


def measure(split: str = "train", rate: float = 0.2, limit: int | None = None,
            model: str = "tpc-mini") -> dict[str, Any]:
    """Recall, kept-prompt agreement and bytes per sentence of each storage dtype against the uncached calls."""
    from tpc_core import TPCCompressor  # lazy: loads torch
    from tpc_core.cache import (  # lazy: loads torch
        MemoryCache,
        entry_key,
        fingerprint,
        splitter_identity,
    )  # lazy: loads torch
    from tpc_core.compressor import model_fingerprint  # lazy: loads torch

    compressor = TPCCompressor.from_pretrained(model)
    counter = minilm_token_counter()
    samples = [s for s in load_qa_dev(split=split) if s.supporting_sentences][:limit]
    caches = {dtype: MemoryCache(max_bytes=1 << 40, dtype=dtype) for dtype in DTYPES}
    identity = splitter_identity(compressor.engine.splitter())
    prints = {dtype: fingerprint(model_fingerprint(compressor), identity, dtype) for dtype in DTYPES}
    rows: dict[str, list[dict[str, Any]]] = {"uncached": [], **{dtype: [] for dtype in DTYPES}}
    sentences = 0
    seen = set()
    started = time.perf_counter()
    for number, sample in enumerate(samples):
        question = instruction_query(sample.template, sample.question)
        options = {"question": question, "target_tokens": budget_for(counter(sample.context), rate=rate),
                   "token_counter": counter}
        cold = compressor.compress(sample.context, cache=caches["fp32"], **options)
        rows["uncached"].append(_row(cold, sample))
        if sample.context not in seen:  # several questions share a context: its entry is stored once
            seen.add(sample.context)
            sentences += len(cold.sentences)
        source = caches["fp32"].get_many([entry_key(prints["fp32"], sample.context)])[0]
        for dtype in DTYPES:
            if source is not None and dtype != "fp32":  # the same entry, stored in this dtype
                caches[dtype].put_many([(entry_key(prints[dtype], sample.context),
                                         dataclasses.replace(source, fingerprint=prints[dtype]))])
            warm = compressor.compress(sample.context, cache=caches[dtype], **options)
            if cold.scored and warm.cache_hits != 1:
                raise RuntimeError(f"{sample.id}: the {dtype} entry was not found")
            rows[dtype].append({**_row(warm, sample), "same_prompt": warm.compressed_prompt == cold.compressed_prompt})
        if number % 25 == 0:
            logger.info("%d/%d samples, %.0f s", number + 1, len(samples), time.perf_counter() - started)
    scored = [k for k, row in enumerate(rows["uncached"]) if row["recall"] is not None]
    summary = {}
    for name, records in rows.items():
        recall = statistics.mean(records[k]["recall"] for k in scored)
        summary[name] = {"evidence_recall": round(recall, 5),
                         "delta": round(recall - statistics.mean(rows["uncached"][k]["recall"] for k in scored), 5)}
        if name in caches:
            summary[name].update(same_prompt=sum(r["same_prompt"] for r in records) / len(records),
                                 bytes_per_sentence=round(caches[name].info().bytes / sentences, 1))
    return {"split": split, "rate": rate, "samples": len(samples), "with_evidence": len(scored),
            "sentences_stored": sentences, "model": model, "seconds": round(time.perf_counter() - started, 1),
            "summary": summary}


def _row(result: Any, sample: Any) -> dict[str, Any]:
    return {"id": sample.id, "recall": evidence_recall(result.compressed_prompt, sample.supporting_sentences,
                                                        sample.context)}


def _table(report: dict[str, Any]) -> str:
    lines = [f"Storage dtypes of the sentence cache: qa_dev `{report['split']}` ({report['with_evidence']} samples "
             f"with evidence, {report['sentences_stored']} sentences stored), rate {report['rate']}, MiniLM counts, "
             f"{report['model']}.", "",
             "| storage | evidence recall | vs uncached | same prompt | bytes / sentence |", "|---|---|---|---|---|"]
    for name, row in report["summary"].items():
        lines.append(f"| {name} | {row['evidence_recall']:.4f} | {row['delta']:+.4f} | "
                     f"{row.get('same_prompt', 1.0):.3f} | {row.get('bytes_per_sentence', '')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="train")
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--model", default="tpc-mini")
    parser.add_argument("--out", default="benchmarks/results/cache_storage")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    report = measure(args.split, args.rate, args.limit, args.model)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out / "table.md").write_text(_table(report), encoding="utf-8")
    print(_table(report))


if __name__ == "__main__":
    main()
