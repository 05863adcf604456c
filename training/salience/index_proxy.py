"""Index-time proxy on the **train** split of qa_dev: compress each context bare, measure evidence recall.

``evaluation/index.py`` (``--suite index``) measures on the dev split; recipes must not be chosen there. This
proxy does the same on the train split: each distinct context is compressed on its own, with no question, at
``floor(rate x its sentences' MiniLM tokens)``, by each saved head and by the baselines (lead,
lead-per-passage as the benchmark defines passages, random, centroid of the CSE embeddings); every train
question is then scored by :func:`evaluation.metrics.evidence_recall` on its context's compressed text, laid
out by :func:`evaluation.budget.join_spans`. The context is one document, as ``TPCDocumentTransformer`` passes
it. Caveat: the shipped tpc-mini CSE was itself trained on qa_dev train questions, so its embeddings have seen
these contexts (the head has not).

``python -m training.salience.index_proxy --head NAME=DIR ... --out DIR``
caches the encoded contexts in ``runs/salience/qa_train_features/`` and writes ``index_proxy.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from data_access.loaders import load_qa_dev
from data_access.paths import data_file
from evaluation.budget import join_spans
from evaluation.index import index_contexts
from evaluation.methods.baselines import LeadPerPassage
from evaluation.metrics import evidence_recall
from tpc_core import TPCCompressor
from tpc_core.engine.scoring.salience import passage_lead_scores
from tpc_core.engine.selection.budget import resolve_budget
from tpc_core.engine.selection.mmr import mmr_within_budget
from training.common.cli import start_cli
from training.salience.evaluate import COVERAGE_RULE, coverage_rule_scores, prior_blend, select_by_score
from training.salience.features import HAND_FEATURES, encode_prompt
from training.salience.qa_evidence import leave_source_out_scores
from training.salience.train import load_head

__all__ = ["main"]

logger = logging.getLogger(__name__)


def _encoded_contexts(contexts: Sequence[Any], cache: Path, model: str) -> dict[str, dict[str, Any]]:
    """Per context id: spans, counts, embeddings, hand features (cached one safetensors file per context)."""
    cache.mkdir(parents=True, exist_ok=True)
    compressor = None
    out = {}
    for sample in contexts:
        tensors_path = cache / f"{sample.id}.safetensors"
        meta_path = cache / f"{sample.id}.json"
        if not meta_path.exists():
            if compressor is None:
                compressor = TPCCompressor.from_pretrained(model)
            encoded = encode_prompt(compressor, (sample.context,))
            save_file({"embeddings": encoded.embeddings.contiguous(), "hand": encoded.hand.contiguous()},
                      str(tensors_path))  # fmt: skip
            meta_path.write_text(json.dumps({"spans": [list(span) for span in encoded.segmented.spans[0]],
                                             "counts": list(encoded.segmented.counts[0])}) + "\n")  # fmt: skip
        meta = json.loads(meta_path.read_text())
        out[sample.id] = {**meta, **load_file(str(tensors_path))}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Compress every train context with every method at each rate; evidence recall per source and overall."""
    args = _parser().parse_args(argv)
    start_cli(threads=1)
    rates = tuple(args.rate or (0.5, 0.3))
    started = time.perf_counter()
    samples = load_qa_dev(args.qa, split="train")  # never the dev split: recipes are chosen here
    contexts, context_of = index_contexts(samples)
    encoded = _encoded_contexts(contexts, args.cache, args.model)
    encode_seconds = time.perf_counter() - started
    heads = {name: load_head(path) for name, path in (item.split("=", 1) for item in args.head)}
    fixed_scores = _qa_evidence_scores(args.qa_evidence_kind, samples, contexts, context_of, encoded)
    by_context = {sample.id: sample for sample in contexts}
    questions: dict[str, list[Any]] = defaultdict(list)
    for sample in samples:
        questions[context_of[sample.id]].append(sample)
    recall: dict[tuple[str, float], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    over_budget = 0
    for context_id, item in encoded.items():
        text = by_context[context_id].context
        methods = _methods(context_id, text, item, heads, fixed_scores, args)
        over_budget += _measure(text, item, methods, rates, questions[context_id], recall)
    table = {f"{name}@{rate}": {source: {"evidence_recall": sum(v) / len(v), "questions": len(v)}
                                for source, v in sorted(groups.items())}
             for (name, rate), groups in recall.items()}  # fmt: skip
    lines = _report(table, rates, [*heads, *fixed_scores], args)
    meta = {"command": "python -m training.salience.index_proxy " + " ".join(sys.argv[1:] if argv is None else argv),
            "contexts": len(contexts), "questions": len(samples),
            "heads": {n: h.config.trained_on for n, h in heads.items()},
            "redundancy": args.redundancy, "over_budget": over_budget,
            "encode_and_load_seconds": round(encode_seconds, 1),
            "wall_seconds": round(time.perf_counter() - started, 1)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "index_proxy.json").write_text(json.dumps({"meta": meta, "table": table}, indent=1) + "\n")
    (args.out / "index_proxy.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    logger.info("done: %s", meta)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training.salience.index_proxy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--qa", type=Path, default=data_file("qa_dev.jsonl"))
    parser.add_argument("--head", action="append", default=[], help="NAME=DIR of a saved head")
    parser.add_argument("--redundancy", type=float, action="append", default=[],
                        help="MMR penalties tried for every head and blend (0 = greedy, always tried)")
    parser.add_argument("--lead-weight", type=float, action="append", default=[],
                        help="also each head blended with lead-per-passage: z(head) + W x z(lead-per-passage)")
    parser.add_argument("--rate", type=float, action="append", help="rates (default 0.5 and 0.3)")
    parser.add_argument("--qa-evidence-kind", action="append", default=[],
                        help="also a head of this kind trained on question-free evidence labels of the other "
                             "sources' train contexts (training.salience.qa_evidence), leave-one-source-out")
    parser.add_argument("--cache", type=Path, default=Path("runs/salience/qa_train_features"))
    parser.add_argument("--model", default="tpc-mini")
    parser.add_argument("--out", type=Path, required=True)
    return parser


def _qa_evidence_scores(kinds: Sequence[str], samples: Sequence[Any], contexts: Sequence[Any],
                        context_of: dict[str, str], encoded: dict[str, Any]) -> dict[str, dict[str, list[float]]]:
    """Each ``--qa-evidence-kind`` head's scores of every context, trained with the context's source left out."""
    fixed_scores: dict[str, dict[str, list[float]]] = {}
    if not kinds:
        return fixed_scores
    supporting: dict[str, list[str]] = defaultdict(list)
    for sample in samples:
        supporting[context_of[sample.id]] += list(sample.supporting_sentences)
    texts = {c.id: c.context for c in contexts}
    sources = {c.id: c.source for c in contexts}
    for kind in kinds:
        fixed_scores[f"qa-evidence {kind} (leave-source-out)"] = leave_source_out_scores(
            encoded, texts, sources, supporting, kind)
    return fixed_scores


def _methods(context_id: str, text: str, item: dict[str, Any], heads: dict[str, Any],
             fixed_scores: dict[str, dict[str, list[float]]],
             args: argparse.Namespace) -> dict[str, tuple[list[float], float]]:
    """Every method's sentence scores for one context, with its MMR penalty (negative: today's coverage rule)."""
    lead_per_passage = LeadPerPassage(None)  # type: ignore[arg-type] (span_scores needs no counter)
    spans = [tuple(span) for span in item["spans"]]
    sentences = [text[s:e] for s, e in spans]
    passage_order = lead_per_passage.span_scores(text, spans, sentences, None, context_id)
    floor = min((v for v in passage_order if v is not None), default=0.0) - 1.0  # markers: never before others
    passage_order = [floor if v is None else v for v in passage_order]
    prior = passage_lead_scores((text,), (spans,)).tolist()
    methods: dict[str, tuple[list[float], float]] = {
        "lead": ([-float(k) for k in range(len(spans))], 0.0),
        "lead-per-passage": (passage_order, 0.0),
        "passage-prior": (prior, 0.0),
        "coverage-rule": (coverage_rule_scores(item), -COVERAGE_RULE["redundancy"]),
        "random": (torch.rand(len(spans), generator=torch.Generator().manual_seed(
            zlib.crc32(context_id.encode()))).tolist(), 0.0),
        "centroid": (item["hand"][:, HAND_FEATURES.index("centrality")].tolist(), 0.0),
    }  # fmt: skip
    head_scores = {name: (lambda h=head: h(item["embeddings"], item["hand"]).tolist())
                   for name, head in heads.items()}
    head_scores |= {name: (lambda table=table: table[context_id]) for name, table in fixed_scores.items()}
    for name, score_of in head_scores.items():
        with torch.inference_mode():
            scores = score_of()
        for redundancy in [0.0, *args.redundancy]:
            suffix = f" +mmr{redundancy}" if redundancy else ""
            methods[name + suffix] = (scores, redundancy)
            for weight in args.lead_weight:
                methods[f"{name} +lead{weight}{suffix}"] = (prior_blend(scores, prior, weight), redundancy)
    return methods


def _measure(text: str, item: dict[str, Any], methods: dict[str, tuple[list[float], float]], rates: Sequence[float],
             questions: Sequence[Any], recall: dict[tuple[str, float], dict[str, list[float]]]) -> int:
    """Compress one context with every method at each rate and add its questions' evidence recall to ``recall``;
    how many compressions went over their budget."""
    spans = [tuple(span) for span in item["spans"]]
    over_budget = 0
    for rate in rates:
        budget = resolve_budget(sum(item["counts"]), rate=rate)
        for name, (scores, redundancy) in methods.items():
            if redundancy < 0:  # today's rule: MMR on its raw scores, as the engine ran it
                vectors = torch.nn.functional.normalize(item["embeddings"].float(), dim=1)
                kept = mmr_within_budget(scores, vectors, item["counts"], budget, redundancy=-redundancy)
            else:
                kept = select_by_score(scores, item["counts"], budget, embeddings=item["embeddings"],
                                       redundancy=redundancy)  # fmt: skip
            over_budget += sum(item["counts"][k] for k in kept) > budget
            compressed = join_spans(text, spans, kept)
            for sample in questions:
                value = evidence_recall(compressed, sample.supporting_sentences, sample.context)
                if value is not None:
                    recall[(name, rate)][sample.source].append(value)
                    recall[(name, rate)]["overall"].append(value)
    return over_budget


def _report(table: dict[str, dict[str, dict[str, float]]], rates: Sequence[float], head_names: Sequence[str],
            args: argparse.Namespace) -> list[str]:
    """The Markdown tables: one per rate, a row per method, a column per source and overall."""
    sources = sorted({source for groups in table.values() for source in groups if source != "overall"}) + ["overall"]
    lines = []
    for rate in rates:
        lines += [f"qa_dev **train** split, each context compressed bare at rate {rate}: evidence recall "
                  "(questions)", "", "| method | " + " | ".join(sources) + " |", "|---|" + "---:|" * len(sources)]
        names = ["lead", "lead-per-passage", "passage-prior", "random", "centroid", "coverage-rule"]
        names += [f"{h}{lead}{mmr}" for h in head_names
                  for mmr in ["", *(f" +mmr{r}" for r in args.redundancy)]
                  for lead in ["", *(f" +lead{w}" for w in args.lead_weight)]]
        for name in names:
            row = table.get(f"{name}@{rate}", {})
            cells = (f"{row[s]['evidence_recall']:.3f} ({row[s]['questions']})" if s in row else "—" for s in sources)
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


if __name__ == "__main__":
    sys.exit(main())
