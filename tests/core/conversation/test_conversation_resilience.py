"""The engine side of a chat that keeps going: a budget below the protected messages (strict or best
effort), Anthropic-style content blocks (tool_use / tool_result, nested text blocks) read, compressed and counted,
and what becomes of a message that loses every sentence (``emptied``). Pure parts without a model; behaviour with
the real shipped tpc-mini."""

from __future__ import annotations

import warnings

import pytest

from tests.conversation_helpers import is_selection
from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION, SYSTEM
from tpc_core.conversation.compress import plan_conversation
from tpc_core.conversation.messages import read_messages, rebuild_message
from tpc_core.diagnostics.notices import TPCRuntimeWarning

DOCUMENT = "\n\n".join(PARAGRAPHS[3:])


def anthropic_conversation(nested: bool) -> list[dict]:
    """The user asks, the assistant calls a tool (``tool_use``), the tool's result comes back in a user turn."""
    result = ([{"type": "text", "text": DOCUMENT}, {"type": "image", "source": {"type": "url", "url": "u"}}]
              if nested else DOCUMENT)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me fetch the text."},
                                          {"type": "tool_use", "id": "t1", "name": "fetch", "input": {"part": 2}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": result}]},
    ]


# ------------------------------------------------------------------------------------------- pure: no model
def test_tool_result_blocks_are_read_as_tool_messages_and_rebuilt_in_place():
    for nested in (False, True):
        read = read_messages(anthropic_conversation(nested))
        assert [m.role for m in read] == ["system", "user", "assistant", "tool"]
        assert read[2].parts == ("Let me fetch the text.", None)  # tool_use is not text
        assert read[3].parts == ((DOCUMENT, None) if nested else (DOCUMENT,))
        assert read[1].text == QUESTION and read[3].text == ""  # a tool's text is not what the user wrote
        original = anthropic_conversation(nested)
        rebuilt = rebuild_message(original[3], read[3], ("Short.", None) if nested else ("Short.",))
        block = rebuilt["content"][0]
        assert (block["type"], block["tool_use_id"]) == ("tool_result", "t1")
        assert block["content"] == ([{"type": "text", "text": "Short."}, original[3]["content"][0]["content"][1]]
                                    if nested else "Short.")
        assert original == anthropic_conversation(nested)  # the input is not changed


def test_the_task_is_the_latest_turn_the_user_wrote_and_a_mixed_turn_compresses_its_tool_results():
    read = read_messages(anthropic_conversation(False))
    plan = plan_conversation(read, [[10], [5], [3, 0], [100]], target_tokens=40)
    assert (plan.task, plan.task_index, plan.protected) == (QUESTION, 1, (True, True, False, False))
    mixed = read_messages([{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": DOCUMENT}, {"type": "text", "text": QUESTION}]}])
    plan = plan_conversation(mixed, [[100, 5]], target_tokens=40)
    assert (mixed[0].role, plan.task, plan.protected_tokens, plan.room) == ("user", QUESTION, 5, 35)
    assert not plan.is_fixed(0, 0) and plan.is_fixed(0, 1)


def test_a_budget_below_the_protected_messages_is_a_plan_with_a_shortfall_unless_strict():
    read = read_messages([{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}])
    with pytest.raises(ValueError, match="need 20 tokens"):
        plan_conversation(read, [[10], [10]], target_tokens=5)
    plan = plan_conversation(read, [[10], [10]], target_tokens=5, strict=False)
    assert (plan.budget, plan.need, plan.shortfall, plan.room) == (5, 20, 15, -15)


def test_drop_empty_leaves_out_emptied_text_parts_but_never_the_last_part():
    message = {"role": "tool", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}]}
    read = read_messages([message])[0]
    assert rebuild_message(message, read, ("", None), drop_empty=True)["content"] == [message["content"][1]]
    assert rebuild_message(message, read, ("", None))["content"][0] == {"type": "text", "text": ""}
    alone = {"role": "tool", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    assert rebuild_message(alone, read_messages([alone])[0], ("", ""), drop_empty=True)["content"] == [
        {"type": "text", "text": ""}]


# ------------------------------------------------------------------------------------------- the real tpc-mini
@pytest.mark.slow
@pytest.mark.parametrize("nested", [False, True])
def test_anthropic_tool_results_are_compressed_and_counted_for_the_question_asked_before_them(tpc_mini, nested):
    conversation = anthropic_conversation(nested)
    counter = tpc_mini.token_counter
    result = tpc_mini.compress_messages(conversation, target_tokens=150, return_result=True)
    assert result.task == QUESTION and str(result.result.task_source) == "question"
    out = result.messages[3]["content"][0]
    text = out["content"][0]["text"] if nested else out["content"]
    assert text and len(text) < len(DOCUMENT) and is_selection(DOCUMENT, text, tpc_mini.engine.splitter())
    returned = [SYSTEM, QUESTION, result.messages[2]["content"][0]["text"], text]
    assert result.compressed_tokens == sum(map(counter, returned)) <= 150  # every text returned is counted
    assert result.origin_tokens == sum(map(counter, [SYSTEM, QUESTION, "Let me fetch the text.", DOCUMENT]))


@pytest.mark.slow
def test_best_effort_when_the_protected_messages_exceed_the_budget(tpc_mini):
    # what must be kept whole over the budget: a long system message (a long latest user turn is compressed
    # around its request, or prompt-agnostically: tests/core/conversation/test_single_message_chats.py)
    conversation = [{"role": "system", "content": SYSTEM + " Background: " + DOCUMENT},
                    {"role": "user", "content": DOCUMENT}, {"role": "assistant", "content": "Noted."},
                    {"role": "user", "content": "What is this about?"}]
    with pytest.raises(ValueError, match="smaller than the messages kept whole"):
        tpc_mini.compress_messages(conversation, target_tokens=100, strict=True, return_result=True)
    with pytest.warns(TPCRuntimeWarning, match="over its budget of 100") as caught:  # the default: not strict
        result = tpc_mini.compress_messages(conversation, target_tokens=100, emptied="empty", return_result=True)
    assert caught[0].filename == __file__  # at the caller's line
    assert result.messages[0] == conversation[0] and result.messages[3] == conversation[3]  # protected: whole
    assert [m["content"] for m in result.messages[1:3]] == ["", ""]  # the rest emptied (emptied="empty")
    assert result.over_budget == result.compressed_tokens - 100 > 0 and "over its budget" in result.warning


@pytest.mark.slow
def test_emptied_sentence_keeps_one_sentence_of_every_message_that_had_text(tpc_mini):
    conversation = [{"role": "user", "content": PARAGRAPHS[2]}, {"role": "assistant", "content": "Noted. Thanks."},
                    {"role": "tool", "content": [{"type": "text", "text": PARAGRAPHS[3]},
                                                 {"type": "text", "text": PARAGRAPHS[4]}]},
                    {"role": "user", "content": QUESTION}]
    budget = tpc_mini.token_counter(QUESTION) + 40
    empty = tpc_mini.compress_messages(conversation, target_tokens=budget, emptied="empty", return_result=True)
    assert "" in [empty.messages[1]["content"], empty.messages[0]["content"]]  # "empty" empties some
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # within the budget: no warning
        kept = tpc_mini.compress_messages(conversation, target_tokens=budget + 60, return_result=True)  # "sentence"
    for after in kept.messages[:3]:
        texts = [after["content"]] if isinstance(after["content"], str) else [p["text"] for p in after["content"]]
        assert all(texts) and any(t.strip() for t in texts)  # at least one sentence, no empty text part
    assert kept.compressed_tokens <= budget + 60 and kept.messages[3] == conversation[3]
    dropped = tpc_mini.compress_messages(conversation, target_tokens=budget, emptied="drop", return_result=True)
    assert all(p["text"] for p in dropped.messages[2]["content"])  # an emptied text part left out of its list
    with pytest.raises(ValueError, match="emptied must be one of"):
        tpc_mini.compress_messages(conversation, target_tokens=budget, emptied="none", return_result=True)


@pytest.mark.parametrize("cache, error, match", [(5, TypeError, "cache must be"),
                                                 ("mem", ValueError, "did you mean 'memory'")])
def test_a_bad_cache_is_refused_even_when_nothing_needs_compressing(tpc_mini, cache, error, match):
    short = [{"role": "user", "content": "What is the late fee?"}]
    assert tpc_mini.compress_messages(short, target_tokens=500) == short  # within budget: no engine call
    with pytest.raises(error, match=match):
        tpc_mini.compress_messages(short, target_tokens=500, cache=cache)
    with pytest.raises(error, match=match):  # as compress refuses it for a prompt within its budget
        tpc_mini.compress("What is the late fee?", target_tokens=500, cache=cache)


def test_a_sentence_larger_than_the_room_is_named_against_the_conversations_budget(tpc_mini):
    """The engine's budget is what the conversation's budget leaves after the parts kept whole: the warning says
    so, with the budget the caller gave, instead of calling the share "the whole budget"."""
    long_sentence = "The archive holds " + ", ".join(f"box {k} of letters from Lyon" for k in range(15)) + "."
    conversation = [{"role": "system", "content": "You answer from the archive notes."},
                    {"role": "assistant", "content": long_sentence + " Box 3 is missing. Box 7 got wet."},
                    {"role": "user", "content": "Which box is missing?"}]
    with pytest.warns(UserWarning, match="larger than") as caught:
        result = tpc_mini.compress_messages(conversation, target_tokens=30, return_result=True)
    message = next(str(w.message) for w in caught if "larger than" in str(w.message))
    room = result.budget - result.protected_tokens
    assert "whole budget" not in message
    assert (f"the {room} tokens left of the conversation's budget of 30 after the parts kept whole "
            f"(system and developer messages, the latest user turn: {result.protected_tokens} tokens)") in message
