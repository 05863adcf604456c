"""Summarisation suite: prompt-agnostic compression where there is no question to restate.

Each summ_dev sample (LongBench ``multi_news``) is filled into its task template and the WHOLE prompt is
compressed with ``question=None`` at one budget per sample (:func:`evaluation.budget.budget_for` on the filled
prompt, MiniLM tokens), through the same per-sample machinery as the other suites
(:func:`evaluation.evaluate.evaluate`: cache, warm-up, error records, re-counting). What is measured is how
much of the human-written reference summary survives in the compressed text: ROUGE-1 and ROUGE-2 *recall* of
the reference by the compressed prompt. No reader LLM is involved, and the summaries are never trained on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from data_access.loaders import Sample
from evaluation.budget import MiniLMTokenCounter
from evaluation.cache import JsonCache
from evaluation.evaluate import evaluate
from evaluation.methods.base import AGNOSTIC, Method
from evaluation.metrics import rouge_n_recall

__all__ = ["ROUGE_FIELDS", "evenly_spaced", "score_summary_record", "evaluate_summ"]

ROUGE_FIELDS: dict[str, int] = {"rouge1_recall": 1, "rouge2_recall": 2}
_DROPPED = frozenset({"prompt", "evidence_recall", "answer_retention"})  # no gold sentences / short answers here

T = TypeVar("T")


def evenly_spaced(items: Sequence[T], count: int | None) -> list[T]:
    """``count`` items spread evenly over ``items`` (positions ``floor(i * n / count)``); all when ``None``."""
    if count is None or count >= len(items):
        return list(items)
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    return [items[index * len(items) // count] for index in range(count)]


def score_summary_record(record: Mapping[str, Any], reference: str) -> dict[str, Any]:
    """The record with ROUGE-1/2 recall of ``reference`` by its compressed text, and without that text.

    The TPC task description (``info.task_description``) is lifted to ``task_description``; the QA proxies
    (evidence recall, answer retention: always empty here) are dropped. A record whose method failed
    (``error``) gets no scores.
    """
    scored = {key: value for key, value in record.items() if key not in _DROPPED}
    if "error" not in record and "prompt" in record:
        for field, n in ROUGE_FIELDS.items():
            scored[field] = rouge_n_recall(record["prompt"], reference, n)
    description = (record.get("info") or {}).get("task_description")
    if description is not None:
        scored["task_description"] = description
    return scored


def evaluate_summ(
    samples: Sequence[Sample],
    methods: Mapping[str, Method],
    counter: MiniLMTokenCounter,
    *,
    rate: float | None = None,
    target_tokens: int | None = None,
    cache: JsonCache | None = None,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Compress every filled prompt with every method (prompt-agnostic) and score it against ``answers[0]``.

    Returns:
        ``(records, skipped)`` as :func:`evaluation.evaluate.evaluate`, each record with ``rouge1_recall`` and
        ``rouge2_recall`` added and the compressed text dropped.
    """
    unsupported = [name for name, method in methods.items() if AGNOSTIC not in method.settings]
    if unsupported:
        raise ValueError(f"method(s) {', '.join(unsupported)} need a question; the summarisation suite has none")
    records, skipped = evaluate(samples, methods, counter, rate=rate, target_tokens=target_tokens,
                                settings=(AGNOSTIC,), cache=cache, keep_prompts=True)  # fmt: skip
    references = {sample.id: sample.answers[0] for sample in samples}
    return [score_summary_record(record, references[record["sample_id"]]) for record in records], skipped
