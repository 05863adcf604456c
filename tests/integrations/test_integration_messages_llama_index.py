"""LlamaIndex: TPCChatMemory in a real SimpleChatEngine (MockLLM), sync and async, with the real tpc-mini; the LLM
receives the compressed history, the memory keeps the full one."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall
from llama_index.core.memory import ChatMemoryBuffer

from tests.conversation_helpers import counted, is_selection, texts_of
from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION, SYSTEM
from tpc_integrations.llama_index import TPCChatMemory

BUDGET = 400


def history() -> list[ChatMessage]:
    return [ChatMessage(role="user", content="Read this.\n\n" + "\n\n".join(PARAGRAPHS[:3])),
            ChatMessage(role="assistant", content="Noted.", additional_kwargs={"tool_calls": [{"id": "call_7"}]}),
            ChatMessage(role="tool", blocks=[TextBlock(text="\n\n".join(PARAGRAPHS[3:])),
                                             ImageBlock(url="https://example.com/scan.png")],
                        additional_kwargs={"tool_call_id": "call_7"}),
            ChatMessage(role="assistant", content="I have the whole text.")]


def _check_sent(sent: list[ChatMessage], compressor) -> None:
    assert sent[0].content == SYSTEM  # the engine's prefix message
    memory_part = sent[1:]
    full = [*history(), ChatMessage(role="user", content=QUESTION)]
    assert [m.role for m in memory_part] == [m.role for m in full] and memory_part[-1].content == QUESTION
    assert memory_part[2].additional_kwargs == {"tool_call_id": "call_7"}
    assert memory_part[2].blocks[1].block_type == "image"
    for before, after in zip(full, memory_part):
        assert all(is_selection(o, n, compressor.engine.splitter()) for o, n in zip(texts_of(before), texts_of(after)))
    assert counted(memory_part, compressor.token_counter) <= BUDGET < counted(full, compressor.token_counter)


def test_chat_engine_sends_the_compressed_history_and_the_memory_keeps_it_whole(compressor):
    llm = MockLLMWithChatMemoryOfLastCall()
    memory = TPCChatMemory.from_defaults(chat_history=history(), compressor=compressor, target_tokens=BUDGET)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM)
    engine.chat(QUESTION)
    _check_sent(list(llm.last_chat_messages), compressor)
    stored = memory.get_all()
    assert [m.content for m in stored[:5]] == [m.content for m in history()] + [QUESTION]  # nothing lost


def test_async_chat_engine_and_an_input_that_is_not_in_the_history(compressor):
    llm = MockLLMWithChatMemoryOfLastCall()
    memory = TPCChatMemory(memory=ChatMemoryBuffer.from_defaults(chat_history=history(), token_limit=10**6),
                           compressor=compressor, target_tokens=BUDGET)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt=SYSTEM)
    asyncio.run(engine.achat(QUESTION))
    _check_sent(list(llm.last_chat_messages), compressor)
    memory.reset()
    memory.set(history())
    got = memory.get(input=QUESTION)  # an agent's call: the input is the task, counted but not returned
    assert len(got) == 4 and counted(got, compressor.token_counter) + compressor.token_counter(QUESTION) <= BUDGET
    assert got != history() and [m.role for m in got] == [m.role for m in history()]


def test_bad_settings_and_budgets(compressor):
    with pytest.raises(ValueError, match="latest user turn is the task"):
        TPCChatMemory(compressor=compressor, task_description="Answer.")
    memory = TPCChatMemory(compressor=compressor, target_tokens=2, strict=True)  # the default goes on
    memory.put(ChatMessage(role="system", content=SYSTEM))
    memory.put(ChatMessage(role="user", content=QUESTION))
    with pytest.raises(ValueError, match="need"):
        memory.get()
    assert TPCChatMemory(compressor=compressor, target_tokens=10).get() == []


def test_a_first_turn_with_the_default_rate_reaches_the_model_whole(compressor):
    """Nothing to compress yet: the default rate keeps the protected messages on top, so turn 1 is never refused."""
    llm = MockLLMWithChatMemoryOfLastCall()
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=TPCChatMemory(compressor=compressor), system_prompt=SYSTEM)
    engine.chat(QUESTION)
    assert [m.content for m in llm.last_chat_messages] == [SYSTEM, QUESTION]
