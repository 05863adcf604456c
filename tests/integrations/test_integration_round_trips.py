"""Every pydantic adapter round-trips through ``cls.model_validate(obj.model_dump())`` (and its JSON form): the
LlamaIndex ones whose dump carries LlamaIndex's ``class_name`` (and, for the memory, the wrapped memory's dump),
and the LangChain ones. No model is loaded: the settings alone."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from llama_index.core.memory import ChatMemoryBuffer, Memory

from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer
from tpc_integrations.langchain_messages import TPCMessagesCompressor
from tpc_integrations.llama_index import TPCChatMemory, TPCEvent, TPCNodePostprocessor, TPCTransform

SETTINGS = {"device": "cpu", "target_tokens": 77, "cache": "memory", "on_error": "passthrough", "deadline_ms": 900}
ADAPTERS = [
    (TPCNodePostprocessor, {**SETTINGS, "min_score": 0.1}),
    (TPCTransform, {**SETTINGS, "batch_size": 3}),
    (TPCChatMemory, SETTINGS),
    (TPCChatMemory, {**SETTINGS, "memory": Memory.from_defaults(token_limit=5000)}),
    (TPCChatMemory, {**SETTINGS, "memory": ChatMemoryBuffer.from_defaults(token_limit=4000)}),
    (TPCDocumentCompressor, {**SETTINGS, "min_score": 0.1}),
    (TPCDocumentTransformer, {**SETTINGS, "batch_size": 3}),
    (TPCMessagesCompressor, SETTINGS),
]


@pytest.mark.parametrize("cls, settings", ADAPTERS,
                         ids=[f"{cls.__name__}-{k}" for k, (cls, _) in enumerate(ADAPTERS)])
def test_an_adapter_round_trips_through_its_dump(cls, settings):
    adapter = cls(**settings)
    dump = adapter.model_dump()
    back = cls.model_validate(dump)
    assert type(back) is cls and back.model_dump() == dump
    assert cls.model_validate_json(adapter.model_dump_json()).model_dump() == dump
    assert (back.target_tokens, back.cache, back.deadline_ms) == (77, "memory", 900)
    if isinstance(adapter, TPCChatMemory):
        assert type(back.memory) is type(adapter.memory)
        assert back.memory.token_limit == adapter.memory.token_limit


def test_a_dump_of_another_class_is_still_refused():
    dump = TPCNodePostprocessor(device="cpu").model_dump()
    with pytest.raises(ValueError, match="unknown field `class_name`"):
        TPCTransform.model_validate(dump)


def test_the_event_round_trips():
    event = TPCEvent(name="tpc_ingestion", data={"fallback": "deadline", "documents_in": 3})
    back = TPCEvent.model_validate(event.model_dump())
    assert (back.name, back.data) == (event.name, event.data)
