"""A line that points at the request is not the request, a sentence that asks the reader is a candidate wherever it
stands, and a question that belongs to the material is none: the word rules (pure) and prompt-agnostic compression
with the shipped tpc-mini."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthesis.composed import Family, compose, families
from tests.core.engine.task.test_request_kept import FACTS
from tests.notice_helpers import compress_warning_when_oversized
from tpc_core.engine.task.asking import asking_sentences, material_question, unplaced_question
from tpc_core.engine.task.cues import is_generic, is_pointer, pointer_direction
from tpc_core.segmentation import split_sentences

MATERIAL = "\n\n".join(" ".join(FACTS[k:k + 3]) for k in range(0, len(FACTS), 3))


def _asking(prompt: str) -> list[str]:
    spans = split_sentences(prompt)
    return [prompt[spans[k][0]:spans[k][1]] for k in asking_sentences(prompt, spans)]


# ------------------------------------------------------------------ the word rules (pure)
@pytest.mark.parametrize("text", ["Now answer the question.", "Please respond to it.", "answer what was asked above",
                                  "The query follows below.", "Reply to the query.", "reply to the query"])
def test_a_reference_to_the_request_is_a_pointer(text: str) -> None:
    assert is_pointer(text) and is_generic(text)


@pytest.mark.parametrize("text", ["Please answer based on the above.", "Answer concisely.", "Thanks!",
                                  "the text above", "Be brief and cite the documents."])
def test_a_generic_instruction_carries_no_content(text: str) -> None:
    assert is_generic(text)


@pytest.mark.parametrize("text", ["Who signed the lease?", "Summarize the document above.",
                                  "Questions about this policy should be directed to HR.",
                                  "what was the question the committee asked about the budget"])
def test_a_request_with_content_is_no_pointer(text: str) -> None:
    assert not is_pointer(text)


def test_a_pointer_says_where_it_points() -> None:
    assert pointer_direction("Answer the questions above.") == (-1, True)
    assert pointer_direction("Reply to the query that follows.") == (1, False)


@pytest.mark.parametrize("asked", ["I have a question: can I pay the rent weekly?", "Quick question: who pays water?",
                                   "Could you tell me who repairs the heating?"])
def test_a_question_put_to_the_reader_inside_a_paragraph_is_a_candidate(asked: str) -> None:
    prompt = MATERIAL.replace("Pets are allowed with written consent.",
                              f"Pets are allowed with written consent. {asked}")
    assert _asking(prompt) == [asked]


def test_a_note_between_documents_proposes_its_question() -> None:
    note = ("A quick note before the remaining files. Who repairs the heating? The other documents are attached "
            "below, in the order I received them.")
    blocks = MATERIAL.split("\n\n")
    prompt = "\n\n".join([*blocks[:2], note, *blocks[2:]])
    assert _asking(prompt) == ["Who repairs the heating?"]


@pytest.mark.parametrize("material", [
    "Ms. Kwan: This year will I have to give you, what was it, another 14 detentions?\nMr. Lee: I hope not.",
    "DR. SMITH: Could you tell me where it hurts?\nPATIENT: In the knee.",
    "So here is the essential question: what does a city owe the people who built it?",
    "Frequently asked questions\nQ: How do I cite this page?\nA: Use the title and the date.",
    "> On Monday, Alex wrote:\n> Could you tell me the final figures by Friday? Thanks.",
    "Worked example. Question: Can I add 12 and 30?\nAnswer: 42.",
    '"Could you tell me the time?" she asked. He did not answer.',
    "1. Can I claim the bill?\n2. Can I claim the chair?",
])
def test_a_question_that_belongs_to_the_material_is_no_candidate(material: str) -> None:
    blocks = MATERIAL.split("\n\n")
    prompt = "\n\n".join([blocks[0], material, "Many of them are on the second floor. Two are not.", *blocks[1:]])
    assert _asking(prompt) == []
    spans = split_sentences(prompt)
    assert unplaced_question(prompt, spans) is None


def test_a_chat_role_the_vocabulary_names_is_a_turn_not_a_speaker() -> None:
    text = "User: Could you tell me who repairs the heating?"
    assert not material_question(text, 6, len(text))
    text = "Ms. Kwan: Could you tell me who repairs the heating?"
    assert material_question(text, 10, len(text))


# ------------------------------------------------------------------ with the shipped model
@pytest.mark.slow
def test_a_closing_pointer_resolves_to_the_question_at_the_top(tpc_mini) -> None:
    prompt = f"Who repairs the heating?\n\n{MATERIAL}\n\nNow answer the question above."
    result = tpc_mini.compress(prompt, rate=0.2)
    assert result.task_description == "Who repairs the heating?"
    for kept in ("Who repairs the heating?", "Now answer the question above.",
                 "The landlord repairs the roof and the heating."):
        assert kept in result.compressed_prompt


@pytest.mark.slow
def test_a_task_line_pointing_at_the_query_section_keeps_the_query(tpc_mini) -> None:
    prompt = (f"# Task\nReply to the query using the notes.\n\n## Notes\n{MATERIAL}\n\n## Query\n"
              f"when do the museum doors open\n\n## Answer\n")
    result = tpc_mini.compress(prompt, rate=0.2)
    assert result.task_description == "when do the museum doors open"
    assert "when do the museum doors open" in result.compressed_prompt
    assert "Reply to the query using the notes." in result.compressed_prompt


@pytest.mark.slow
def test_a_pointer_with_nothing_to_point_at_is_kept_and_asks_nothing_else(tpc_mini) -> None:
    result = tpc_mini.compress(f"{MATERIAL}\n\nPlease respond to it.", rate=0.3)
    assert "Please respond to it." in result.compressed_prompt
    assert result.task_source == "fallback"
    assert result.request_sentences == 1


@pytest.mark.slow
def test_a_pointer_to_several_questions_keeps_them_all(tpc_mini) -> None:
    prompt = f"When is the rent due?\n\n{MATERIAL}\n\nWho repairs the heating?\n\nAnswer both questions above."
    result = tpc_mini.compress(prompt, rate=0.2)
    for text in ("When is the rent due?", "Who repairs the heating?", "Answer both questions above."):
        assert text in result.compressed_prompt


@pytest.mark.slow
def test_a_generic_part_of_the_request_adds_nothing_to_its_description(tpc_mini) -> None:
    result = tpc_mini.compress(f"{MATERIAL}\n\nWho repairs the heating? Answer in one short sentence.", rate=0.2)
    assert result.task_description == "Who repairs the heating?"
    assert "Who repairs the heating? Answer in one short sentence." in result.compressed_prompt


@pytest.mark.slow
def test_a_request_of_three_parts_keeps_every_part(tpc_mini) -> None:
    request = "First read the notes above. Then answer in one short phrase: who repairs the heating? Keep it short."
    result = tpc_mini.compress(f"{MATERIAL}\n\n{request}", rate=0.4)  # the request alone takes a fifth of it
    assert request in result.compressed_prompt
    assert "who repairs the heating?" in (result.task_description or "")
    assert "First read" not in (result.task_description or "") and "Keep it" not in (result.task_description or "")
    assert "The landlord repairs the roof and the heating." in result.compressed_prompt


@pytest.mark.slow
def test_bare_material_with_questions_of_its_own_pins_nothing(tpc_mini) -> None:
    prompt = (f"{MATERIAL}\n\nMs. Kwan: This year will I have to give you, what was it, another 14 detentions?\n"
              f"Mr. Lee: I hope not.\n\nSo here is the essential question: what does a city owe its builders?\n\n"
              f"{MATERIAL}")
    assert tpc_mini.find_request(prompt) is None
    assert tpc_mini.compress(prompt, rate=0.2).request_sentences == 0


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(families()), question=st.sampled_from(
    ("When is the rent due?", "Who repairs the heating?", "How much do adult tickets cost?",
     "Was the budget approved on Monday?")), rate=st.floats(0.05, 0.5), seed=st.integers(0, 10_000))
@pytest.mark.slow
@pytest.mark.xfail(reason="known miss, not yet fixed: a request under a label word outside the vocabulary (the "
                          "held-out '### Ask' / '<ask>' labels, e.g. at the end of a chat's user turn) is not found, "
                          "and the question can be dropped", strict=False)
def test_the_request_is_kept_at_every_composed_position(tpc_mini, family: Family, question: str, rate: float,
                                                        seed: int) -> None:
    # every position (mid-prompt included), labelled or not, with or without a pointer, a question in the material
    composed = compose(family, question, MATERIAL, random.Random(seed))
    result = compress_warning_when_oversized(tpc_mini, composed.prompt, rate=rate)
    assert composed.question in result.compressed_prompt, (family.name, result.compressed_prompt)
