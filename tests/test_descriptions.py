"""What the shipped tpc-mini writes as the task description of real prompts (prompt-agnostic mode).

A prompt that writes its question must get that question back (its key words, options included); a
summarisation prompt and a bare document must get a request to summarise, never an invented question.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "data"
DECLARATION = (EXAMPLES / "declaration_of_independence.txt").read_text(encoding="utf-8")
STOPWORDS = {"the", "a", "an", "of", "in", "is", "was", "what", "which", "who", "to", "did", "does", "for", "on",
             "and", "by", "how", "with", "that", "from", "at", "as", "be", "are", "were"}


def _key_words(question: str) -> set[str]:
    return {w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS}


def _restates(description: str, question: str) -> bool:
    wanted = _key_words(question)
    return len(wanted & _key_words(description)) >= 0.8 * len(wanted)


@pytest.mark.slow
def test_the_written_question_of_the_bundled_example_comes_back(tpc_mini):
    question = json.loads((EXAMPLES / "declaration_of_independence.json").read_text(encoding="utf-8"))["question"]
    prompt = DECLARATION + f"\n\nQuestion: {question}\nAnswer:"
    result = tpc_mini.compress(prompt, rate=0.2)
    assert result.task_source == "extracted" and _restates(result.task_description, question)


@pytest.mark.slow
def test_dev_prompts_in_longbench_and_held_out_layouts_get_their_question(tpc_mini, dev_rows):
    from benchmarks.templates import QA_DEV_TEMPLATES, fill_template

    rows = [dev_rows[i] for i in (0, 60, 120)]
    prompts = [fill_template(QA_DEV_TEMPLATES[row["task_type"]], row["context"], row["question"]) for row in rows]
    # a layout the descriptor never saw in training: the question first, in markdown sections
    prompts += [f"### Question\n{row['question']}\n\n### Context\n{row['context']}" for row in rows]
    descriptions = tpc_mini.describe_task(prompts)
    for description, row in zip(descriptions, rows + rows):
        assert _restates(description, row["question"]), (description, row["question"])


@pytest.mark.slow
def test_summarisation_prompts_and_bare_documents_ask_for_a_summary(tpc_mini):
    report = ("You are given a report by a government agency. Write a one-page summary of the report.\n\nReport:\n"
              f"{DECLARATION}\n\nNow, write a one-page summary of the report.\n\nSummary:")
    for prompt in (report, DECLARATION):
        result = tpc_mini.compress(prompt, rate=0.2)
        assert result.task_source in ("generated", "fallback")  # no request is written in these prompts
        assert re.search(r"summar", result.task_description, re.IGNORECASE), result.task_description
        assert "?" not in result.task_description  # no invented question
