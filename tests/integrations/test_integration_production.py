"""The adapters in production: a chat that keeps going, settings checked and refused the one way, metadata
of the call that made it, and the fail-safe (``on_error``, ``deadline_ms``) with injected faults. Real tpc-mini for
behaviour; the faults are injected around it (a loader, a device, a store, a splitter, a document that fail)."""

from __future__ import annotations

import os
import time
import warnings

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

import torch
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms.mock import MockLLMWithChatMemoryOfLastCall
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION, SYSTEM
from tests.notice_helpers import logged_only, oversized
from tpc_core.cache import MemoryCache, SentenceCache
from tpc_core.diagnostics.notices import TPCRuntimeWarning
from tpc_integrations._checks import TPCSettingsError
from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer, TPCMessagesCompressor
from tpc_integrations.llama_index import TPCChatMemory, TPCNodePostprocessor, TPCTransform

DOCUMENT = "\n\n".join(PARAGRAPHS[2:])
ADAPTERS = (TPCDocumentCompressor, TPCNodePostprocessor, TPCDocumentTransformer, TPCTransform, TPCMessagesCompressor,
            TPCChatMemory)


class Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[tuple[str, dict]] = []

    def on_custom_event(self, name, data, **kwargs) -> None:
        self.seen.append((name, data))


# ------------------------------------------------------------------------------- the chat goes on
def test_a_chat_engine_survives_a_pasted_document_with_a_warning_and_an_event(compressor):
    import llama_index.core.instrumentation as instrument
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler

    seen = []

    class Handler(BaseEventHandler):
        def handle(self, event, **kwargs) -> None:
            if event.class_name() == "TPCEvent":
                seen.append(event.data)

    instrument.get_dispatcher().add_event_handler(Handler())
    llm = MockLLMWithChatMemoryOfLastCall()
    memory = TPCChatMemory(compressor=compressor, target_tokens=100)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    engine.chat("Hello there.")
    # a pasted document (no request found) is compressed prompt-agnostically: the chat goes on in budget
    engine.chat("Please read: " + DOCUMENT)
    sent = list(llm.last_chat_messages)
    assert seen and seen[-1]["over_budget"] == 0 and len(sent[-1].content) < len("Please read: " + DOCUMENT)
    # what must be kept whole over the budget (a long system message) keeps the chat going, with a warning
    from llama_index.core.llms import ChatMessage, MessageRole

    memory = TPCChatMemory(compressor=compressor, target_tokens=100)
    memory.put(ChatMessage(role=MessageRole.SYSTEM, content="Background: " + DOCUMENT))
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    with pytest.warns(TPCRuntimeWarning, match="over its budget of 100") as caught:
        engine.chat("What is this?")
    # pytest.warns records every warning of the block: a ResourceWarning from another test's connection, collected
    # here, can come first. The one checked is ours.
    ours = [warning for warning in caught if issubclass(warning.category, TPCRuntimeWarning)]
    assert ours[0].filename == __file__  # the warning names this line, not LlamaIndex's code
    sent = list(llm.last_chat_messages)
    assert sent[-1].content == "What is this?" and seen[-1]["over_budget"] > 0
    with pytest.raises(ValueError, match="smaller than the messages kept whole"):
        TPCChatMemory(compressor=compressor, target_tokens=100, strict=True, memory=memory.memory).get()


def test_the_messages_runnable_keeps_going_and_says_so_in_its_event(compressor):
    events = Events()
    system = SYSTEM + " Background: " + DOCUMENT  # kept whole, and over the budget by itself
    conversation = [("system", system), ("human", "Hi."), ("ai", "Hello."), ("human", "What is this about?")]
    with pytest.warns(TPCRuntimeWarning, match="over its budget"):
        out = TPCMessagesCompressor(compressor=compressor, target_tokens=100).invoke(conversation,
                                                                                       {"callbacks": [events]})
    assert out[-1].content == "What is this about?" and out[0].content == system
    assert all(m.content for m in out)  # emptied="sentence": no message comes back empty
    (name, data), = events.seen
    assert name == "tpc_messages_compression" and data["over_budget"] > 0


# ------------------------------------------------------------------------------- cache strings
@pytest.mark.parametrize("typo", ["Memory", "memory ", "mem"])
def test_a_mistyped_cache_name_is_refused_with_a_hint_and_creates_nothing(tmp_path, monkeypatch, typo):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="did you mean 'memory'"):
        TPCDocumentCompressor(cache=typo)
    assert os.listdir(tmp_path) == []
    TPCDocumentCompressor(cache="./tpc_cache/")  # a path: accepted, and checking it creates nothing
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------------------- fresh metadata
def test_query_time_results_carry_only_the_metadata_of_their_own_call(compressor):
    cache = MemoryCache()
    chunks = [Document(page_content=p, id=str(k)) for k, p in enumerate(PARAGRAPHS[2:6])]
    warmed = TPCDocumentTransformer(compressor=compressor, mode="warm", cache=cache).transform_documents(chunks)
    assert warmed[0].metadata["tpc_compression"] == "cached"
    reader = TPCDocumentCompressor(compressor=compressor, cache=cache, target_tokens=60)
    with oversized():  # the paragraphs' long sentences are larger than 60 tokens
        out = reader.compress_documents(warmed, QUESTION)
    for document in out:
        assert "tpc_compression" not in document.metadata
        assert document.metadata["tpc_task_source"] == "question"
    nodes = [NodeWithScore(node=TextNode(text=d.page_content, metadata=d.metadata), score=1.0) for d in warmed]
    post = TPCNodePostprocessor(compressor=compressor, cache=cache, target_tokens=60)
    with oversized():
        processed = post.postprocess_nodes(nodes, QueryBundle(QUESTION))
    for item in processed:
        assert "tpc_compression" not in item.node.metadata and item.node.metadata["tpc_task_source"] == "question"


# ------------------------------------------------------------------------------- counters
def test_a_counter_that_cannot_count_is_refused_when_it_is_set(compressor):
    for adapter_class in (TPCDocumentCompressor, TPCMessagesCompressor):
        with pytest.raises(ValueError, match="counted 0 tokens in the probe text"):
            adapter_class(compressor=compressor, token_counter=lambda text: 0)
        with pytest.raises(ValueError, match="'gpt2' is not available offline"):
            adapter_class(compressor=compressor, token_counter="gpt2")
    assert TPCDocumentCompressor(compressor=compressor, token_counter=len).engine_options()["token_counter"] is not None


# ------------------------------------------------------------------------------- token_limit
def test_token_limit_is_refused_with_the_chat_memorys_own_name_for_its_budget(compressor):
    for build in (TPCChatMemory.from_defaults, TPCChatMemory):
        with pytest.raises(TPCSettingsError, match="`token_limit` is LlamaIndex ChatMemoryBuffer's name: pass "
                                                   "`target_tokens=500`"):
            build(token_limit=500, compressor=compressor)
    assert TPCChatMemory.from_defaults(target_tokens=500, compressor=compressor).target_tokens == 500


# ------------------------------------------------------------------------------- one channel each
def test_every_bad_setting_is_one_error_class_at_construction(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    bad = [{"cache": 42}, {"cache": blocker}, {"cache": blocker / "c"}, {"splitter": 3}, {"target_tokens": -1},
           {"rate": 2.0}, {"device": "gpu"}, {"on_error": "ignore"}, {"deadline_ms": 0}, {"target_tokns": 3}]
    for adapter_class in ADAPTERS:
        for settings in bad:
            with pytest.raises(TPCSettingsError):
                adapter_class(**settings)
    with pytest.raises(TPCSettingsError, match="a-file") as caught:
        TPCDocumentCompressor(cache=blocker)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value.__cause__, NotADirectoryError)


# ------------------------------------------------------------------------------- fail-safe: injected faults
class RaisingCache(SentenceCache):
    """A cache whose contract methods themselves fail (a store that cannot even be asked)."""

    def get_many(self, keys, *, fingerprint=None):
        raise ConnectionError("the cache service is down")


class RaisingSplitter:
    cache_identity = "raising"

    def spans(self, text):
        raise RuntimeError("the splitter broke")


def _documents() -> list[Document]:
    return [Document(page_content=p, id=str(k), metadata={"k": k}) for k, p in enumerate(PARAGRAPHS[2:5])]


def test_passthrough_returns_the_input_for_each_fault_and_names_it(compressor, monkeypatch, caplog):
    from tpc_integrations import _common

    def out_of_memory(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory")

    faults = {
        "load": lambda: monkeypatch.setattr(_common, "load_shared_compressor", _raise(OSError("no weights"))),
        "memory": lambda: monkeypatch.setattr(compressor.encoder, "encode_contexts", out_of_memory),
    }
    for fault, expected in (("load", "OSError: no weights"), ("memory", "OutOfMemoryError: CUDA out of memory")):
        with monkeypatch.context() as patch:
            monkeypatch = patch
            faults[fault]()
            events = Events()
            adapter = TPCDocumentCompressor(target_tokens=40, device="cpu", on_error="passthrough") if fault == "load" \
                else TPCDocumentCompressor(compressor=compressor, target_tokens=40, on_error="passthrough")
            with logged_only(caplog, "passthrough", count=1):
                out = adapter.compress_documents(_documents(), QUESTION, callbacks=[events])
            assert out == _documents()
            (_, data), = events.seen
            assert (data["fallback"], data["error"], data["returned"]) == ("error", expected, "input")
            with pytest.raises(type(torch.OutOfMemoryError("x")) if fault == "memory" else OSError):
                adapter.model_copy(update={"on_error": "raise"}).compress_documents(_documents(), QUESTION)
    # a store that raises inside the contract, a splitter that raises, a document that cannot be read
    store = TPCDocumentCompressor(compressor=compressor, target_tokens=40, cache=RaisingCache(), on_error="passthrough")
    splitter = TPCNodePostprocessor(compressor=compressor, target_tokens=40, splitter=RaisingSplitter(),
                                    on_error="passthrough")
    unreadable = Document.model_construct(page_content=None, id="bad", metadata={})
    with logged_only(caplog, "passthrough", count=3):
        assert store.compress_documents(_documents(), QUESTION) == _documents()
        nodes = [NodeWithScore(node=TextNode(text=p, id_=str(k)), score=0.5) for k, p in enumerate(PARAGRAPHS[2:5])]
        assert splitter.postprocess_nodes(nodes, QueryBundle(QUESTION)) == nodes
        assert TPCDocumentTransformer(compressor=compressor, on_error="passthrough").transform_documents(
            [*_documents(), unreadable])[:3] == _documents()


def test_a_store_that_fails_inside_its_hooks_costs_only_the_cache(compressor, caplog):
    class Down(MemoryCache):
        def fetch(self, keys):
            raise ConnectionError("down")

    with logged_only(caplog, "failed"):
        out = TPCDocumentCompressor(compressor=compressor, target_tokens=40, cache=Down()).compress_documents(
            _documents(), QUESTION)
    assert out and all(d.metadata["tpc_task_source"] == "question" for d in out)


def _raise(error: Exception):
    def fail(*args, **kwargs):
        raise error
    return fail


def test_a_deadline_returns_the_input_uncompressed_or_the_batches_done(compressor, monkeypatch, caplog):
    slow = compressor.compress_batch

    def slowly(*args, **kwargs):
        time.sleep(0.3)
        return slow(*args, **kwargs)

    monkeypatch.setattr(compressor, "compress_batch", slowly)
    events = Events()
    adapter = TPCDocumentCompressor(compressor=compressor, target_tokens=40, deadline_ms=100)
    started = time.perf_counter()
    with logged_only(caplog, "deadline of 100 ms"):
        out = adapter.compress_documents(_documents(), QUESTION, callbacks=[events])
    assert time.perf_counter() - started < 0.3 and out == _documents()
    assert (events.seen[0][1]["fallback"], events.seen[0][1]["returned"]) == ("deadline", "input")
    time.sleep(0.4)  # let the abandoned worker finish before the next patch
    calls = []

    def first_fast(*args, **kwargs):  # the first batch at once, every later one far past the deadline
        calls.append(1)
        if len(calls) > 1:
            time.sleep(3.0)
        return slow(*args, **kwargs)

    monkeypatch.setattr(compressor, "compress_batch", first_fast)
    transformer = TPCDocumentTransformer(compressor=compressor, rate=0.5, batch_size=1, deadline_ms=1500,
                                        task_description=QUESTION)
    with logged_only(caplog, "documents compressed, the rest returned whole"):
        done = transformer.transform_documents(_documents())
    compressed = [d for d in done if "tpc_compression" in d.metadata]
    assert len(compressed) == 1 and done[1:] == _documents()[1:]
    time.sleep(3.2)  # let the abandoned worker finish before the patch is undone


def test_a_custom_splitter_without_a_cache_identity_is_refused_in_warm_mode():
    class Nameless:
        def spans(self, text):
            return [(0, len(text))]

    with pytest.raises(ValueError, match="no cache_identity"):
        TPCDocumentTransformer(mode="warm", cache="memory", splitter=Nameless())
    with pytest.raises(ValueError, match="no cache_identity"):
        TPCTransform(mode="warm", cache="memory", splitter=Nameless())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TPCTransform(mode="warm", cache="memory", splitter=RaisingSplitter())  # it names itself: accepted
