"""The shipped tpc-mini finds requests written as instructions, in everyday prompt shapes.

Each prompt below writes its request in one of the kinds the request head was taught (an instruction with no
question mark, a numbered true/false item, a request over two sentences, a multiple-choice stem with its
options) around the bundled example document. The written request must come back as the task description,
extracted from the prompt (nothing generated), with at least 80 % of the content words of its parts that carry
content (a generic part, "Details: quote each one.", is kept but adds nothing to the description).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tpc_core.engine.task.cues import is_generic
from tpc_core.engine.task.grounding import request_covered

DOCUMENT = (Path(__file__).resolve().parents[4] / "examples" / "data" / "declaration_of_independence.txt").read_text(
    encoding="utf-8")

REQUESTS = (
    "Highlight the parts (if any) of this document that list grievances about taxes. Details: quote each one.",
    "Please describe what the signers pledged to each other at the end of the declaration.",
    "4. The king dissolved representative houses repeatedly, True or False?",
    "I need to get some more information about the colonies' complaints. Was the king accused of cutting off trade?",
    "Question 2. Which of the following does the declaration accuse the king of? Select all that apply.\n"
    "A. Quartering armed troops\nB. Building railways\nC. Cutting off trade\nD. Raising wages",
)


def _shapes(request: str) -> list[str]:
    return [f"{DOCUMENT}\n\n{request}",
            f"User: Please read this first.\n\n{DOCUMENT}\n\nAssistant: I have read it.\n\nUser: {request}\n\n"
            "Assistant:",
            f"{request}\n\nText:\n{DOCUMENT}"]


@pytest.mark.slow
@pytest.mark.parametrize("request_text", REQUESTS)
def test_a_request_written_as_an_instruction_is_extracted(tpc_mini, request_text):
    for prompt in _shapes(request_text):
        result = tpc_mini.compress(prompt, rate=0.2)
        assert result.task_source == "extracted", (result.task_source, result.task_description)
        assert request_covered(_content_parts(request_text), result.task_description), result.task_description
        assert all(part in result.compressed_prompt for part in request_text.splitlines())


def _content_parts(request: str) -> str:
    """The request without its generic parts ("Details: quote each one."), which add nothing to what it asks."""
    return " ".join(part for part in re.split(r"(?<=[.?])\s+", request) if not is_generic(part))


@pytest.mark.slow
def test_a_bare_document_in_a_chat_gets_no_extracted_request(tpc_mini):
    result = tpc_mini.compress(f"User: Please read this first.\n\n{DOCUMENT}\n\nAssistant:", rate=0.2)
    assert result.task_source != "extracted", result.task_description


def test_a_question_after_a_one_sentence_text_is_extracted(tpc_mini):
    first = DOCUMENT.split("\n\n")[0].strip()
    question = "What does a decent respect to the opinions of mankind require?"
    found = tpc_mini.find_request(f"{first}\n\nQuestion: {question}")
    assert found is not None and found.text == question


def test_a_repetitive_bare_report_gets_no_extracted_request(tpc_mini):
    text = " ".join(f"The ferry to island {i % 7} left the harbour at {8 + i % 9} o'clock with {20 + i} passengers "
                    "aboard." for i in range(60))
    assert tpc_mini.find_request(text) is None
