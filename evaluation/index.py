"""Index-time suite: each context compressed on its own, with no question and no template, as at ingestion.

``TPCDocumentTransformer`` / ``TPCTransform`` / ``tpc compress-corpus`` compress every stored document once,
before any question exists (``compressor.compress_batch(contexts, question=None, rate=r)``). This suite measures
what that costs the questions asked later: every distinct **dev** context of qa_dev is compressed bare (the
context alone, ``question=None``) at each rate, and each dev question is then scored on its context's compressed
text with the benchmark's proxies: evidence recall (:func:`evaluation.metrics.evidence_recall`, the share of
its ``supporting_sentences`` kept) and answer retention (:func:`evaluation.metrics.answer_retention`).

Budgets, the MiniLM counter, caching, warm-up and error records are the other suites' own
(:func:`evaluation.evaluate.evaluate` in its prompt-agnostic setting on bare samples: template ``{context}``).
A context shared by several dev questions is compressed once, as a store would hold it once; the random
baseline is seeded by the context's id, so it too keeps one version per context.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from data_access.loaders import Sample
from evaluation.budget import MiniLMTokenCounter
from evaluation.cache import JsonCache
from evaluation.evaluate import evaluate
from evaluation.methods.base import AGNOSTIC, Method
from evaluation.metrics import answer_retention, evidence_recall
from evaluation.report import aggregate, pyplot, save_figure

__all__ = [
    "BARE_TEMPLATE",
    "INDEX_METHODS",
    "INDEX_RATES",
    "INDEX_SETTING",
    "INDEX_SMOKE_METHODS",
    "evaluate_index",
    "index_contexts",
    "index_summary",
    "index_table",
    "plot_index_recall",
]

BARE_TEMPLATE = "{context}"
INDEX_SETTING = "index"
INDEX_RATES: tuple[float, ...] = (0.5, 0.3)
INDEX_METHODS: tuple[str, ...] = ("lead", "lead-per-passage", "random", "minilm-centroid", "tpc-agnostic")
INDEX_SMOKE_METHODS: tuple[str, ...] = ("lead", "lead-per-passage", "random", "minilm-centroid")
_FROM_CONTEXT = ("prompt", "evidence_recall", "answer_retention", "info", "sample_id", "setting")


def index_contexts(samples: Sequence[Sample]) -> tuple[list[Sample], dict[str, str]]:
    """One bare sample per distinct context, and each question sample's context id.

    A bare sample holds the context alone: template ``{context}``, no question, no answers, no evidence.
    Its id is ``ctx-`` + the first 12 hex digits of the context's sha256; its source is that of the first
    question asking about it.

    Returns:
        ``(contexts, context_of)``: the bare samples in first-seen order, and question id -> context id.
    """
    contexts: dict[str, Sample] = {}
    context_of: dict[str, str] = {}
    for sample in samples:
        context_id = "ctx-" + hashlib.sha256(sample.context.encode("utf-8")).hexdigest()[:12]
        if context_id not in contexts:
            contexts[context_id] = replace(sample, id=context_id, question="", answers=(), template=BARE_TEMPLATE,
                                           supporting_sentences=(), meta={})  # fmt: skip
        context_of[sample.id] = context_id
    return list(contexts.values()), context_of


def evaluate_index(
    samples: Sequence[Sample],
    methods: Mapping[str, Method],
    counter: MiniLMTokenCounter,
    *,
    rate: float,
    cache: JsonCache | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Compress each distinct context bare at ``rate`` with every method; score every question on it.

    Returns:
        ``(records, skipped)``: one record per (method, question) with ``setting = "index"``, ``rate``,
        ``context_id``, the context's budget / tokens / seconds, ``evidence_recall`` and ``answer_retention``
        (``None`` where the question has no gold evidence or answer in its context); ``skipped`` as
        :func:`evaluation.evaluate.evaluate`.

    Raises:
        ValueError: A method that needs a question (there is none at index time).
    """
    unsupported = [name for name, method in methods.items() if AGNOSTIC not in method.settings]
    if unsupported:
        raise ValueError(f"method(s) {', '.join(unsupported)} need a question; index-time compression has none")
    contexts, context_of = index_contexts(samples)
    found, skipped = evaluate(contexts, methods, counter, rate=rate, settings=(AGNOSTIC,), cache=cache,
                              keep_prompts=True)  # fmt: skip
    by_context = {(record["method"], record["sample_id"]): record for record in found}
    records = []
    for label in methods:
        for sample in samples:
            compressed = by_context.get((label, context_of[sample.id]))
            if compressed is None:  # the method was skipped
                continue
            record = {key: value for key, value in compressed.items() if key not in _FROM_CONTEXT}
            record.update(sample_id=sample.id, context_id=context_of[sample.id], source=sample.source,
                          setting=INDEX_SETTING, rate=rate)  # fmt: skip
            description = (compressed.get("info") or {}).get("task_description")
            if description is not None:
                record["task_description"] = description
            if "error" not in compressed:
                text = compressed["prompt"]
                record["evidence_recall"] = evidence_recall(text, sample.supporting_sentences, sample.context)
                record["answer_retention"] = answer_retention(text, sample.answers, sample.context)
            records.append(record)
    return records, skipped


def index_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`evaluation.report.aggregate` of one rate's records: method -> source | ``overall`` -> figures.

    Each figure also holds ``contexts``, the distinct contexts compressed (``samples`` counts questions), and
    its ``seconds_mean`` is per distinct context (a context asked about twice was compressed once).
    """
    summary = aggregate(records).get(INDEX_SETTING, {})
    for method, groups in summary.items():
        for group, row in groups.items():
            seconds = {r["context_id"]: r.get("seconds") for r in records
                       if r["method"] == method and group in ("overall", r["source"])}  # fmt: skip
            row["contexts"] = len(seconds)
            timed = [value for value in seconds.values() if value is not None]
            row["seconds_mean"] = sum(timed) / len(timed) if timed else None
    return summary


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ordered(names: Sequence[str] | Any, order: Sequence[str]) -> list[str]:
    return sorted(names, key=lambda name: (order.index(name) if name in order else len(order), name))


def index_table(by_rate: Mapping[str, Mapping[str, Any]], skipped: Mapping[str, str], order: Sequence[str]) -> str:
    """Markdown: evidence recall / answer retention per method at each rate, then per source at each rate.

    Args:
        by_rate: ``{rate: index_summary(records at that rate)}``.
        skipped: Method -> why it did not run.
        order: Row order.
    """
    rates = list(by_rate)
    methods = _ordered({method for summary in by_rate.values() for method in summary}, order)
    header = "| Method | " + " | ".join(f"ER @{rate} | AR @{rate}" for rate in rates)
    header += " | Over budget | s/context | Contexts | Questions |"
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for method in methods:
        rows = [by_rate[rate].get(method, {}).get("overall") for rate in rates]
        present = [row for row in rows if row]
        cells = [method if not any(row["errors"] for row in present) else
                 f"{method} ({sum(row['errors'] for row in present)} errors)"]  # fmt: skip
        for row in rows:
            cells += [_fmt(row and row["evidence_recall"]), _fmt(row and row["answer_retention"])]
        contexts = sorted({row.get("contexts", 0) for row in present})
        cells += [str(sum(row["over_budget"] for row in present)),
                  " / ".join(_fmt(row["seconds_mean"], 3) for row in present),
                  "/".join(map(str, contexts)), "/".join(sorted({str(row["samples"]) for row in present}))]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    lines += [f"| {name} | skipped: {reason} |" + " |" * (header.count("|") - 3) for name, reason in skipped.items()]
    for rate in rates:
        summary = by_rate[rate]
        sources = sorted({source for groups in summary.values() for source in groups if source != "overall"})
        lines += ["", f"Per source at rate {rate}: evidence recall / answer retention (questions)", "",
                  "| Method | " + " | ".join(sources) + " |", "|---|" + "---|" * len(sources)]  # fmt: skip
        for method in _ordered(summary, order):
            cells = []
            for source in sources:
                row = summary[method].get(source)
                cells.append("—" if row is None else f"{_fmt(row['evidence_recall'], 2)} / "
                             f"{_fmt(row['answer_retention'], 2)} ({row['samples']})")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_index_recall(by_rate: Mapping[str, Mapping[str, Any]], path: Path, order: Sequence[str] = (),
                      metric: str = "evidence_recall") -> Path:  # fmt: skip
    """One panel per rate: ``metric`` per source (and overall) as grouped bars, one bar per method."""
    plt = pyplot()
    rates = list(by_rate)
    methods = _ordered({method for summary in by_rate.values() for method in summary}, order)
    colours = {method: plt.get_cmap("tab10")(i % 10) for i, method in enumerate(methods)}
    figure, axes = plt.subplots(len(rates), 1, figsize=(11, 3.6 * len(rates)), squeeze=False)
    for axis, rate in zip(axes[:, 0], rates, strict=True):
        summary = by_rate[rate]
        groups = sorted({group for groups in summary.values() for group in groups if group != "overall"}) + ["overall"]
        width = 0.8 / max(1, len(methods))
        for offset, method in enumerate(methods):
            values = [(summary.get(method, {}).get(group) or {}).get(metric) for group in groups]
            positions = [i + (offset - (len(methods) - 1) / 2) * width for i in range(len(groups))]
            axis.bar(positions, [value or 0.0 for value in values], width, label=method, color=colours[method])
        axis.set_xticks(range(len(groups)), groups, fontsize=7, rotation=12)
        axis.set(ylabel=metric.replace("_", " "), ylim=(0, 1),
                 title=f"Index-time compression, rate {rate} (no question)")
        axis.grid(alpha=0.3, axis="y")
        axis.legend(fontsize=7, ncol=len(methods))
    return save_figure(figure, path)
