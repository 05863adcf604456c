"""Every adapter driven with random faults injected at random stages (the model's loading, the token
counter, the splitter, the encoder's forward pass, the cache, an unreadable document). With
``on_error="passthrough"`` no exception escapes and the output equals the input; with ``"raise"`` the original
exception type escapes. The faults are injected around the real tpc-mini."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION, SYSTEM
from tests.notice_helpers import logged_only
from tpc_core.cache import SentenceCache
from tpc_integrations import _common
from tpc_integrations._checks import COUNTER_PROBE
from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer, TPCMessagesCompressor
from tpc_integrations.langchain_messages import as_messages
from tpc_integrations.llama_index import TPCChatMemory, TPCNodePostprocessor, TPCTransform

ERRORS = (RuntimeError, MemoryError, torch.OutOfMemoryError, OSError, ValueError, KeyError)
STAGES = ("load", "counter", "splitter", "encode", "cache", "document")
ADAPTERS = ("compressor", "postprocessor", "transformer", "transform", "messages", "memory")


class Fault:
    """Raises ``error`` when called (a stand-in for any failing piece)."""

    def __init__(self, error: type[BaseException]) -> None:
        self.error = error

    def __call__(self, *args, **kwargs):
        raise self.error("injected")


def _settings(adapter: str, stage: str, error: type[BaseException], on_error: str, compressor) -> dict:
    budget = {"target_tokens": 80} if adapter in ("messages", "memory") else (
        {"target_tokens": 40} if adapter in ("compressor", "postprocessor") else {"rate": 0.5,
                                                                                   "task_description": QUESTION})
    options = {"on_error": on_error, **budget}
    options.update({"device": "cpu"} if stage == "load" else {"compressor": compressor})
    if stage == "counter":
        fail = Fault(error)
        options["token_counter"] = lambda text: len(text.split()) if text == COUNTER_PROBE else fail()
    elif stage == "splitter":
        options["splitter"] = type("Breaks", (), {"cache_identity": "breaks", "spans": lambda self, text: Fault(
            error)()})()
    elif stage == "cache":
        options["cache"] = type("Down", (SentenceCache,), {"get_many": lambda self, keys, fingerprint=None: Fault(
            error)()})()
    return options


def _input(adapter: str, unreadable: bool):
    texts = PARAGRAPHS[2:5]
    if adapter in ("compressor", "transformer"):
        docs = [Document(page_content=t, id=str(k), metadata={"k": k}) for k, t in enumerate(texts)]
        return docs + ([Document.model_construct(page_content=5, id="bad", metadata={})] if unreadable else [])
    if adapter in ("postprocessor", "transform"):
        nodes = [TextNode(text=t, id_=str(k)) for k, t in enumerate(texts)]
        nodes += [TextNode.model_construct(text=5, id_="bad", metadata={}, relationships={})] if unreadable else []
        return [NodeWithScore(node=n, score=0.5) for n in nodes] if adapter == "postprocessor" else nodes
    conversation = [("system", SYSTEM), ("human", "\n\n".join(texts)), ("ai", "Noted."), ("human", QUESTION)]
    if adapter == "messages":
        return conversation + ([{"role": "user", "content": 5}] if unreadable else [])
    history = [ChatMessage(role={"human": "user", "ai": "assistant"}.get(r, r), content=c) for r, c in conversation]
    return history + ([ChatMessage(role="user", blocks=[])] if unreadable else [])


def _call(adapter: str, options: dict, given_input):
    if adapter == "compressor":
        return TPCDocumentCompressor(**options).compress_documents(given_input, QUESTION)
    if adapter == "postprocessor":
        return TPCNodePostprocessor(**options).postprocess_nodes(given_input, QueryBundle(QUESTION))
    if adapter == "transformer":
        return TPCDocumentTransformer(**options).transform_documents(given_input)
    if adapter == "transform":
        return TPCTransform(**options)(given_input)
    if adapter == "messages":
        return TPCMessagesCompressor(**options).invoke(given_input)
    memory = ChatMemoryBuffer.from_defaults(chat_history=given_input, token_limit=10 ** 6)
    return TPCChatMemory(memory=memory, **options).get()


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(adapter=st.sampled_from(ADAPTERS), stage=st.sampled_from(STAGES), error=st.sampled_from(ERRORS),
       on_error=st.sampled_from(["passthrough", "raise"]))
def test_random_faults_at_random_stages(compressor, monkeypatch, caplog, adapter, stage, error, on_error):
    if stage == "document" and adapter == "memory":
        stage = "encode"  # a memory's messages are LlamaIndex's own, read before TPC sees them
    expected = TypeError if stage == "document" else error
    given_input = _input(adapter, unreadable=stage == "document")
    with monkeypatch.context() as patch:
        if stage == "load":
            patch.setattr(_common, "load_shared_compressor", Fault(error))
        elif stage == "encode":
            patch.setattr(compressor.encoder, "encode_contexts", Fault(error))
        options = _settings(adapter, stage, error, on_error, compressor)
        if on_error == "raise":
            with pytest.raises(expected):
                _call(adapter, options, given_input)
            return
        with logged_only(caplog, "passthrough"):
            out = _call(adapter, options, given_input)
    if adapter == "messages" and stage != "document":
        assert out == as_messages(given_input)  # the prompt's messages, unchanged
    else:
        assert out == given_input
