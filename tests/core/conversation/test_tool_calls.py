"""Tool calls and the results that answer them, read from every message shape (no model): LangChain's
``tool_calls``, OpenAI's ``tool_calls`` / ``tool_call_id``, Anthropic's ``tool_use`` / ``tool_result`` blocks and their
``tool_use_id``, LlamaIndex's ``ToolCallBlock`` and ``additional_kwargs``."""

from __future__ import annotations

import pytest

from tpc_core.conversation.messages import ToolCall, read_messages, tool_calls_by_id

QUERY = {"q": "late fee"}
RESULT = "Late fees are charged after thirty days."


def anthropic() -> list[dict]:
    return [{"role": "user", "content": "What does a late payment cost?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "search_docs", "input": QUERY},
                {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "fees.md"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "Fees."}]},
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": RESULT},
                {"type": "text", "text": "Thanks, go on."}]}]


def test_anthropic_blocks_give_each_result_its_call():
    read = read_messages(anthropic())
    assert read[1].calls == (ToolCall("toolu_1", "search_docs", QUERY),
                             ToolCall("toolu_2", "read", {"path": "fees.md"}))
    assert read[2].parts == ("Fees.", RESULT, "Thanks, go on.")
    assert read[2].answers == ("toolu_2", "toolu_1", None)
    assert [read[2].is_tool_result(p) for p in range(3)] == [True, True, False]
    calls = tool_calls_by_id(read)
    assert calls[read[2].call_id(1)].name == "search_docs" and read[2].call_id(2) is None
    assert read[2].tool_name is None  # a user message's name is never a tool's


def test_openai_dicts_give_each_result_its_call():
    read = read_messages([
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "search_docs", "arguments": '{"q": "late fee"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "search_docs",
         "content": [{"type": "text", "text": RESULT}]},
        {"role": "function", "name": "legacy", "content": RESULT}])
    assert read[0].calls == (ToolCall("call_1", "search_docs", '{"q": "late fee"}'),)
    assert read[1].answers == ("call_1",) and read[1].tool_name == "search_docs"
    assert read[2].call_id(0) is None and read[2].tool_name == "legacy" and read[2].is_tool_result(0)


def test_langchain_messages_give_each_result_its_call_once():
    messages = pytest.importorskip("langchain_core.messages")
    ai = messages.AIMessage(content=[{"type": "tool_use", "id": "toolu_1", "name": "search_docs", "input": QUERY}],
                            tool_calls=[{"id": "toolu_1", "name": "search_docs", "args": QUERY}])
    openai_kwargs = messages.AIMessage("", additional_kwargs={"tool_calls": [
        {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": "{}"}}]})
    read = read_messages([ai, openai_kwargs, messages.ToolMessage(RESULT, tool_call_id="toolu_1", name="search_docs"),
                          messages.HumanMessage([{"type": "tool_result", "tool_use_id": "call_2", "content": RESULT}],
                                                name="ada")])
    assert read[0].calls == (ToolCall("toolu_1", "search_docs", QUERY),)  # given both ways, read once
    assert read[1].calls == (ToolCall("call_2", "read", {}),)  # LangChain parses the kwargs into tool_calls
    assert read[2].answers == ("toolu_1",) and read[2].tool_name == "search_docs"
    assert read[3].role == "tool" and read[3].answers == ("call_2",) and read[3].tool_name is None


def test_llama_index_messages_give_each_result_its_call():
    types = pytest.importorskip("llama_index.core.base.llms.types")
    read = read_messages([
        types.ChatMessage(role="assistant", blocks=[
            types.TextBlock(text="Looking."),
            types.ToolCallBlock(tool_call_id="call_1", tool_name="search_docs", tool_kwargs=QUERY)]),
        types.ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [
            {"tool_id": "call_2", "tool_name": "read", "tool_kwargs": {"path": "fees.md"}}]}),
        types.ChatMessage(role="tool", content=RESULT, additional_kwargs={"tool_call_id": "call_1"})])
    assert read[0].calls == (ToolCall("call_1", "search_docs", QUERY),)
    assert read[1].calls == (ToolCall("call_2", "read", {"path": "fees.md"}),)
    assert read[2].answers == ("call_1",)
    assert tool_calls_by_id(read)["call_1"].arguments == QUERY
