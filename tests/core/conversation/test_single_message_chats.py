"""The latest user turn when it carries material: compressed around its request, under the one budget.

The single-message "document + question" chat: the request sentences are found by the checkpoint's request head
and kept verbatim; the pasted material is compressed for them with the other messages. Real shipped tpc-mini.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conversation_helpers import is_selection
from tpc_core.conversation.compress import MATERIAL_TOKENS

TEXT = (Path(__file__).resolve().parents[3] / "examples" / "data" / "declaration_of_independence.txt").read_text(
    encoding="utf-8")
PARAGRAPHS = [p for p in TEXT.split("\n\n") if p.strip()]
QUESTION = "What do the colonies declare about their allegiance to the British Crown?"
SYSTEM = "You are a historian. Answer from the documents only."


def _chat(user: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


@pytest.mark.parametrize("user", [
    "Please read this.\n\n" + "\n\n".join(PARAGRAPHS[:6]) + "\n\n" + QUESTION,
    QUESTION + "\n\nHere is the text:\n\n" + "\n\n".join(PARAGRAPHS[:6]),
    "\n\n".join(PARAGRAPHS[:6]) + "\n\nQuestion: " + QUESTION,
], ids=["after", "before", "labelled"])
def test_a_pasted_document_is_compressed_around_the_request(tpc_mini, user):
    counter = tpc_mini.token_counter
    result = tpc_mini.compress_messages(_chat(user), target_tokens=250, return_result=True)
    system, compressed = result.messages[0]["content"], result.messages[1]["content"]
    assert system == SYSTEM
    assert QUESTION in compressed and QUESTION in (result.task or "")  # the request, verbatim, is the task
    assert counter(system) + counter(compressed) == result.compressed_tokens <= 250 < counter(user)
    assert is_selection(user, compressed, tpc_mini.engine.splitter())  # verbatim sentences of the user's text, in order
    assert result.over_budget == 0


def test_a_turn_without_material_or_with_a_custom_splitter_stays_whole(tpc_mini):
    short = "Here is a note: the meeting moved to Tuesday. " + QUESTION
    assert tpc_mini.token_counter(short) < MATERIAL_TOKENS
    chat = [*_chat("\n\n".join(PARAGRAPHS[:4])), {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": short}]
    result = tpc_mini.compress_messages(chat, target_tokens=120, return_result=True)
    assert result.messages[-1]["content"] == short and result.task == short

    from tpc_core.segmentation import get_splitter

    user = "\n\n".join(PARAGRAPHS[:4]) + "\n\n" + QUESTION
    with pytest.raises(ValueError, match="smaller than the messages kept whole"):
        tpc_mini.compress_messages(_chat(user), target_tokens=120, splitter=get_splitter("regex"), strict=True,
                                   return_result=True)


def test_the_request_is_never_dropped_and_a_budget_below_it_says_so(tpc_mini):
    counter = tpc_mini.token_counter
    user = "\n\n".join(PARAGRAPHS[:5]) + "\n\n" + QUESTION
    found = tpc_mini.find_request(user)
    assert found is not None and QUESTION in [user[a:b] for a, b in found.spans]
    need = counter(SYSTEM) + sum(counter(user[a:b]) for a, b in found.spans)
    tight = tpc_mini.compress_messages(_chat(user), target_tokens=need + 3, return_result=True)
    assert QUESTION in tight.messages[1]["content"] and tight.compressed_tokens <= need + 3
    with pytest.raises(ValueError, match=f"need {need} tokens .*for the request sentences"):
        tpc_mini.compress_messages(_chat(user), target_tokens=need - 1, strict=True, return_result=True)
    relaxed = tpc_mini.compress_messages(_chat(user), target_tokens=need - 1, return_result=True)  # not strict
    assert QUESTION in relaxed.messages[1]["content"] and relaxed.over_budget > 0 and relaxed.warning


def test_the_callers_own_force_keep_patterns_still_apply(tpc_mini):
    user = "\n\n".join(PARAGRAPHS[:5]) + "\n\n" + QUESTION
    result = tpc_mini.compress_messages(_chat(user), target_tokens=200, force_keep_patterns=r"^When in",
                                        return_result=True)
    compressed = result.messages[1]["content"]
    assert QUESTION in compressed and "When in the Course of human events" in compressed


@given(first=st.integers(0, len(PARAGRAPHS) - 3), count=st.integers(2, 5), where=st.sampled_from(["after", "before"]),
       slack=st.integers(5, 400))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_single_message_chats_hold_the_budget_and_keep_the_request(tpc_mini, first, count, where, slack):
    counter = tpc_mini.token_counter
    material = "\n\n".join(PARAGRAPHS[first:first + count])
    user = f"{material}\n\n{QUESTION}" if where == "after" else f"{QUESTION}\n\n{material}"
    found = tpc_mini.find_request(user)
    pinned = sum(counter(user[a:b]) for a, b in found.spans) if found is not None else 0
    budget = counter(SYSTEM) + max(pinned, counter(QUESTION)) + slack  # what the request needs, and some room
    result = tpc_mini.compress_messages(_chat(user), target_tokens=budget, return_result=True)
    compressed = result.messages[1]["content"]
    assert result.compressed_tokens == counter(SYSTEM) + counter(compressed) <= budget
    assert is_selection(user, compressed, tpc_mini.engine.splitter())
    if result.task != user:  # compressed around the request: it is there, verbatim
        assert QUESTION in compressed


def test_a_pasted_document_with_no_request_over_the_budget_is_compressed_prompt_agnostically(tpc_mini):
    """A user who pastes a document and asks nothing gets the chat compressed, not ended."""
    counter = tpc_mini.token_counter
    document = "\n\n".join(PARAGRAPHS[1:6])
    assert tpc_mini.find_request(document) is None
    result = tpc_mini.compress_messages(_chat(document), target_tokens=200, describe_bare=False, return_result=True)
    compressed = result.messages[1]["content"]
    assert result.task is None and result.over_budget == 0
    assert counter(SYSTEM) + counter(compressed) == result.compressed_tokens <= 200
    assert compressed and is_selection(document, compressed, tpc_mini.engine.splitter())
    roomy = tpc_mini.compress_messages(_chat(document), target_tokens=5000, return_result=True)
    assert roomy.messages[1]["content"] == document and roomy.task == document
