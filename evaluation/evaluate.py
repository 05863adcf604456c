"""Run methods over samples in the prompt-aware and prompt-agnostic settings; one record per (method, sample).

* prompt-aware: compress the context given the question (or, when the task has none, its instruction), then
  fill the task template with the compressed context.
* prompt-agnostic: fill the template first, then compress the whole prompt with no question.

Budgets come from :func:`evaluation.budget.budget_for` on the text being compressed, counted with the one
MiniLM counter, and every output is re-counted with it. Records are cached per sample, so an interrupted run
resumes; a method failing on one sample records the error and the run goes on.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from data_access.loaders import Sample
from evaluation.budget import MiniLMTokenCounter, budget_for
from evaluation.cache import JsonCache, cache_key
from evaluation.methods.base import AGNOSTIC, AWARE, Method
from evaluation.metrics import answer_retention, evidence_recall, score_prediction
from evaluation.reader import CachedReader
from synthesis.templates import NO_CHAT_TEMPLATE, fill_template, instruction_query

__all__ = ["SETTINGS", "evaluate", "compress_one"]

logger = logging.getLogger(__name__)

SETTINGS: tuple[str, ...] = (AWARE, AGNOSTIC)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def compress_one(
    method: Method, sample: Sample, setting: str, counter: MiniLMTokenCounter, *,
    rate: float | None, target_tokens: int | None,
) -> dict[str, Any]:  # fmt: skip
    """Compress one sample in one setting; returns the record (no reader fields)."""
    if setting == AWARE:
        text = sample.context
        question = instruction_query(sample.template, sample.question)
        scaffold = ""
    else:
        text = fill_template(sample.template, sample.context, sample.question)
        question = None
        scaffold = fill_template(sample.template, "", sample.question)
    origin = counter(text)
    budget = budget_for(origin, rate=rate, target_tokens=target_tokens)
    record: dict[str, Any] = {
        "method": method.name, "setting": setting, "sample_id": sample.id, "dataset": sample.dataset,
        "source": sample.source, "origin_tokens": origin, "budget": budget,
    }  # fmt: skip
    started = time.perf_counter()
    try:
        output = method.compress(text, question, budget, sample_id=sample.id)
    except Exception as error:  # noqa: BLE001 (one failing sample must not end the run)
        logger.warning("%s/%s failed on %s: %s", method.name, setting, sample.id, error)
        record.update(error=f"{type(error).__name__}: {error}", seconds=time.perf_counter() - started)
        return record
    seconds = time.perf_counter() - started
    compressed_tokens = counter(output.text)
    prompt = fill_template(sample.template, output.text, sample.question) if setting == AWARE else output.text
    record.update(
        seconds=seconds,
        compressed_tokens=compressed_tokens,
        over_budget=None if method.name == "full" else compressed_tokens > budget,
        evidence_recall=evidence_recall(output.text, sample.supporting_sentences, sample.context),
        answer_retention=answer_retention(output.text, sample.answers, sample.context, scaffold),
        prompt=prompt,
        info=output.info,
    )
    return record


def evaluate(
    samples: Sequence[Sample],
    methods: Mapping[str, Method],
    counter: MiniLMTokenCounter,
    *,
    rate: float | None = None,
    target_tokens: int | None = None,
    settings: Sequence[str] = SETTINGS,
    cache: JsonCache | None = None,
    reader: CachedReader | None = None,
    keep_prompts: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Evaluate every available method on every sample in each setting it supports.

    Returns:
        ``(records, skipped)``: one record per (method, setting, sample); ``skipped`` maps a method name to
        the reason it could not run here.
    """
    run = _Run(counter, rate, target_tokens, cache or JsonCache(None), reader, keep_prompts)
    records: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    for name, method in methods.items():
        reason = method.unavailable_reason()
        if reason is not None:
            skipped[name] = reason
            logger.warning("skipping %s: %s", name, reason)
            continue
        identity = method.identity()
        warm_up = _WarmUpOnce(name, method)
        for setting in settings:
            if setting in method.settings:
                records += _setting_records(name, method, identity, setting, samples, run, warm_up)
    return records, skipped


@dataclass(frozen=True)
class _Run:
    """What every (method, setting, sample) of one :func:`evaluate` call shares."""

    counter: MiniLMTokenCounter
    rate: float | None
    target_tokens: int | None
    cache: JsonCache
    reader: CachedReader | None
    keep_prompts: bool


class _WarmUpOnce:
    """Warms a method up before its first computed (not cached) sample, at most once."""

    def __init__(self, name: str, method: Method) -> None:
        self.name = name
        self.method = method
        self.warmed = False

    def __call__(self) -> None:
        if self.warmed:
            return
        self.warmed = True
        try:
            self.method.warm_up()
        except Exception as error:  # noqa: BLE001 (the samples will record the failure)
            logger.warning("%s: warm-up failed: %s", self.name, error)


def _setting_records(name: str, method: Method, identity: Any, setting: str, samples: Sequence[Sample], run: _Run,
                     warm_up: _WarmUpOnce) -> list[dict[str, Any]]:
    """One record per sample for one method in one setting, from the cache where it has them."""
    records: list[dict[str, Any]] = []
    started = time.perf_counter()
    computed = 0
    for position, sample in enumerate(samples, 1):
        key = cache_key(
            "compress/v1", identity, setting, sample.id, _digest(sample.context + "\x00" + sample.question),
            _digest(sample.template), run.rate, run.target_tokens,
        )  # fmt: skip
        record = run.cache.get("compress", key)
        if record is None:
            warm_up()
            record = compress_one(method, sample, setting, run.counter, rate=run.rate, target_tokens=run.target_tokens)
            if "error" not in record:
                run.cache.put("compress", key, record)
            computed += 1
        record["method"] = method.name  # the row label; a cached record may come from another label
        if run.reader is not None and "prompt" in record:
            _read(record, sample, run.reader)
        if not run.keep_prompts:
            record = {k: v for k, v in record.items() if k != "prompt"}
        records.append(record)
        if position % 25 == 0 or position == len(samples):
            logger.info(
                "%s/%s rate=%s: %d/%d samples (%d computed, %.0fs)",
                name, setting, run.rate if run.target_tokens is None else f"{run.target_tokens}tok", position,
                len(samples), computed, time.perf_counter() - started,
            )  # fmt: skip
    return records


def _read(record: dict[str, Any], sample: Sample, reader: CachedReader) -> None:
    answer = reader.answer(
        record["prompt"], max_new_tokens=sample.max_new_tokens, chat=sample.dataset not in NO_CHAT_TEMPLATE
    )
    record["answer"] = answer
    record["score"] = score_prediction(
        sample.metric, answer, sample.answers, dataset=sample.dataset, all_classes=sample.all_classes
    )
