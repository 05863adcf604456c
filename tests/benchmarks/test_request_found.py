"""The written-request check: outcomes summarised per family and shape (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.request_found import dev_records
from evaluation.request_outcomes import Outcome, summarise, summary_markdown
from synthesis.instructions import INSTRUCTION_FAMILIES, SHAPES

QA = Path(__file__).resolve().parents[3] / "shared" / "data" / "qa_dev.jsonl"


def test_summarise_counts_found_fallback_and_kept_empty_per_family_and_shape():
    outcomes = [
        Outcome("1", "imperative", "after_document", "Find out who founded Acme.", "Find out who founded Acme.",
                "extracted"),
        Outcome("2", "imperative", "few_shot", "Find out who founded Acme.", "Summarise the main points of the text.",
                "fallback"),
        Outcome("3", "mcq_select", "after_document", "Which gem is red? A. ruby B. jade", "A. ruby B. jade",
                "extracted"),
        Outcome("4", "no_request_bare", "after_document", "", "", "coverage"),
        Outcome("5", "no_request_bare", "chat_last_turn", "", "Thanks.", "extracted"),
    ]
    summary = summarise(outcomes)
    assert summary["all"]["with_request"] == 3 and summary["all"]["found"] == round(1 / 3, 4)
    assert summary["all"]["fallback"] == 1 and summary["all"]["no_request_kept_empty"] == 0.5
    assert summary["by_family"]["imperative"]["found"] == 0.5
    assert summary["by_family"]["mcq_select"]["found"] == 0.0  # options without their stem: 2 of 5 words
    assert summary["by_shape"]["after_document"] == {"prompts": 2, "with_request": 2, "found": 0.5, "fallback": 0,
                                                     "sources": {"extracted": 2}}
    assert "family `imperative`" in summary_markdown(summary, "t")


@pytest.mark.skipif(not QA.is_file(), reason="needs ../shared/data/qa_dev.jsonl")
def test_dev_records_fill_every_family_with_dev_rows_only():
    records = dev_records(str(QA), seed=13)
    dev = {json.loads(line)["id"] for line in QA.open() if json.loads(line)["split"] == "dev"}
    assert records and {r["source_id"] for r in records} <= dev
    assert {r["family"] for r in records} == set(INSTRUCTION_FAMILIES) and {r["shape"] for r in records} == set(SHAPES)
