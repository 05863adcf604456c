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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from data_access.paths import data_file
from tpc_core.engine.scoring.lead import LAYOUT_FEATURES, LeadCorrection, layout_features, lead_order
from tpc_core.engine.selection.budget import top_k_within_budget
from tpc_core.segmentation import get_splitter, split_sentences
from training.salience.data import minilm_counter

__all__ = ["Context", "fit_correction", "index_records", "main", "recall_at"]

logger = logging.getLogger(__name__)
_NQ_PREFIX = re.compile(r"^Document \[\d+\] ")


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
    for sentence in gold:
        sentence = sentence.strip()
        if len(sentence) <= 3:
            continue
        start = text.find(sentence)
        if start < 0:
            continue
        end = start + len(sentence)
        indices = [k for k, (s, e) in enumerate(spans) if s < end and e > start]
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
    splitter = get_splitter("nupunkt")
    counter = minilm_counter()
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
INDEX_RATES = (0.5, 0.3)
SUMMARY_RATES = (0.2, 0.1)
NEWS = ("multi_news", "multi_news+", "cnndm", "xsum")


def _long_sentences(text: str) -> set[str]:
    """The sentences of ``text`` longer than 80 characters, lower-cased letters and digits only."""
    normal = (re.sub(r"[^a-z0-9]+", " ", part.lower()).strip() for part in re.split(r"(?<=[.!?])\s+", text))
    return {sentence for sentence in normal if len(sentence) > 80}


def summ_dev_overlap(threshold: int = 2) -> set[str]:
    """Ids of summ_train rows sharing ``threshold`` or more long sentences with summ_dev (Multi-News items in both):
    left out of training so that summ_dev stays clean. summ_dev is read for this and nothing else."""
    dev: set[str] = set()
    with open(data_file("summ_dev.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            dev |= _long_sentences(json.loads(line)["context"])
    from training.salience.data import read_summ_rows

    return {row["id"] for row in read_summ_rows()
            if sum(len(_long_sentences(document) & dev) for document in row["documents"]) >= threshold}


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
    splitter = get_splitter("nupunkt")
    counter = minilm_counter()
    shared = summ_dev_overlap()
    taken: dict[str, int] = defaultdict(int)
    contexts = []
    for row in read_summ_rows():
        subset = row_subset(row)
        record = labels.get(row["id"])
        if record is None or taken[subset] >= per_subset or row["id"] in shared:
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
    weighted tokens fill the budget: the greedy rule's own threshold, then one Newton step, so that its gradient is
    the implicit one (raising a long sentence's score pushes the threshold up for every other). Returns the kept
    share of the labels' weight.
    """
    with torch.no_grad():  # the hard greedy threshold: the score at which the best sentences fill the budget
        order = torch.argsort(scores, descending=True)
        filled = torch.cumsum(tokens[order], dim=0)
        last = int(torch.searchsorted(filled, torch.tensor(float(budget)), right=True).clamp(max=len(order) - 1))
        tau0 = scores[order[last]].detach()
    kept = torch.sigmoid((scores - tau0) / temperature)
    slope = (tokens * kept * (1 - kept)).sum() / temperature
    tau = tau0 + ((tokens * kept).sum() - budget) / slope.clamp(min=1e-9)
    return (labels * torch.sigmoid((scores - tau) / temperature)).sum() / labels.sum()


def fit_correction(contexts: Sequence[Context], *, hidden: int, epochs: int, seed: int = 0,
                   weight_decay: float = 1e-3, temperature: float = 0.5) -> LeadCorrection:
    """A correction fitted to keep the most labels within the budget at each context's rates (:func:`soft_recall`,
    :func:`rates_of`); every source weighs the same."""
    torch.manual_seed(seed)
    used = [c for c in contexts if float(c.labels.sum()) > 0]
    features = torch.cat([c.features for c in used])
    mean = features.mean(dim=0)
    std = features.std(dim=0)
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
                rates = rates_of(used[k])
                for rate in rates:
                    loss = loss - weight * soft_recall(scores, tokens, labels, rate * float(tokens.sum()),
                                                       temperature) / len(rates)
            optimiser.zero_grad()
            (loss / len(order[start:start + 16])).backward()
            optimiser.step()
    last = model[-1]
    if hidden:
        first = model[0]
        return LeadCorrection(last.weight.detach().flatten().clone(), float(last.bias.detach()), mean, std,
                              first.weight.detach().clone(), first.bias.detach().clone())
    return LeadCorrection(last.weight.detach().flatten().clone(), float(last.bias.detach()), mean, std)


def family(source: str) -> str:
    """The group held out together: NQ (nq_train and qa_dev's NQ rows), news summaries, or the source itself."""
    if "nq" in source:
        return "nq"
    if source.removeprefix("summ:") in NEWS:
        return "news"
    return source


def rates_of(context: Context) -> tuple[float, ...]:
    """The rates a context is trained and judged at: index time 0.5 and 0.3, summaries 0.2 and 0.1."""
    return SUMMARY_RATES if context.summary else INDEX_RATES


def evaluate(contexts: Sequence[Context], correction: LeadCorrection | None) -> dict[str, dict[str, float]]:
    """Per source and rate, mean evidence recall (index contexts) or ROUGE-1 / ROUGE-2 recall (summaries), of the
    correction (``None``: lead-per-passage)."""
    table: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for context in contexts:
        if correction is None:
            scores = lead_order((context.text,), (context.spans,)).tolist()
        else:
            scores = correction.scores((context.text,), (context.spans,), context.counts).tolist()
        for rate in rates_of(context):
            if context.summary:
                rouge1, rouge2 = rouge_at(context, scores, rate)
                table[context.source][f"r1@{rate}"].append(rouge1)
                table[context.source][f"r2@{rate}"].append(rouge2)
            else:
                table[context.source][f"recall@{rate}"].extend(recall_at(context, scores, rate))
        table[context.source]["n"].append(1.0)
    return {source: {key: (len(values) if key == "n" else sum(values) / len(values)) for key, values in row.items()}
            for source, row in table.items()}


def held_out(contexts: Sequence[Context], *, hidden: int, epochs: int, trains: Any = lambda c: True
             ) -> dict[str, dict[str, float]]:
    """Every source scored by a correction trained without its family (:func:`family`), on the contexts
    ``trains`` accepts (a family none of whose contexts trains is scored by one correction fitted on all of them)."""
    result: dict[str, dict[str, float]] = {}
    outside = [c for c in contexts if not trains(c)]
    if outside:
        result.update(evaluate([c for c in outside if c.source != "nq_train"],
                               fit_correction([c for c in contexts if trains(c)], hidden=hidden, epochs=epochs)))
    for group in sorted({family(c.source) for c in contexts if trains(c)}):
        judged = [c for c in contexts if family(c.source) == group and c.source != "nq_train"]
        if not judged:
            continue
        correction = fit_correction([c for c in contexts if family(c.source) != group and trains(c)],
                                    hidden=hidden, epochs=epochs)
        result.update(evaluate(judged, correction))
    return result


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for lead_correction.{json,md}")
    parser.add_argument("--cache", type=Path, default=Path("runs/salience/lead_cache"))
    parser.add_argument("--nq-limit", type=int, default=600, help="nq_train rows used (the first N)")
    parser.add_argument("--summ-labels", type=Path, default=None,
                        help="labels.jsonl.gz of training.salience.labels: add summ_train oracle sentences")
    parser.add_argument("--per-subset", type=int, default=120, help="summ_train document sets per subset")
    parser.add_argument("--train-on", choices=("index", "all"), default="index",
                        help="index: the correction learns from index-time labels only (summaries are judged)")
    parser.add_argument("--permissive", action="store_true",
                        help="summaries from the MIT / CC BY subsets only (QMSum, SQuALITY, ScisummNet)")
    parser.add_argument("--hidden", type=int, action="append", default=None, help="0: linear (default 0 and 16)")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--export", type=Path, default=None,
                        help="write the correction trained on every source (first --hidden) to this file")
    return parser.parse_args(argv)


PERMISSIVE = ("qmsum", "squality", "scisummnet")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    hiddens = args.hidden or [0, 16]

    def trains(context: Context) -> bool:
        return args.train_on == "all" or not context.summary

    started = time.perf_counter()
    contexts = index_records(nq_limit=args.nq_limit, cache=args.cache)
    if args.summ_labels is not None:
        summaries = summary_records(args.summ_labels, per_subset=args.per_subset, cache=args.cache)
        contexts += [c for c in summaries if not args.permissive or c.source.removeprefix("summ:") in PERMISSIVE]
    logger.info("%d contexts in %.0f s", len(contexts), time.perf_counter() - started)
    report: dict[str, Any] = {"lead-per-passage": evaluate([c for c in contexts if c.source != "nq_train"], None)}
    for hidden in hiddens:
        report[f"hidden={hidden}"] = held_out(contexts, hidden=hidden, epochs=args.epochs, trains=trains)
        logger.info("hidden=%d: %s", hidden, json.dumps(report[f"hidden={hidden}"]))
    trained = time.perf_counter()
    if args.export is not None:
        chosen = [c for c in contexts if trains(c)]
        correction = replace(fit_correction(chosen, hidden=hiddens[0], epochs=args.epochs),
                             for_summaries=args.train_on == "all")
        sources = {c.source: 0 for c in chosen}
        for c in chosen:
            sources[c.source] += 1
        correction.save(args.export, {"command": "python -m training.salience.lead " + " ".join(argv or sys.argv[1:]),
                                      "sources": json.dumps(sources), "hidden": str(hiddens[0]),
                                      "epochs": str(args.epochs)})
        report["export"] = {"path": str(args.export), "sources": sources,
                            "train_seconds": round(time.perf_counter() - trained, 1)}
    report["seconds"] = round(time.perf_counter() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "lead_correction.json").write_text(json.dumps(report, indent=1))
    (args.out / "lead_correction.md").write_text(markdown(report))
    print(markdown(report))
    return 0


def markdown(report: Mapping[str, Any]) -> str:
    """Each source's figures per method, lead-per-passage first (held-out families for the corrections)."""
    methods = [key for key in report if key == "lead-per-passage" or key.startswith("hidden=")]
    lines = ["| source | method | n | figures |", "|---|---|---|---|"]
    for source in sorted(report["lead-per-passage"]):
        for method in methods:
            row = report[method].get(source)
            if row is None:
                continue
            figures = ", ".join(f"{key} {value:.3f}" for key, value in row.items() if key != "n")
            lines.append(f"| {source} | {method} | {row['n']} | {figures} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
