"""Aggregate per-sample records into tables (markdown), a JSON file, and PNG plots."""

from __future__ import annotations

import json
import os
import platform
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from synthesis.templates import DATASET2CATEGORY, LONGBENCH_CATEGORIES

__all__ = [
    "aggregate",
    "environment_info",
    "dev_tables",
    "longbench_table",
    "zeroscrolls_table",
    "length_label",
    "speed_ratio_lines",
    "speed_table",
    "summ_summary",
    "summ_table",
    "plot_rate_curves",
    "plot_latency",
    "plot_summ_rouge",
    "pyplot",
    "save_figure",
    "write_json",
]

SETTING_TITLES = {"aware": "Prompt-aware compression", "agnostic": "Prompt-agnostic compression"}


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def aggregate(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One summary per (setting, method, group) with group = each source and ``"overall"``."""
    grouped: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        for group in (record["source"], "overall"):
            grouped[(record["setting"], record["method"], group)].append(record)
    summary: dict[str, Any] = {}
    for (setting, method, group), rows in grouped.items():
        ok = [row for row in rows if "error" not in row]
        origin = sum(row["origin_tokens"] for row in ok)
        compressed = sum(row["compressed_tokens"] for row in ok)
        recalls = [row["evidence_recall"] for row in ok if row.get("evidence_recall") is not None]
        kept = [row["answer_retention"] for row in ok if row.get("answer_retention") is not None]
        summary.setdefault(setting, {}).setdefault(method, {})[group] = {
            "samples": len(rows),
            "errors": len(rows) - len(ok),
            "evidence_recall": _mean(recalls),
            "evidence_recall_n": len(recalls),
            "answer_retention": _mean(kept),
            "answer_retention_n": len(kept),
            "tokens_mean": compressed / len(ok) if ok else None,
            "origin_tokens_mean": origin / len(ok) if ok else None,
            "budget_mean": _mean(row["budget"] for row in ok),
            "over_budget": sum(bool(row.get("over_budget")) for row in ok),
            "inverse_tau": origin / compressed if compressed else None,
            "seconds_mean": _mean(row["seconds"] for row in ok),
            "score": _mean(row.get("score") for row in ok),
            "score_n": sum(row.get("score") is not None for row in ok),
        }
    return summary


def _fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ordered(methods: Iterable[str], order: Sequence[str]) -> list[str]:
    return sorted(methods, key=lambda name: (order.index(name) if name in order else len(order), name))


def dev_tables(summary: Mapping[str, Any], skipped: Mapping[str, str], order: Sequence[str]) -> str:
    """qa_dev: per setting, an overall table and a per-source table (ER / AR / tokens / 1/τ)."""
    lines: list[str] = []
    for setting in ("aware", "agnostic"):
        block = summary.get(setting, {})
        if not block:
            continue
        has_score = any(block[m]["overall"]["score"] is not None for m in block)
        lines += [f"### {SETTING_TITLES[setting]}", ""]
        header = "| Method | Evidence recall | Answer retention | Tokens | Budget | Over budget | 1/τ | s/prompt |"
        header += " Reader score |" if has_score else ""
        lines += [header, "|" + "---|" * (header.count("|") - 1)]
        for method in _ordered(block, order):
            row = block[method]["overall"]
            cells = [
                method, _fmt(row["evidence_recall"]), _fmt(row["answer_retention"]), _fmt(row["tokens_mean"], 0),
                _fmt(row["budget_mean"], 0), "n/a" if method == "full" else str(row["over_budget"]),
                "—" if row["inverse_tau"] is None else f"{row['inverse_tau']:.1f}×", _fmt(row["seconds_mean"], 3),
            ]  # fmt: skip
            if has_score:
                cells.append(_fmt(row["score"]))
            if row["errors"]:
                cells[0] += f" ({row['errors']} errors)"
            lines.append("| " + " | ".join(cells) + " |")
        lines += _skipped_rows(skipped, header.count("|") - 2)
        sources = sorted({group for method in block.values() for group in method if group != "overall"})
        lines += ["", f"Per source ({SETTING_TITLES[setting].lower()}): "
                  "evidence recall / answer retention / tokens / 1/τ", ""]
        lines += ["| Method | " + " | ".join(sources) + " |", "|---|" + "---|" * len(sources)]
        for method in _ordered(block, order):
            cells = []
            for source in sources:
                row = block[method].get(source)
                if row is None:
                    cells.append("—")
                    continue
                tau = "—" if row["inverse_tau"] is None else f"{row['inverse_tau']:.1f}×"
                cells.append(
                    f"{_fmt(row['evidence_recall'], 2)} / {_fmt(row['answer_retention'], 2)} / "
                    f"{_fmt(row['tokens_mean'], 0)} / {tau}"
                )
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _skipped_rows(skipped: Mapping[str, str], width: int) -> list[str]:
    return [f"| {name} | skipped: {reason} |" + " |" * (width - 1) for name, reason in skipped.items()]


def _reader_table(records: Sequence[Mapping[str, Any]], skipped: Mapping[str, str], order: Sequence[str],
                  columns: Sequence[str], cells: Callable[[list[Mapping[str, Any]]], list[str]]) -> str:
    """Rows per setting and method: ``cells`` of the method's records under ``columns``, then Tokens and 1/τ."""
    lines = ["| Methods | " + " | ".join(columns) + " | Tokens | 1/τ |", "|" + "---|" * (len(columns) + 3)]
    for setting in ("aware", "agnostic"):
        rows = [record for record in records if record["setting"] == setting and "error" not in record]
        if not rows:
            continue
        lines.append(f"| *{SETTING_TITLES[setting]}* |" + " |" * (len(columns) + 2))
        for method in _ordered({record["method"] for record in rows}, order):
            mine = [record for record in rows if record["method"] == method]
            compressed = sum(record["compressed_tokens"] for record in mine)
            origin = sum(record["origin_tokens"] for record in mine)
            tau = f"{origin / compressed:.0f}×" if compressed else "—"
            lines.append(f"| {method} | " + " | ".join(cells(mine)) + f" | {compressed / len(mine):,.0f} | {tau} |")
    lines += _skipped_rows(skipped, len(columns) + 3)
    return "\n".join(lines)


def longbench_table(records: Sequence[Mapping[str, Any]], skipped: Mapping[str, str], order: Sequence[str]) -> str:
    """Table 1 layout: category averages (of task means, ×100) of reader scores, Tokens, 1/τ."""

    def cells(mine: list[Mapping[str, Any]]) -> list[str]:
        task_scores: dict[str, list[float]] = defaultdict(list)
        for record in mine:
            if record.get("score") is not None:
                task_scores[record["dataset"]].append(record["score"])
        row = []
        for category in LONGBENCH_CATEGORIES:
            means = [100 * sum(v) / len(v) for task, v in task_scores.items() if DATASET2CATEGORY.get(task) == category]
            row.append(_fmt(sum(means) / len(means) if means else None, 2))
        return row

    return _reader_table(records, skipped, order, LONGBENCH_CATEGORIES, cells)


def zeroscrolls_table(records: Sequence[Mapping[str, Any]], skipped: Mapping[str, str], order: Sequence[str]) -> str:
    """Table 2 layout: per-task reader scores (×100), Tokens, 1/τ."""
    tasks = sorted({record["source"] for record in records})

    def cells(mine: list[Mapping[str, Any]]) -> list[str]:
        row = []
        for task in tasks:
            scores = [r["score"] for r in mine if r["source"] == task and r.get("score") is not None]
            row.append(_fmt(100 * sum(scores) / len(scores) if scores else None, 2))
        return row

    return _reader_table(records, skipped, order, tasks, cells)


SUMM_ROUGE_FIELDS: dict[str, str] = {"rouge1_recall": "ROUGE-1 recall", "rouge2_recall": "ROUGE-2 recall"}


def summ_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per method: :func:`aggregate`'s overall prompt-agnostic figures plus mean ROUGE-1/2 recall."""
    overall = {method: groups["overall"] for method, groups in aggregate(records).get("agnostic", {}).items()}
    for method, row in overall.items():
        mine = [record for record in records if record["method"] == method and "error" not in record]
        for field in SUMM_ROUGE_FIELDS:
            row[field] = _mean(record.get(field) for record in mine)
    return overall


def summ_table(summary: Mapping[str, Mapping[str, Any]], skipped: Mapping[str, str], order: Sequence[str]) -> str:
    """Summarisation suite: ROUGE-1/2 recall of the reference, tokens, budget, overruns, 1/τ, seconds."""
    header = ("| Method | " + " | ".join(SUMM_ROUGE_FIELDS.values())
              + " | Tokens | Budget | Over budget | 1/τ | s/prompt |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for method in _ordered(summary, order):
        row = summary[method]
        cells = [method, *(_fmt(row[field]) for field in SUMM_ROUGE_FIELDS), _fmt(row["tokens_mean"], 0),
                 _fmt(row["budget_mean"], 0), "n/a" if method == "full" else str(row["over_budget"]),
                 "—" if row["inverse_tau"] is None else f"{row['inverse_tau']:.1f}×",
                 _fmt(row["seconds_mean"], 3)]
        if row["errors"]:
            cells[0] += f" ({row['errors']} errors)"
        lines.append("| " + " | ".join(cells) + " |")
    lines += _skipped_rows(skipped, header.count("|") - 2)
    return "\n".join(lines)


def length_label(tokens: int) -> str:
    """A prompt length for a table header: ``4k`` for 4,096 or 4,000 tokens, the exact count otherwise.

    >>> [length_label(n) for n in (1024, 1000, 10000, 65536, 1500)]
    ['1k', '1k', '10k', '64k', '1,500']
    """
    for unit in (1024, 1000):
        if tokens >= unit and tokens % unit == 0:
            return f"{tokens // unit}k"
    return f"{tokens:,}"


def speed_table(results: Sequence[Mapping[str, Any]]) -> str:
    """Median seconds per prompt (tokens/s) per length, load+warm-up time, RSS."""
    lengths = sorted({row["length"] for result in results for row in result.get("rows", [])})
    header = "| Method | " + " | ".join(f"{length_label(length)} tok: s (tok/s)" for length in lengths)
    header += " | load+warm-up s | RSS after load MB | peak RSS MB |"
    gpu = any("gpu_peak_mb" in result for result in results)
    header += " GPU peak MB |" if gpu else ""
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for result in results:
        if "rows" not in result:
            reason = result.get("skipped") or result.get("error")
            lines.append(f"| {result['method']} | {'skipped' if 'skipped' in result else 'error'}: {reason} |")
            continue
        by_length = {row["length"]: row for row in result["rows"]}
        cells = [
            f"{by_length[length]['seconds_median']:.3f} ({by_length[length]['tokens_per_s']:,.0f})"
            if length in by_length else "—" for length in lengths
        ]  # fmt: skip
        cells += [f"{result['load_and_warmup_s']:.1f}", f"{result['rss_after_load_mb']:.0f}",
                  f"{result['peak_rss_mb']:.0f}"]
        if gpu:
            cells.append(_fmt(result.get("gpu_peak_mb"), 0))
        lines.append(f"| {result['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def speed_ratio_lines(results: Sequence[Mapping[str, Any]], numerators: Sequence[str], denominator: str) -> list[str]:
    """One line per timed row in ``numerators``: its median seconds over ``denominator``'s, per prompt length.

    Empty when the denominator row was not timed (skipped, failed or not run).
    """
    timed = {result["method"]: {row["length"]: row["seconds_median"] for row in result["rows"]}
             for result in results if "rows" in result}  # fmt: skip
    if denominator not in timed:
        return []
    lines = []
    for name in numerators:
        if name in timed:
            cells = [f"{length_label(length)} {seconds / timed[denominator][length]:.2f}×"
                     for length, seconds in sorted(timed[name].items()) if timed[denominator].get(length)]  # fmt: skip
            lines.append(f"{name} / {denominator}: {', '.join(cells)}")
    return lines


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend: figures are written to files, never shown."""
    import matplotlib  # lazy: optional (plots only)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: optional (plots only)

    return plt


def save_figure(figure: Any, path: Path) -> Path:
    """Lay ``figure`` out, write it to ``path`` at 120 dpi and close it."""
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    pyplot().close(figure)
    return path


def plot_rate_curves(curves: Mapping[str, Any], path: Path, metric: str = "evidence_recall") -> Path:
    """Quality (``metric``) vs compression rate, one panel per setting. ``curves[rate][setting][method]``."""
    plt = pyplot()
    settings = [s for s in ("aware", "agnostic") if any(s in curves[r] for r in curves)]
    every = sorted({m for rate in curves for setting in curves[rate].values() for m in setting})
    colours = {method: plt.get_cmap("tab10")(i % 10) for i, method in enumerate(every)}  # same colour in both panels
    figure, axes = plt.subplots(1, len(settings), figsize=(6 * len(settings), 4), squeeze=False)
    for axis, setting in zip(axes[0], settings, strict=True):
        methods = sorted({m for rate in curves for m in curves[rate].get(setting, {})})
        for method in methods:
            points = sorted(
                (float(rate), curves[rate][setting][method]["overall"][metric])
                for rate in curves
                if method in curves[rate].get(setting, {})
                and curves[rate][setting][method]["overall"][metric] is not None
            )
            if points:
                axis.plot(*zip(*points, strict=True), marker="o", label=method, color=colours[method],
                          linestyle="--" if method in ("full", "random", "lead") else "-")
        axis.set(title=SETTING_TITLES[setting], xlabel="rate (budget / original tokens)",
                 ylabel=metric.replace("_", " "))
        axis.grid(alpha=0.3)
        axis.legend(fontsize=7)
    return save_figure(figure, path)


def plot_summ_rouge(summary: Mapping[str, Mapping[str, Any]], path: Path, order: Sequence[str] = ()) -> Path:
    """Grouped bars: ROUGE-1 and ROUGE-2 recall of the reference summary per method."""
    plt = pyplot()
    methods = [m for m in _ordered(summary, order) if summary[m].get("rouge1_recall") is not None]
    width = 0.8 / len(SUMM_ROUGE_FIELDS)
    figure, axis = plt.subplots(figsize=(max(6.0, 1.1 * len(methods) + 2), 4))
    for offset, (field, title) in enumerate(SUMM_ROUGE_FIELDS.items()):
        positions = [i + (offset - (len(SUMM_ROUGE_FIELDS) - 1) / 2) * width for i in range(len(methods))]
        values = [summary[m][field] or 0.0 for m in methods]
        bars = axis.bar(positions, values, width, label=title)
        axis.bar_label(bars, fmt="%.2f", fontsize=7)
    axis.set_xticks(range(len(methods)), methods, rotation=20, ha="right", fontsize=8)
    axis.set(ylabel="recall of the reference summary", ylim=(0, 1))
    axis.grid(alpha=0.3, axis="y")
    axis.legend(fontsize=8)
    return save_figure(figure, path)


def plot_latency(results: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Median seconds per prompt vs prompt length (log-log)."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(6, 4))
    for result in results:
        if "rows" in result:
            rows = result["rows"]
            axis.plot([r["tokens"] for r in rows], [r["seconds_median"] for r in rows], marker="o",
                      label=result["method"])
    axis.set(xscale="log", yscale="log", xlabel="prompt tokens (MiniLM)", ylabel="seconds per prompt (median)")
    axis.grid(alpha=0.3, which="both")
    axis.legend(fontsize=7)
    return save_figure(figure, path)


def environment_info() -> dict[str, Any]:
    """Versions and hardware, for the JSON file."""
    versions = {}
    for package in ("torch", "transformers", "sentence-transformers", "rank-bm25", "llama-index-core",
                    "langchain-core", "langchain-classic", "langchain-community", "llmlingua",
                    "tpc-langchain"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    try:
        import tpc_core

        versions["tpc_core"] = getattr(tpc_core, "__version__", "?")
    except Exception:  # noqa: BLE001
        versions["tpc_core"] = None
    info: dict[str, Any] = {
        "python": platform.python_version(), "platform": platform.platform(), "processor": platform.processor(),
        "cpu_count": os.cpu_count(), "versions": versions,
    }  # fmt: skip
    try:
        import psutil

        info["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    try:
        import torch

        info["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
        info["torch_threads"] = torch.get_num_threads()
    except ImportError:
        info["cuda"] = None
    return info


def write_json(path: Path, payload: Mapping[str, Any]) -> Path:
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    return path
