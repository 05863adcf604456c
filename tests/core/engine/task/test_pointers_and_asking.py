"""A line that points at the request is not the request, and a sentence that asks is a candidate wherever it
stands: the word rules (pure) and prompt-agnostic compression with the shipped tpc-mini."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthesis.composed import Family, compose, families
from tpc_core.engine.task.cues import is_generic, is_pointer, pointer_direction
from tpc_core.engine.task.placement import asking_sentences
from tpc_core.segmentation import split_sentences

FACTS = (
    "The lease starts on 1 May 2024 and runs for twelve months.", "Rent of 1,200 euros is due on the first day.",
    "The tenant pays for water and electricity.", "The landlord repairs the roof and the heating.",
    "A deposit of two months' rent is held by the agency.", "Pets are allowed with written consent.",
    "The Eiffel Tower was finished in 1889 for the World's Fair.", "Bananas grow in tropical regions.",
    "The council approved the new budget on Monday.", "Roads were closed for a day after the storm.",
    "The museum opens at nine and closes at six.", "Tickets cost twelve euros for adults.",
)
MATERIAL = "\n\n".join(" ".join(FACTS[k:k + 3]) for k in range(0, len(FACTS), 3))
POLICY = """Remote Work Expense Policy

This policy explains which costs of working away from the office the company reimburses. It applies to all \
permanent staff and to contractors whose agreements refer to it. Managers approve claims before they are paid, and \
the finance team checks every claim against the rules below before the money is transferred.

Equipment bought for home working, such as a monitor, a keyboard or a chair, is reimbursed up to 400 euros per \
employee every two years. Receipts must be attached to the claim. Items remain company property and are returned \
when the employment ends. Repairs to equipment are reimbursed when the item is less than three years old.

Internet costs are shared when an employee works from home at least three days a week. In that case half of the \
monthly internet bill is reimbursed, up to 30 euros a month. Staff who work from home on fewer than three days a \
week get no internet reimbursement at all. Electricity and heating are not reimbursed, since they are covered by \
the home working allowance.

The home working allowance is 2 euros per day worked from home and is paid with the monthly salary. It is \
registered automatically from the attendance system. Travel to the office on a home working day is not \
reimbursed. Parking at the office is free for staff who come in fewer than two days a week.

Mobile phones are provided to staff who are on call. Private calls on a company phone are allowed within reason. \
Lost or stolen phones are reported to the service desk within one working day.

Claims are submitted through the expense portal within sixty days of the purchase. Late claims are refused \
unless the manager gives a written reason. Fraudulent claims lead to disciplinary action. The finance team \
publishes the current rates on the intranet every January.

Questions about this policy should be directed to HR."""
ASKED = "I have a question: can I claim my internet bill if I only work from home one day a week?"
ANSWER = "Staff who work from home on fewer than three days a week get no internet reimbursement at all."


# ------------------------------------------------------------------ the word rules (pure)
@pytest.mark.parametrize("text", ["Now answer the question.", "Please respond to it.", "answer what was asked above",
                                  "The query follows below.", "Reply to the query.", "Address my request below."])
def test_a_reference_to_the_request_is_a_pointer(text: str) -> None:
    assert is_pointer(text) and is_generic(text)


@pytest.mark.parametrize("text", ["Who signed the lease?", "Summarize the document above.", ASKED,
                                  "Questions about this policy should be directed to HR.",
                                  "what was the question the committee asked about the budget"])
def test_a_request_with_content_is_no_pointer(text: str) -> None:
    assert not is_pointer(text)


def test_generic_instructions_point_at_nothing() -> None:
    assert is_generic("Answer briefly and cite the documents.")
    assert not is_pointer("Answer briefly and cite the documents.")
    assert pointer_direction("Answer the questions above.") == (-1, True)
    assert pointer_direction("Reply to the query that follows.") == (1, False)


def test_a_question_inside_a_paragraph_is_a_candidate() -> None:
    prompt = POLICY.replace("at least three days a week. ", f"at least three days a week. {ASKED} ")
    spans = split_sentences(prompt)
    assert [prompt[spans[k][0]:spans[k][1]] for k in asking_sentences(prompt, spans)] == [ASKED]


def test_questions_a_document_quotes_or_lists_are_no_candidates() -> None:
    prompt = ('Interviewer: Can you tell me about your first film?\nDirector: It was a short.\n\n'
              '"Could you tell me the time?" she asked. He did not answer.\n\n'
              '1. Can I claim the bill?\n2. Can I claim the chair?\n\nThe rules are strict.')
    assert asking_sentences(prompt, split_sentences(prompt)) == []


# ------------------------------------------------------------------ with the shipped model
def test_a_closing_pointer_resolves_to_the_question_at_the_top(tpc_mini) -> None:
    prompt = f"Who repairs the heating?\n\n{MATERIAL}\n\nNow answer the question above."
    result = tpc_mini.compress(prompt, rate=0.2)
    assert result.task_description == "Who repairs the heating?"
    assert "Who repairs the heating?" in result.compressed_prompt
    assert "Now answer the question above." in result.compressed_prompt
    assert "The landlord repairs the roof and the heating." in result.compressed_prompt


def test_a_task_line_pointing_at_the_query_section_keeps_the_query(tpc_mini) -> None:
    prompt = (f"# Task\nReply to the query using the notes.\n\n## Notes\n{MATERIAL}\n\n## Query\n"
              f"when do the museum doors open\n\n## Answer\n")
    result = tpc_mini.compress(prompt, rate=0.2)
    assert result.task_description == "when do the museum doors open"
    assert "when do the museum doors open" in result.compressed_prompt
    assert "Reply to the query using the notes." in result.compressed_prompt


def test_a_pointer_with_nothing_to_point_at_is_kept_and_asks_nothing_else(tpc_mini) -> None:
    prompt = f"{MATERIAL}\n\nPlease respond to it."
    result = tpc_mini.compress(prompt, rate=0.3)
    assert "Please respond to it." in result.compressed_prompt
    assert str(result.task_source) == "fallback"
    assert result.request_sentences == 1


def test_a_pointer_to_several_questions_keeps_them_all(tpc_mini) -> None:
    prompt = f"When is the rent due?\n\n{MATERIAL}\n\nWho repairs the heating?\n\nAnswer both questions above."
    result = tpc_mini.compress(prompt, rate=0.2)
    for text in ("When is the rent due?", "Who repairs the heating?", "Answer both questions above."):
        assert text in result.compressed_prompt


def test_a_generic_part_of_the_request_adds_nothing_to_its_description(tpc_mini) -> None:
    prompt = f"{MATERIAL}\n\nWho repairs the heating? Answer in one short sentence."
    result = tpc_mini.compress(prompt, rate=0.2)
    assert result.task_description == "Who repairs the heating?"
    assert "Who repairs the heating? Answer in one short sentence." in result.compressed_prompt


MIDDLE_GAP = pytest.mark.xfail(strict=True, reason=(
    "kept, but the answer (merged by the splitter into a 44-token sentence with the one before it) loses by 0.012 "
    "in score to a sentence beside the question"))


@pytest.mark.parametrize("where", ["inside a paragraph", pytest.param("its own middle paragraph", marks=MIDDLE_GAP)])
def test_the_new_users_question_and_its_answer_are_kept(tpc_mini, where: str) -> None:
    if where == "inside a paragraph":
        prompt = POLICY.replace("up to 30 euros a month. ", f"up to 30 euros a month. {ASKED} ")
    else:
        prompt = POLICY.replace("\n\nThe home working allowance", f"\n\n{ASKED}\n\nThe home working allowance")
    result = tpc_mini.compress(prompt, rate=0.2)
    assert ASKED in result.compressed_prompt
    assert ANSWER in result.compressed_prompt
    assert "HR" not in (result.task_description or "")


def test_a_bare_policy_still_asks_nothing(tpc_mini) -> None:
    assert tpc_mini.find_request(POLICY) is None


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(families()), question=st.sampled_from(
    ("When is the rent due?", "Who repairs the heating?", "How much do adult tickets cost?",
     "Was the budget approved on Monday?")), rate=st.floats(0.05, 0.5), seed=st.integers(0, 10_000))
@pytest.mark.slow
def test_any_request_in_any_composed_layout_is_kept(tpc_mini, family: Family, question: str, rate: float,
                                                    seed: int) -> None:
    composed = compose(family, question, MATERIAL, random.Random(seed))
    result = tpc_mini.compress(composed.prompt, rate=rate)
    assert composed.question in result.compressed_prompt, (family.name, result.compressed_prompt)
