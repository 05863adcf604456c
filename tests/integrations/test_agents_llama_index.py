"""LlamaIndex agents: TPCFunctionAgent run as a real workflow (alone and in an AgentWorkflow) with LlamaIndex's mock
function-calling LLM scripted to call tools, and the real tpc-mini; what the LLM receives is recorded and checked."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core.agent.workflow")

from llama_index.core.agent.workflow import AgentWorkflow
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool

from tests.conversation_helpers import counted, is_selection, texts_of
from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION
from tpc_integrations.llama_index_agents import TPCFunctionAgent

ARCHIVE = "\n\n".join(PARAGRAPHS[:3])
NOTES = "\n\n".join(PARAGRAPHS[3:])


def read_archive(part: str) -> str:
    """Read a part of the archive."""
    return ARCHIVE if part == "archive" else NOTES


class Script:
    """The LLM's answers: a tool call per part, then a reply; and every message list it was sent."""

    def __init__(self, *parts: str) -> None:
        self.parts = list(parts)
        self.sent: list[list[ChatMessage]] = []

    def __call__(self, messages, **kwargs) -> ChatMessage:
        self.sent.append(list(messages))
        step = len(self.sent) - 1
        if step < len(self.parts):
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[ToolCallBlock(
                tool_call_id=f"call_{step}", tool_name="read_archive", tool_kwargs={"part": self.parts[step]})])
        return ChatMessage(role=MessageRole.ASSISTANT, content="The colonies are absolved of allegiance.")


def agent_with(compressor, script: Script, **settings) -> TPCFunctionAgent:
    return TPCFunctionAgent(name="archivist", description="Reads the archive.", compressor=compressor,
                            tools=[FunctionTool.from_defaults(fn=read_archive)],
                            llm=MockFunctionCallingLLM(response_generator=script), **settings)


def tool_texts(messages: list[ChatMessage]) -> list[str]:
    return ["".join(texts_of(m)) for m in messages if m.role == MessageRole.TOOL]


def test_a_function_agent_run_sends_compressed_tool_outputs_and_keeps_its_memory_whole(compressor):
    script = Script("archive", "notes")
    memory = Memory.from_defaults(token_limit=100_000)
    agent = agent_with(compressor, script, target_tokens=450)
    result = asyncio.run(_run(lambda: agent.run(user_msg=QUESTION, memory=memory)))
    assert "absolved" in str(result)
    last = script.sent[-1]
    assert counted(last, compressor.engine.default_counter) <= 450
    sent = tool_texts(last)
    assert len(sent) == 2 and sent[0] != ARCHIVE
    split = compressor.engine.splitter()
    assert all(is_selection(original, text, split) for original, text in zip((ARCHIVE, NOTES), sent))
    ids = [m.additional_kwargs.get("tool_call_id") for m in last if m.role == MessageRole.TOOL]
    assert ids == ["call_0", "call_1"]
    assert tool_texts(memory.get_all()) == [ARCHIVE, NOTES]


async def _run(start):
    """Start a workflow run inside the event loop (a run needs one) and wait for its result."""
    return await start()


def test_an_agent_workflow_compresses_through_its_tpc_agent(compressor):
    script = Script("archive", "notes")
    agent = agent_with(compressor, script, target_tokens=450)
    workflow = AgentWorkflow(agents=[agent], root_agent=agent.name)
    asyncio.run(_run(lambda: workflow.run(user_msg=QUESTION)))
    assert len(script.sent) == 3
    assert counted(script.sent[-1], compressor.engine.default_counter) <= 450
    assert tool_texts(script.sent[-1])[0] != ARCHIVE


def test_write_back_is_refused(compressor):
    with pytest.raises(ValueError, match="write_back does not apply"):
        agent_with(compressor, Script(), target_tokens=450, write_back=True)
