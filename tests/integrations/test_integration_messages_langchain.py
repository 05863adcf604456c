"""LangChain: TPCMessagesCompressor between a ChatPromptTemplate and a chat model, sync, async and batch, with the
real tpc-mini; the model receives the compressed conversation."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from tests.conversation_helpers import counted, is_selection, texts_of
from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION, SYSTEM
from tpc_integrations.langchain import MESSAGES_EVENT, TPCMessagesCompressor

BUDGET = 400
HISTORY = [HumanMessage("Read this.\n\n" + "\n\n".join(PARAGRAPHS[:3]), id="h1"),
           AIMessage("", tool_calls=[{"id": "call_7", "name": "fetch", "args": {"part": 2}}], id="a1"),
           ToolMessage("\n\n".join(PARAGRAPHS[3:]), tool_call_id="call_7", id="t1"),
           AIMessage("I have the whole text.", id="a2")]
PROMPT = ChatPromptTemplate.from_messages([("system", SYSTEM), MessagesPlaceholder("history"), ("human", "{question}")])


class Recorder(BaseCallbackHandler):
    """What the chat model was sent, and the TPC events of the run."""

    def __init__(self) -> None:
        self.sent: list = []
        self.events: list = []

    def on_chat_model_start(self, serialized, messages, **kwargs) -> None:
        self.sent.append(messages[0])

    def on_custom_event(self, name, data, **kwargs) -> None:
        if name == MESSAGES_EVENT:
            self.events.append(data)


def _check_sent(sent: list, compressor) -> None:
    full = PROMPT.invoke({"history": HISTORY, "question": QUESTION}).to_messages()
    assert [type(m) for m in sent] == [type(m) for m in full]
    assert sent[0].content == SYSTEM and sent[-1].content == QUESTION
    assert [m.id for m in sent[1:5]] == ["h1", "a1", "t1", "a2"] and sent[3].tool_call_id == "call_7"
    assert sent[2].tool_calls[0]["id"] == "call_7"
    for before, after in zip(full, sent):
        assert all(is_selection(o, n, compressor.engine.splitter()) for o, n in zip(texts_of(before), texts_of(after)))
    assert counted(sent, compressor.token_counter) <= BUDGET < counted(full, compressor.token_counter)


def test_prompt_runnable_model_chain_sync_and_batch(compressor):
    recorder = Recorder()
    chain = PROMPT | TPCMessagesCompressor(compressor=compressor, target_tokens=BUDGET) | FakeListChatModel(
        responses=["They are absolved from all allegiance."])
    answer = chain.invoke({"history": HISTORY, "question": QUESTION}, config={"callbacks": [recorder]})
    assert answer.content == "They are absolved from all allegiance."
    _check_sent(recorder.sent[0], compressor)
    event = recorder.events[0]
    assert (event["budget"], event["mode"], event["task"], event["messages"]) == (BUDGET, "query", QUESTION, 6)
    assert event["compressed_tokens"] <= BUDGET < event["origin_tokens"]
    recorder = Recorder()
    chain.batch([{"history": HISTORY, "question": QUESTION}] * 2, config={"callbacks": [recorder]})
    assert len(recorder.sent) == 2 and recorder.sent[0] == recorder.sent[1]


def test_async_chain_gives_the_same_messages(compressor):
    recorder = Recorder()
    runnable = TPCMessagesCompressor(compressor=compressor, target_tokens=BUDGET)
    chain = PROMPT | runnable | FakeListChatModel(responses=["ok"])
    asyncio.run(chain.ainvoke({"history": HISTORY, "question": QUESTION}, config={"callbacks": [recorder]}))
    _check_sent(recorder.sent[0], compressor)
    assert recorder.events and recorder.events[0]["budget"] == BUDGET
    direct = runnable.invoke(PROMPT.invoke({"history": HISTORY, "question": QUESTION}))
    assert direct == recorder.sent[0]


def test_lists_of_message_likes_and_bad_input(compressor):
    runnable = TPCMessagesCompressor(compressor=compressor, target_tokens=BUDGET)
    out = runnable.invoke([("system", SYSTEM), {"role": "user", "content": "\n\n".join(PARAGRAPHS)},
                           ("human", QUESTION)])
    assert [m.type for m in out] == ["system", "human", "human"] and out[-1].content == QUESTION
    assert runnable.invoke([]) == []
    with pytest.raises(TypeError, match="wrap a single message"):
        runnable.invoke(HumanMessage("hi"))
    with pytest.raises(ValueError, match="need"):  # strict=True (the default keeps the chat going)
        TPCMessagesCompressor(compressor=compressor, target_tokens=3, strict=True).invoke([("system", SYSTEM),
                                                                                         ("human", QUESTION)])
    with pytest.raises(ValueError, match="latest user turn is the task"):
        TPCMessagesCompressor(compressor=compressor, task_description="Answer questions.")
    with pytest.raises(ValueError, match="keep_request=False does not apply to conversations"):
        TPCMessagesCompressor(compressor=compressor, target_tokens=12, keep_request=False)


def test_a_first_turn_with_a_rate_passes_whole_and_the_history_is_cut_to_the_rate(compressor):
    chain = PROMPT | TPCMessagesCompressor(compressor=compressor, rate=0.3)
    first = chain.invoke({"history": [], "question": QUESTION})
    assert [m.content for m in first] == [SYSTEM, QUESTION]
    full = PROMPT.invoke({"history": HISTORY, "question": QUESTION}).to_messages()
    sent = chain.invoke({"history": HISTORY, "question": QUESTION})
    kept_whole = counted([full[0], full[-1]], compressor.token_counter)
    assert sent[0] == full[0] and sent[-1] == full[-1]
    assert counted(sent, compressor.token_counter) <= kept_whole + int(0.3 * (counted(full, compressor.token_counter)
                                                                              - kept_whole))
