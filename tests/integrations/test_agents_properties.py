"""Hypothesis-generated agent trajectories through the real tpc-mini: whatever the budget, the model's view is a
valid message sequence (every tool message right after the tool calls it answers, ids kept), in every content
shape and in LangChain's, OpenAI's and Anthropic's message shapes; an excluded tool's results are byte-identical in
every scope, and a result sent before is re-sent as the same bytes."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langchain.agents")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, convert_to_openai_messages

from tests.conversation_helpers import is_selection, texts_of
from tests.core.conversation.test_conversations import PARAGRAPHS
from tpc_core.conversation import ToolResultLedger, read_messages, tool_calls_by_id
from tpc_integrations.langchain_agents import TPCContextHook

SENTENCES = [s.strip() + "." for p in PARAGRAPHS for s in p.split(". ") if len(s.strip()) > 20]
IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/scan.png"}}


@st.composite
def tool_text(draw) -> str:
    picks = draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=8))
    kind = draw(st.sampled_from(["prose", "paragraphs", "json"]))
    if kind == "json":
        return json.dumps([{"id": k, "text": s} for k, s in enumerate(picks)], indent=draw(st.sampled_from([None, 2])))
    return ("\n\n" if kind == "paragraphs" else " ").join(picks)


@st.composite
def tool_content(draw):
    text = draw(tool_text())
    shape = draw(st.sampled_from(["str", "text_block", "blocks_with_image", "two_texts"]))
    if shape == "str":
        return text
    if shape == "text_block":
        return [{"type": "text", "text": text}]
    if shape == "blocks_with_image":
        return [{"type": "text", "text": text}, IMAGE]
    return [{"type": "text", "text": text}, {"type": "text", "text": draw(tool_text())}]


@st.composite
def trajectories(draw) -> list:
    messages: list = [SystemMessage("You are an agent. Use the tools.", id="sys")] if draw(st.booleans()) else []
    turns = draw(st.integers(1, 2))
    for turn in range(turns):
        messages.append(HumanMessage(draw(st.sampled_from(SENTENCES)), id=f"h{turn}"))
        for step in range(draw(st.integers(1, 2))):
            ids = [f"c{turn}_{step}_{k}" for k in range(draw(st.integers(1, 2)))]
            calls = [{"name": draw(st.sampled_from(["search", "read"])),
                      "args": {"q": draw(st.sampled_from(SENTENCES))}, "id": call_id} for call_id in ids]
            messages.append(AIMessage(draw(st.sampled_from(["", "Let me look."])), tool_calls=calls,
                                      id=f"a{turn}_{step}"))
            order = draw(st.permutations(ids))
            messages += [ToolMessage(draw(tool_content()), tool_call_id=call_id, id=f"t_{call_id}")
                         for call_id in order]
        if turn + 1 < turns:
            messages.append(AIMessage("Here is what I found.", id=f"r{turn}"))
    return messages


def assert_valid(view: list, original: list) -> None:
    """The view is the original's sequence: same classes, ids, tool calls, tool_call_ids; each tool message among
    the messages that answer the latest tool-calling AI message."""
    assert [type(m) for m in view] == [type(m) for m in original]
    assert [m.id for m in view] == [m.id for m in original]
    pending: set = set()
    for before, after in zip(original, view):
        if isinstance(after, AIMessage):
            assert after.tool_calls == before.tool_calls and after.content == before.content
            pending = {call["id"] for call in after.tool_calls}
        elif isinstance(after, ToolMessage):
            assert after.tool_call_id == before.tool_call_id and after.tool_call_id in pending
            pending.discard(after.tool_call_id)
        else:
            assert after.content == before.content  # system prompts and user turns are never altered
            assert not pending, "a tool call left unanswered before the next message"
    assert convert_to_openai_messages(view)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(trajectories(), st.integers(20, 1500))
def test_the_view_is_always_a_valid_sequence_of_verbatim_selections(compressor, messages, budget):
    hook = TPCContextHook(compressor=compressor, target_tokens=budget, scope="tools", on_error="raise")
    view = hook(dict(messages=messages))["llm_input_messages"]
    assert_valid(view, messages)
    splitter = compressor.engine.splitter()
    for before, after in zip(messages, view):
        if isinstance(after, ToolMessage):
            if not isinstance(before.content, str):  # non-text blocks untouched, in place
                assert [b for b in after.content if b.get("type") != "text"] == \
                       [b for b in before.content if b.get("type") != "text"]
            for old, new in zip(texts_of(before), texts_of(after)):
                assert new.strip() or not old.strip()  # an emptied result says so: never an empty text
                if new.startswith("[tool result of ") and new.endswith("left out: no room in the context budget]"):
                    continue
                if old.lstrip().startswith("["):  # JSON: whole records, still JSON (at least "[]" if it fits)
                    assert all(record in json.loads(old) for record in json.loads(new))
                else:
                    assert is_selection(old, new, splitter)
    again = hook(dict(messages=messages))["llm_input_messages"]
    assert [m.content for m in again] == [m.content for m in view]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(trajectories(), st.integers(200, 1500))
def test_with_older_turns_compressed_too_the_sequence_stays_valid(compressor, messages, budget):
    hook = TPCContextHook(compressor=compressor, target_tokens=budget, on_error="raise")
    assert_valid_but_history(hook(dict(messages=messages))["llm_input_messages"], messages)


def assert_valid_but_history(view: list, original: list) -> None:
    """As :func:`assert_valid`, earlier user turns and assistant texts allowed to be compressed."""
    latest = max(k for k, m in enumerate(original) if isinstance(m, HumanMessage))
    assert [type(m) for m in view] == [type(m) for m in original]
    assert [m.id for m in view] == [m.id for m in original]
    assert view[latest].content == original[latest].content
    for before, after in zip(original, view):
        if isinstance(after, AIMessage):
            assert after.tool_calls == before.tool_calls
        if isinstance(after, ToolMessage):
            assert after.tool_call_id == before.tool_call_id
        if isinstance(after, SystemMessage):
            assert after.content == before.content
    assert convert_to_openai_messages(view)


def anthropic_shape(messages: list) -> list[dict]:
    """The trajectory as Anthropic Messages-style dicts: tool calls as ``tool_use`` blocks, each round's results as
    ``tool_result`` blocks of one user message."""
    shaped: list[dict] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            shaped.append({"role": "system", "content": message.content})
        elif isinstance(message, HumanMessage):
            shaped.append({"role": "user", "content": message.content})
        elif isinstance(message, AIMessage):
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            shaped.append({"role": "assistant", "content": blocks + [
                {"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["args"]}
                for call in message.tool_calls]})
        else:
            result = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
            if shaped[-1]["role"] == "user" and isinstance(shaped[-1]["content"], list):
                shaped[-1]["content"].append(result)
            else:
                shaped.append({"role": "user", "content": [result]})
    return shaped


def _without_text(content):
    if not isinstance(content, list):
        return type(content).__name__
    return [{key: value for key, value in block.items() if key not in ("text", "content")}
            if isinstance(block, dict) else None for block in content]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(trajectories(), st.integers(20, 1500), st.sampled_from(["openai", "anthropic"]))
def test_provider_dicts_keep_their_shape_ids_and_order(compressor, messages, budget, provider):
    dicts = convert_to_openai_messages(messages) if provider == "openai" else anthropic_shape(messages)
    hook = TPCContextHook(compressor=compressor, target_tokens=budget, scope="tools", on_error="raise")
    view = hook({"messages": dicts})["llm_input_messages"]
    assert len(view) == len(dicts)
    for before, after in zip(dicts, view):
        assert set(after) == set(before) and after["role"] == before["role"]
        assert {k: v for k, v in after.items() if k != "content"} == {k: v for k, v in before.items() if k != "content"}
        assert _without_text(after["content"]) == _without_text(before["content"])  # blocks, ids, tool_use kept
        plain_user_text = before["role"] == "user" and isinstance(before["content"], str)
        if before["role"] in ("system", "assistant") or plain_user_text:
            assert after["content"] == before["content"]


def tool_results(messages: list) -> list[tuple[str | None, str | None, str]]:
    """``(call id, tool name, text)`` of every tool result's text part, in order, whatever the shape (each read with
    its call: :func:`tpc_core.conversation.messages.read_messages`)."""
    read = read_messages(messages)
    calls = tool_calls_by_id(read)
    found = []
    for message in read:
        for p, part in enumerate(message.parts):
            if part is not None and message.is_tool_result(p):
                call = calls.get(message.call_id(p) or "")
                found.append((message.call_id(p), call.name if call else message.tool_name, part))
    return found


def assert_each_result_follows_its_call(view: list, original: list) -> None:
    """Same roles, same calls, same call ids in the same places; every tool result answers a call of the latest
    assistant message before it, and every call is answered before the next user or assistant turn."""
    read, before = read_messages(view), read_messages(original)
    assert [(m.role, m.calls, m.answers) for m in read] == [(m.role, m.calls, m.answers) for m in before]
    pending: set = set()
    for message in read:
        if message.role == "assistant":
            assert not pending, "a tool call left unanswered before the next assistant turn"
            pending = {call.id for call in message.calls}
        results = [message.call_id(p) for p in range(len(message.parts)) if message.is_tool_result(p)]
        assert set(results) <= pending
        pending -= set(results)
        if message.role == "user" and message.text:
            assert not pending, "a tool call left unanswered before the next user turn"


def next_round(messages: list) -> list:
    """The trajectory one tool call further (a call of "search", its result)."""
    call = {"name": "search", "args": {"q": SENTENCES[0]}, "id": "c_next"}
    return [*messages, AIMessage("", tool_calls=[call], id="a_next"),
            ToolMessage(" ".join(SENTENCES[:6]), tool_call_id="c_next", id="t_next")]


def shaped(messages: list, shape: str) -> list:
    if shape == "openai":
        return convert_to_openai_messages(messages)
    return anthropic_shape(messages) if shape == "anthropic" else messages


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(trajectories(), st.integers(20, 1500), st.sampled_from(["langchain", "openai", "anthropic"]),
       st.sampled_from(["all", "tools"]), st.sampled_from(["search", "read"]))
def test_every_result_keeps_its_call_and_its_bytes_in_every_shape_and_scope(compressor, messages, budget, shape,
                                                                            scope, excluded):
    hook = TPCContextHook(compressor=compressor, target_tokens=budget, scope=scope, exclude_tools=[excluded],
                          on_error="raise")
    original = shaped(messages, shape)
    first = hook.view(original)
    assert_each_result_follows_its_call(first.messages, original)
    sent = tool_results(first.messages)
    for (call_id, name, text), (_, _, whole) in zip(sent, tool_results(original)):
        if name == excluded:  # an excluded tool's result is byte-identical
            assert text == whole
        else:  # what the ledger fitted is what is sent: the history stage leaves it as it is
            assert text == hook.ledger.get(ToolResultLedger.key_of(call_id, whole)).text
    assert tool_results(hook.view(original).messages) == sent  # the same call again: the same bytes
    grown = shaped(next_round(messages), shape)
    later = hook.view(grown)
    assert_each_result_follows_its_call(later.messages, grown)
    resent = tool_results(later.messages)[:len(sent)]
    assert [(call_id, name) for call_id, name, _ in resent] == [(call_id, name) for call_id, name, _ in sent]
    for (_, name, text), (_, _, before) in zip(resent, sent):
        if name == excluded or not later.data["recompressed"]:  # re-sent as the same bytes, unless squeezed
            assert text == before
