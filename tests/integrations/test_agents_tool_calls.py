"""Each tool result with its call, in every message shape, through the real tpc-mini: ``exclude_tools`` keeps a
tool's results byte-identical in every scope (counted as a fixed part of the budget, ``over_budget`` when they alone
overrun it); and an Anthropic ``tool_result`` is compressed toward its ``tool_use`` call as the same result in
LangChain's shape is."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents")

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, convert_to_openai_messages

from tests.core.conversation.test_conversations import PARAGRAPHS
from tests.integrations.test_agents_properties import anthropic_shape
from tpc_core.conversation import read_messages
from tpc_integrations.langchain_agents import TPCContextHook

DOCS = "\n\n".join(PARAGRAPHS)
NOTES = "\n\n".join(PARAGRAPHS[1:4])


def trajectory(history: str = "") -> list:
    """A system prompt, an older turn (with ``history`` in it), two tool calls and their results, the request."""
    older = [HumanMessage("Read the declaration. " + history, id="h0"), AIMessage(history or "Done.", id="a0")]
    return [SystemMessage("You are an agent. Use the tools.", id="sys"), *older,
            HumanMessage("What grievances are listed against the King?", id="h1"),
            AIMessage("", tool_calls=[{"name": "search_docs", "args": {"q": "grievances King"}, "id": "c1"},
                                      {"name": "read_notes", "args": {"q": "taxes without consent"}, "id": "c2"}],
                      id="a1"),
            ToolMessage(DOCS, tool_call_id="c1", name="search_docs", id="t1"),
            ToolMessage(NOTES, tool_call_id="c2", name="read_notes", id="t2")]


def counted(messages: list, counter) -> int:
    """Every text part of every message counted, tool results in blocks included (:func:`read_messages`)."""
    return sum(counter(part) for message in read_messages(messages) for part in message.parts if part is not None)


def shaped(messages: list, shape: str) -> list:
    if shape == "openai":
        return convert_to_openai_messages(messages)
    return anthropic_shape(messages) if shape == "anthropic" else messages


def tool_texts(view: list, shape: str) -> list[str]:
    """The text of each tool result, in order, whatever the shape."""
    if shape == "anthropic":
        return [block["content"] for message in view if isinstance(message["content"], list)
                for block in message["content"] if block.get("type") == "tool_result"]
    if shape == "openai":
        return [message["content"] for message in view if message["role"] == "tool"]
    return [message.content for message in view if isinstance(message, ToolMessage)]


@pytest.mark.parametrize("shape", ["langchain", "openai", "anthropic"])
@pytest.mark.parametrize("scope", ["all", "tools"])
def test_an_excluded_tools_result_is_sent_byte_identical_in_every_scope(compressor, scope, shape):
    hook = TPCContextHook(compressor=compressor, target_tokens=400, exclude_tools=["search_docs"], scope=scope,
                          on_error="raise")
    view = hook.view(shaped(trajectory(), shape))
    assert tool_texts(view.messages, shape)[0] == DOCS
    sent = counted(view.messages, compressor.engine.default_counter)
    assert view.data["sent_tokens"] == sent and view.data["over_budget"] == sent - 400 > 0  # it alone overruns


def test_an_excluded_result_is_a_fixed_part_of_the_budget(compressor):
    counter = compressor.engine.default_counter
    budget = counter(DOCS) + 120
    hook = TPCContextHook(compressor=compressor, target_tokens=budget, exclude_tools=["search_docs"], on_error="raise")
    view = hook.view(trajectory(history=NOTES))
    assert tool_texts(view.messages, "langchain")[0] == DOCS
    assert view.data["history_compressed"] and view.data["over_budget"] == 0
    assert counted(view.messages, counter) <= budget


@pytest.mark.parametrize("shape", ["openai", "anthropic"])
def test_a_provider_result_is_compressed_toward_its_call_as_langchains_is(compressor, shape):
    def sent(messages: list, kind: str) -> list[str]:
        hook = TPCContextHook(compressor=compressor, target_tokens=300, scope="tools", on_error="raise")
        return tool_texts(hook.view(messages).messages, kind)

    expected = sent(trajectory(), "langchain")
    assert expected[0] != DOCS and expected[1] != NOTES
    assert sent(shaped(trajectory(), shape), shape) == expected
