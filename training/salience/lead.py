"""Train the lead correction: lead-per-passage plus what a small model learns to add, for index-time compression.

Labels are the sentences people asked about, with the question removed:

* ``nq_train``: every context is 20 Wikipedia passages, each the gold passage of some NQ question. Each gold
  passage is mapped to its answer sentences across all rows, so most passages of a context carry labels.
* ``qa_dev`` **train** split (HotpotQA supporting facts, NQ answer sentences, BAMBOO evidence, KV pairs), without
  the rows whose context is also a dev context.
* optionally ``summ_train`` greedy-ROUGE oracle sentences (``--summ-labels``, from ``training.salience.labels``).

Each context is split and counted as the engine does (the ``nupunkt`` splitter, the MiniLM counter), its
:func:`tpc_core.engine.scoring.lead.layout_features` are computed (no encoder), and a correction is fitted with a
listwise loss per context. Recipes are compared on held-out sources (``--hold-out``): evidence recall of each
question at each rate, the sentences kept greedily by score within ``floor(rate x tokens)``, against
lead-per-passage (the same model with the correction off).

``python -m training.salience.lead --out runs/salience/lead`` (features cached in ``--cache``, resumable).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from benchmarks.protocol.data import data_file
from tpc_core.engine.scoring.lead import LAYOUT_FEATURES, LeadCorrection, layout_features, lead_order
from tpc_core.engine.selection.budget import top_k_within_budget
from tpc_core.segmentation import get_splitter, split_sentences
from training.salience.data import minilm_counter

__all__ = ["Context", "fit_correction", "index_records", "main", "recall_at"]

logger = logging.getLogger(__name__)
_SPACE = re.compile(r"\s+")
_NQ_PREFIX = re.compile(r"^Document \[\d+\] ")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass
class Context:
    """One bare context: its text, sentences, counts, layout features, and the questions' gold sentences."""

    id: str
    source: str
    text: str
    spans: list[tuple[int, int]]
    counts: list[int]
    features: torch.Tensor
    gold: list[list[list[int]]]  # per question, per gold sentence, the indices of the sentences that hold it
    summary: str = ""  # a summary's reference text (summary records only)

    @property
    def labels(self) -> torch.Tensor:
        """1.0 for every sentence some question's gold sentence touches."""
        target = torch.zeros(len(self.spans))
        for question in self.gold:
            for indices in question:
                target[indices] = 1.0
        return target


def _gold_indices(text: str, spans: Sequence[tuple[int, int]], gold: Iterable[str]) -> list[list[int]]:
    """For each gold sentence found in ``text``, the sentences that overlap its occurrence."""
    found = []
    normal_spans = [(s, e) for s, e in spans]
    for sentence in gold:
        sentence = sentence.strip()
        if len(sentence) <= 3:
            continue
        start = text.find(sentence)
        if start < 0:
            continue
        end = start + len(sentence)
        indices = [k for k, (s, e) in enumerate(normal_spans) if s < end and e > start]
        if indices:
            found.append(indices)
    return found


def _context(cid: str, source: str, text: str, questions: Sequence[Sequence[str]], splitter: Any,
             counter: Any) -> Context | None:
    spans = list(split_sentences(text, splitter))
    if not spans:
        return None
    counts = list(counter.count_many([text[s:e] for s, e in spans]))
    gold = [g for g in (_gold_indices(text, spans, question) for question in questions) if g]
    return Context(cid, source, text, spans, counts, layout_features((text,), (spans,), counts), gold)


def _nq_passage_labels(rows: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    """Every NQ gold passage (text after its ``Document [k]`` marker) -> its answer sentences, across rows."""
    labels: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        passages = row["context"].split("\n\n")
        gold = passages[row["meta"]["gold_doc_index"]]
        labels[_NQ_PREFIX.sub("", gold)].update(row["supporting_sentences"])
    return labels


def index_records(*, nq_limit: int, cache: Path) -> list[Context]:
    """The bare contexts with labels: qa_dev train (not dev contexts) and the first ``nq_limit`` nq_train rows."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"contexts-nq{nq_limit}.pt"
    if path.exists():
        return [Context(**item) for item in torch.load(path, weights_only=False)]
    splitter, counter = get_splitter("nupunkt"), minilm_counter()
    qa = [json.loads(line) for line in open(data_file("qa_dev.jsonl"), encoding="utf-8")]
    dev_contexts = {row["context"] for row in qa if row["split"] == "dev"}
    by_context: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in qa:
        if row["split"] == "train" and row["context"] not in dev_contexts:
            by_context[row["context"]].append(row)
    contexts = []
    for k, (text, rows) in enumerate(by_context.items()):
        source = rows[0]["source"].split()[0].split("/")[0].lower()
        item = _context(f"qa-{k}", f"qa:{source}", text, [r["supporting_sentences"] for r in rows], splitter, counter)
        if item is not None:
            contexts.append(item)
    with gzip.open(data_file("nq_train.jsonl.gz"), "rt", encoding="utf-8") as handle:
        nq = [json.loads(line) for line in handle]
    passage_labels = _nq_passage_labels(nq)
    for row in nq[:nq_limit]:
        passages = row["context"].split("\n\n")
        questions = [sorted(passage_labels.get(_NQ_PREFIX.sub("", p), ())) for p in passages]
        item = _context(row["id"], "nq_train", row["context"], [q for q in questions if q], splitter, counter)
        if item is not None:
            contexts.append(item)
    torch.save([vars(item) for item in contexts], path)
    return contexts


SUMMARY_TEMPLATE_MARKER = "Passage {k}:\n"
NEWS = ("multi_news", "multi_news+", "cnndm", "xsum")


def summary_records(labels_path: Path, *, per_subset: int, cache: Path) -> list[Context]:
    """summ_train document sets laid out as the multi_news prompt lays them out (``Passage k:`` blocks), with the
    greedy-ROUGE oracle sentences (:mod:`training.salience.labels`) as labels; ``summary`` kept for ROUGE."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"summaries-{per_subset}.pt"
    if path.exists():
        return [Context(**item) for item in torch.load(path, weights_only=False)]
    from training.salience.data import read_summ_rows, row_subset

    with gzip.open(labels_path, "rt", encoding="utf-8") as handle:
        labels = {record["id"]: record for record in map(json.loads, handle)}
    splitter, counter = get_splitter("nupunkt"), minilm_counter()
    taken: dict[str, int] = defaultdict(int)
    contexts = []
    for row in read_summ_rows():
        subset, record = row_subset(row), labels.get(row["id"])
        if record is None or taken[subset] >= per_subset:
            continue
        documents = row["documents"]
        oracle = [documents[d][s:e] for k, (d, s, e) in enumerate(record["spans"]) if k in set(record["oracle"])]
        text = "\n\n".join(SUMMARY_TEMPLATE_MARKER.format(k=k + 1) + doc.strip() for k, doc in enumerate(documents))
        item = _context(row["id"], f"summ:{subset}", text, [oracle], splitter, counter)
        if item is None or not item.gold:
            continue
        item.summary = row["summary"]
        taken[subset] += 1
        contexts.append(item)
    torch.save([vars(item) for item in contexts], path)
    return contexts


def rouge_at(context: Context, scores: Sequence[float], rate: float) -> tuple[float, float]:
    """ROUGE-1 and ROUGE-2 recall of the context's summary by the sentences kept greedily by ``scores``."""
    from training.salience.labels import rouge_recall

    budget = int(rate * sum(context.counts))
    kept = sorted(top_k_within_budget(list(scores), context.counts, budget))
    text = " ".join(context.text[context.spans[k][0]:context.spans[k][1]] for k in kept)
    return rouge_recall(text, context.summary, 1), rouge_recall(text, context.summary, 2)


def recall_at(context: Context, scores: Sequence[float], rate: float) -> list[float]:
    """Each question's evidence recall when the sentences are kept greedily by ``scores`` within the budget."""
    budget = int(rate * sum(context.counts))
    kept = set(top_k_within_budget(list(scores), context.counts, budget))
    return [sum(all(k in kept for k in indices) for indices in question) / len(question) for question in context.gold]


def _base(context: Context) -> torch.Tensor:
    """The fixed part of a context's scores: lead-per-passage with the correction off."""
    return LeadCorrection.zero().scores((context.text,), (context.spans,), context.counts, enabled=False).float()


def soft_recall(scores: torch.Tensor, tokens: torch.Tensor, labels: torch.Tensor, budget: float,
                temperature: float) -> torch.Tensor:
    """A differentiable stand-in for the labels kept when sentences are taken by score within ``budget`` tokens.

    Each sentence is kept with weight ``sigmoid((score - tau) / temperature)``, ``tau`` the threshold at which the
    weighted tokens fill the budget (found by bisection, then one Newton step so its gradient is the implicit
    one: raising a long sentence's score pushes the threshold up for every other). Returns the kept share of
    the labels' weight.
    """
    with torch.no_grad():
        low, high = float(scores.min()) - 20 * temperature, float(scores.max()) + 20 * temperature
        for _ in range(40):
            middle = (low + high) / 2
            filled = float((tokens * torch.sigmoid((scores - middle) / temperature)).sum())
            low, high = (middle, high) if filled > budget else (low, middle)
        tau0 = torch.tensor((low + high) / 2)
    kept = torch.sigmoid((scores - tau0) / temperature)
    slope = (tokens * kept * (1 - kept)).sum() / temperature
    tau = tau0 + ((tokens * kept).sum() - budget) / slope.clamp(min=1e-9)
    return (labels * torch.sigmoid((scores - tau) / temperature)).sum() / labels.sum()


def fit_correction(contexts: Sequence[Context], *, hidden: int, epochs: int, seed: int = 0,
                   weight_decay: float = 1e-3, rates: Sequence[float] = (0.5, 0.3),
                   temperature: float = 0.5) -> LeadCorrection:
    """A correction fitted to keep the most labels within the budget at each of ``rates`` (:func:`soft_recall`)."""
    torch.manual_seed(seed)
    used = [c for c in contexts if float(c.labels.sum()) > 0]
    features = torch.cat([c.features for c in used])
    mean, std = features.mean(dim=0), features.std(dim=0)
    std = torch.where(std > 1e-6, std, torch.ones_like(std))
    width = len(LAYOUT_FEATURES)
    layers: list[torch.nn.Module] = ([torch.nn.Linear(width, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, 1)]
                                     if hidden else [torch.nn.Linear(width, 1)])
    model = torch.nn.Sequential(*layers)
    torch.nn.init.zeros_(model[-1].weight)
    torch.nn.init.zeros_(model[-1].bias)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=weight_decay)
    # every source weighs the same in the loss, however many contexts it has
    per_source: dict[str, int] = defaultdict(int)
    for c in used:
        per_source[c.source] += 1
    inputs = [((c.features - mean) / std, c.labels, _base(c), torch.tensor(c.counts, dtype=torch.float32),
               len(used) / len(per_source) / per_source[c.source]) for c in used]
    for _ in range(epochs):
        order = torch.randperm(len(inputs)).tolist()
        for start in range(0, len(order), 16):
            loss = torch.zeros(())
            for k in order[start:start + 16]:
                x, labels, base, tokens, weight = inputs[k]
                scores = base + model(x).squeeze(-1)
                for rate in rates:
                    loss = loss - weight * soft_recall(scores, tokens, labels, rate * float(tokens.sum()),
                                                       temperature) / len(rates)
            optimiser.zero_grad()
            (loss / len(order[start:start + 16])).backward()
            optimiser.step()
    last = model[-1]
    if hidden:
        first = model[0]
        return LeadCorrection(last.weight.detach().flatten().clone(), float(last.bias), mean, std,
                              first.weight.detach().clone(), first.bias.detach().clone())
    return LeadCorrection(last.weight.detach().flatten().clone(), float(last.bias), mean, std)


def evaluate(contexts: Sequence[Context], correction: LeadCorrection | None, rates: Sequence[float]
             ) -> dict[str, dict[str, float]]:
    """Mean evidence recall per source and rate, of the correction (``None``: lead-per-passage)."""
    table: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for context in contexts:
        if correction is None:
            scores = lead_order((context.text,), (context.spans,)).tolist()
        else:
            scores = correction.scores((context.text,), (context.spans,), context.counts).tolist()
        for rate in rates:
            values = recall_at(context, scores, rate)
            table[context.source][str(rate)].extend(values)
            table["all"][str(rate)].extend(values)
    return {source: {rate: sum(v) / len(v) for rate, v in rates_.items() if v} | {"n": len(next(iter(rates_.values())))}
            for source, rates_ in table.items()}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=Path("runs/salience/lead_cache"))
    parser.add_argument("--nq-limit", type=int, default=600)
    parser.add_argument("--hidden", type=int, action="append", default=None)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--rate", type=float, action="append", default=None)
    parser.add_argument("--export", type=Path, default=None, help="write the correction trained on every source here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    rates = args.rate or [0.5, 0.3]
    hiddens = args.hidden or [0, 16]
    started = time.perf_counter()
    contexts = index_records(nq_limit=args.nq_limit, cache=args.cache)
    logger.info("%d contexts in %.0f s", len(contexts), time.perf_counter() - started)
    sources = sorted({c.source for c in contexts})
    report: dict[str, Any] = {"lead-per-passage": evaluate(contexts, None, rates)}
    for hidden in hiddens:
        # each qa_dev source is scored by a correction trained on every other source (nq_train always trains)
        held: dict[str, dict[str, float]] = {}
        for source in sources:
            if source == "nq_train":
                continue
            train = [c for c in contexts if c.source != source]
            correction = fit_correction(train, hidden=hidden, epochs=args.epochs)
            held.update({k: v for k, v in evaluate([c for c in contexts if c.source == source], correction,
                                                     rates).items() if k != "all"})
        report[f"hidden={hidden} (leave-source-out)"] = held
        logger.info("hidden=%d: %s", hidden, json.dumps(held))
    report["seconds"] = round(time.perf_counter() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "lead_correction.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    if args.export is not None:
        correction = fit_correction(contexts, hidden=hiddens[0], epochs=args.epochs)
        correction.save(args.export, {"command": " ".join(sys.argv), "contexts": str(len(contexts))})
    return 0


if __name__ == "__main__":
    sys.exit(main())
