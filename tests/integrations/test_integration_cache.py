"""The edges of ``cache=`` on both query-time adapters and ``mode="warm"`` on both index-time ones, with the
real frameworks, the real stores (``InMemoryByteStore``, ``LocalFileStore``, ``SimpleKVStore``, a directory,
"memory") and the real tpc-mini; the events say whether a call was served from the cache."""

from __future__ import annotations

import copy

import pytest
from integration_helpers import assert_verbatim_in_order

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_classic")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document
from langchain_core.stores import InMemoryByteStore
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from tpc_integrations._checks import TPCSettingsError
from tpc_integrations.langchain import COMPRESSION_EVENT, TPCDocumentCompressor, TPCDocumentTransformer
from tpc_integrations.llama_index import TPCNodePostprocessor, TPCTransform

pytestmark = pytest.mark.slow
BUDGET = 120
CACHE_KEYS = ("from_cache", "cache_hits", "cache_misses")


def _documents(texts: list[str]) -> list[Document]:
    return [Document(page_content=text, id=f"doc-{i}", metadata={"position": i}) for i, text in enumerate(texts)]


def _nodes(texts: list[str]) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=text, id_=f"node-{i}"), score=1.0) for i, text in enumerate(texts)]


def _langchain_handler():
    from langchain_core.callbacks import BaseCallbackHandler

    class Handler(BaseCallbackHandler):
        def __init__(self) -> None:
            self.events: list[dict] = []

        def on_custom_event(self, name, data, *, run_id, **kwargs) -> None:
            if name == COMPRESSION_EVENT:
                self.events.append(data)

    return Handler()


class _ReRankEnds:
    """Collects the tags of every ``ReRankEndEvent`` while in the ``with`` block (LlamaIndex's root dispatcher)."""

    def __enter__(self) -> list[dict]:
        import llama_index.core.instrumentation as instrument
        from llama_index.core.instrumentation.event_handlers import BaseEventHandler
        from llama_index.core.instrumentation.events.rerank import ReRankEndEvent

        found: list[dict] = []

        class Handler(BaseEventHandler):
            def handle(self, event, **kwargs) -> None:
                if isinstance(event, ReRankEndEvent):
                    found.append(dict(event.tags))

        self.root = instrument.get_dispatcher()
        self.handler = Handler()
        self.root.add_event_handler(self.handler)
        return found

    def __exit__(self, *exc) -> None:
        self.root.event_handlers.remove(self.handler)


def _store(kind: str, tmp_path):
    if kind == "memory":
        return "memory"
    if kind == "directory":
        return str(tmp_path / "tpc-cache")
    if kind == "InMemoryByteStore":
        return InMemoryByteStore()
    if kind == "LocalFileStore":
        from langchain_classic.storage import LocalFileStore

        return LocalFileStore(tmp_path / "langchain-store")
    from llama_index.core.storage.kvstore import SimpleKVStore

    return SimpleKVStore()


@pytest.fixture()
def fresh(compressor):
    """A copy of the session's tpc-mini with no cache yet (``cache="memory"`` is one LRU per compressor)."""
    return copy.deepcopy(compressor)


@pytest.mark.parametrize("kind", ["memory", "directory", "InMemoryByteStore", "LocalFileStore"])
def test_langchain_compressor_with_a_cache_gives_the_same_documents_and_says_when_it_served_them(
        fresh, sample, tmp_path, kind):
    documents = _documents(sample.documents)
    plain = TPCDocumentCompressor(compressor=fresh, target_tokens=BUDGET).compress_documents(documents,
                                                                                             sample.question)
    cached = TPCDocumentCompressor(compressor=fresh, target_tokens=BUDGET, cache=_store(kind, tmp_path))
    handler = _langchain_handler()
    first = cached.compress_documents(documents, sample.question, callbacks=[handler])
    second = cached.compress_documents(documents, sample.question, callbacks=[handler])

    n = len(documents)
    assert [{key: event[key] for key in CACHE_KEYS} for event in handler.events] == [
        {"from_cache": False, "cache_hits": 0, "cache_misses": n},
        {"from_cache": True, "cache_hits": n, "cache_misses": 0}]
    # the first call read every document with the model: exactly the uncached result
    assert [(d.id, d.page_content, d.metadata) for d in first] == [(d.id, d.page_content, d.metadata) for d in plain]
    # the second read them back from the (int8) entries: the same sentences kept, scores within rounding
    assert [(d.id, d.page_content) for d in second] == [(d.id, d.page_content) for d in plain]
    for again, reference in zip(second, plain):
        assert again.metadata["tpc_relevance_score"] == pytest.approx(reference.metadata["tpc_relevance_score"],
                                                                      abs=0.02)
        assert_verbatim_in_order(again.metadata["tpc_kept_sentences"], sample.documents[int(again.id[4:])],
                                 again.page_content)
    assert sum(d.metadata["tpc_compressed_tokens"] for d in second) <= BUDGET
    assert handler.events[1]["compressed_tokens"] == handler.events[0]["compressed_tokens"]


@pytest.mark.parametrize("kind", ["memory", "SimpleKVStore"])
def test_llama_index_postprocessor_with_a_cache_reports_hits_in_the_rerank_end_event(fresh, sample, tmp_path, kind):
    postprocessor = TPCNodePostprocessor(compressor=fresh, target_tokens=BUDGET, cache=_store(kind, tmp_path))
    plain = TPCNodePostprocessor(compressor=fresh, target_tokens=BUDGET)
    query = QueryBundle(sample.question)
    with _ReRankEnds() as tags:
        reference = plain.postprocess_nodes(_nodes(sample.documents), query_bundle=query)
        first = postprocessor.postprocess_nodes(_nodes(sample.documents), query_bundle=query)
        second = postprocessor.postprocess_nodes(_nodes(sample.documents), query_bundle=query)
    n = len(sample.documents)
    assert [{key: tag[key] for key in CACHE_KEYS} for tag in tags] == [
        {"from_cache": False, "cache_hits": 0, "cache_misses": 0},  # no cache: nothing looked up
        {"from_cache": False, "cache_hits": 0, "cache_misses": n},
        {"from_cache": True, "cache_hits": n, "cache_misses": 0}]
    assert all(tag["mode"] == "query" and tag["budget"] == BUDGET for tag in tags)
    text = lambda nodes: [(n.node.node_id, n.node.get_content()) for n in nodes]
    assert text(first) == text(second) == text(reference)


def test_adapters_refuse_a_cache_of_another_kind_naming_the_accepted_ones():
    for adapter_class in (TPCDocumentCompressor, TPCNodePostprocessor, TPCDocumentTransformer, TPCTransform):
        with pytest.raises(TPCSettingsError,
                           match="cache must be None, 'memory'.*directory path.*byte store.*key-value store"):
            adapter_class(cache=42)
        with pytest.raises(TPCSettingsError, match="got dict"):
            adapter_class(cache={"memory": True})


def test_adapters_refuse_a_directory_they_cannot_write_naming_it(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    for adapter_class in (TPCDocumentCompressor, TPCNodePostprocessor):
        with pytest.raises(TPCSettingsError, match=str(blocker / "cache")) as raised:
            adapter_class(cache=blocker / "cache")
        assert isinstance(raised.value.__cause__, PermissionError)
    with pytest.raises(TPCSettingsError, match=str(blocker)) as raised:
        TPCDocumentCompressor(cache=str(blocker))
    assert isinstance(raised.value.__cause__, NotADirectoryError)


@pytest.mark.parametrize("directory", ["/proc/x/", "/sys/nope/"])
def test_adapters_refuse_a_directory_on_a_file_system_that_takes_no_files(directory):
    for adapter_class in (TPCDocumentCompressor, TPCNodePostprocessor):
        with pytest.raises(TPCSettingsError, match=directory.rstrip("/")) as raised:
            adapter_class(cache=directory)
        assert isinstance(raised.value.__cause__, PermissionError)


def test_langchain_warm_ingestion_then_query_time_compression_from_the_cache(compressor, sample, tmp_path):
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_classic.storage import LocalFileStore
    from langchain_core.vectorstores import InMemoryVectorStore

    from tpc_integrations.embeddings import langchain_embeddings

    store = LocalFileStore(tmp_path / "entries")
    documents = _documents(sample.documents)
    warmed = TPCDocumentTransformer(compressor=compressor, mode="warm", cache=store).transform_documents(documents)
    assert [(d.id, d.page_content) for d in warmed] == [(d.id, d.page_content) for d in documents]  # nothing cut
    assert {d.metadata["tpc_compression"] for d in warmed} == {"cached"}
    assert all(d.metadata["tpc_origin_tokens"] == compressor.token_counter(d.page_content) for d in warmed)
    assert len(list(store.yield_keys())) == len(documents)
    again = TPCDocumentTransformer(compressor=compressor, mode="warm", cache=store).transform_documents(documents)
    assert [d.page_content for d in again] == [d.page_content for d in documents]

    vectors = InMemoryVectorStore(embedding=langchain_embeddings())
    vectors.add_documents(warmed)
    retriever = ContextualCompressionRetriever(
        base_compressor=TPCDocumentCompressor(compressor=compressor, target_tokens=BUDGET, cache=store),
        base_retriever=vectors.as_retriever(search_kwargs={"k": 4}))
    handler = _langchain_handler()
    out = retriever.invoke(sample.question, config={"callbacks": [handler]})
    assert out and sum(d.metadata["tpc_compressed_tokens"] for d in out) <= BUDGET
    [event] = handler.events
    assert (event["from_cache"], event["cache_hits"], event["cache_misses"]) == (True, 4, 0)


def test_llama_index_warm_ingestion_pipeline_then_a_query_engine_served_from_the_cache(compressor, sample):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.response_synthesizers.no_text import NoText
    from llama_index.core.schema import Document as LlamaDocument
    from llama_index.core.schema import MetadataMode
    from llama_index.core.storage.kvstore import SimpleKVStore

    from tpc_integrations.embeddings import llama_index_embedding

    kvstore = SimpleKVStore()
    embed_model = llama_index_embedding()
    pipeline = IngestionPipeline(transformations=[TPCTransform(compressor=compressor, mode="warm", cache=kvstore),
                                                  embed_model])
    inputs = [LlamaDocument(text=text, id_=f"doc-{i}") for i, text in enumerate(sample.documents)]
    nodes = pipeline.run(documents=inputs)
    assert [n.get_content(MetadataMode.NONE) for n in nodes] == sample.documents
    assert all(n.metadata["tpc_compression"] == "cached" and n.embedding is not None for n in nodes)
    assert len(kvstore.get_all(collection="tpc_sentence_cache")) == len(sample.documents)

    # as_query_engine(response_mode="no_text") would ask Settings.llm for OpenAI: its factory drops llm= for NoText
    engine = RetrieverQueryEngine(
        retriever=VectorStoreIndex(nodes, embed_model=embed_model).as_retriever(similarity_top_k=3),
        response_synthesizer=NoText(llm=MockLLM()),
        node_postprocessors=[TPCNodePostprocessor(compressor=compressor, target_tokens=BUDGET, cache=kvstore)])
    with _ReRankEnds() as tags:
        response = engine.query(sample.question)
    assert response.source_nodes
    [tag] = tags
    assert (tag["from_cache"], tag["cache_hits"], tag["cache_misses"]) == (True, 3, 0)


def test_warm_mode_needs_a_cache_and_refuses_what_only_compression_uses():
    for adapter_class in (TPCDocumentTransformer, TPCTransform):
        with pytest.raises(TPCSettingsError,
                           match="mode='warm' stores each document's sentence-cache entry: pass cache="):
            adapter_class(mode="warm")
        with pytest.raises(TPCSettingsError, match="rate, task_description would do nothing here: set them on the "
                                                  "query-time compressor"):
            adapter_class(mode="warm", cache="memory", rate=0.3, task_description="Answer questions")
        with pytest.raises(TPCSettingsError, match="keep_request would do nothing here"):
            adapter_class(mode="warm", cache="memory", keep_request=False)  # every option that only cuts is named
        with pytest.raises(TPCSettingsError, match="Input should be 'compress' or 'warm'"):
            adapter_class(mode="cache", cache="memory")
        assert adapter_class(mode="warm", cache="memory", batch_size=8, splitter="regex").mode == "warm"
