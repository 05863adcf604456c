"""TPCDocumentCompressor with the real tpc-mini: wiring, budget, bad input, async, LangChain pipelines."""

from __future__ import annotations

import asyncio
import copy

import pytest
from integration_helpers import assert_verbatim_in_order

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_classic")

from langchain_core.documents import Document

from tests.notice_helpers import oversized
from tpc_integrations._checks import TPCSettingsError
from tpc_integrations._common import METADATA_KEYS
from tpc_integrations.langchain import TPCDocumentCompressor

pytestmark = pytest.mark.slow
WIRING_BUDGET = 100_000  # covers everything: no scoring, wiring only


def _documents(texts: list[str], prefix: str = "doc") -> list[Document]:
    return [Document(page_content=text, id=f"{prefix}-{i}", metadata={"position": i, "nested": {"tags": ["a"]}})
            for i, text in enumerate(texts)]


def test_budget_covering_everything_returns_equal_new_documents(compressor, sample):
    documents = _documents(sample.documents)
    before = [d.model_dump() for d in documents]
    out = TPCDocumentCompressor(compressor=compressor, target_tokens=WIRING_BUDGET).compress_documents(documents, "q")

    assert [d.model_dump() for d in documents] == before  # inputs untouched
    assert [d.id for d in out] == [d.id for d in documents]
    for original, new in zip(documents, out):
        assert new is not original and new.page_content == original.page_content
        assert new.metadata["nested"] == original.metadata["nested"]
        assert new.metadata["nested"] is not original.metadata["nested"]  # deep copy
        assert new.metadata["tpc_relevance_score"] is None  # nothing was scored
        assert new.metadata["tpc_origin_tokens"] == new.metadata["tpc_compressed_tokens"] > 0
        assert new.metadata["tpc_task_description"] is None
        assert_verbatim_in_order(new.metadata["tpc_kept_sentences"], original.page_content, new.page_content)
    out[0].metadata["nested"]["tags"].append("changed")
    assert documents[0].metadata["nested"]["tags"] == ["a"]


def test_compression_equals_the_engine_and_respects_the_budget(compressor, sample):
    documents = _documents(sample.documents)
    before = [d.model_dump() for d in documents]
    out = TPCDocumentCompressor(compressor=compressor, target_tokens=150).compress_documents(documents,
                                                                                             sample.question)
    direct = compressor.compress(sample.documents, question=sample.question, target_tokens=150)

    assert [d.model_dump() for d in documents] == before
    kept = [i for i, text in enumerate(direct.compressed_documents) if text]
    assert 0 < len(kept) < len(documents)  # some documents lost every sentence and were dropped
    assert [d.id for d in out] == [f"doc-{i}" for i in kept]  # order preserved
    assert sum(d.metadata["tpc_compressed_tokens"] for d in out) == direct.compressed_tokens <= 150
    assert sum(d.metadata["tpc_origin_tokens"] for d in out) < direct.origin_tokens
    for i, new in zip(kept, out):
        assert new.page_content == direct.compressed_documents[i]
        assert new.metadata["tpc_relevance_score"] == pytest.approx(direct.document_score(i))
        assert new.metadata["tpc_kept_sentences"] == [s.text for s in direct.kept_sentences(i)]
        assert new.metadata["tpc_task_description"] == sample.question
        assert new.metadata["position"] == i
        assert_verbatim_in_order(new.metadata["tpc_kept_sentences"], sample.documents[i], new.page_content)


def test_per_document_scope_and_custom_token_counter(compressor, sample):
    def words(text: str) -> int:
        return len(text.split())

    texts = sample.documents[:5]
    adapter = TPCDocumentCompressor(compressor=compressor, rate=0.3, budget_scope="per_document", token_counter=words)
    out = adapter.compress_documents(_documents(texts), sample.question)
    direct = compressor.compress(texts, question=sample.question, rate=0.3, token_counter=words,
                                 budget_scope="per_document")

    assert [d.page_content for d in out] == [t for t in direct.compressed_documents if t]
    assert all(d.metadata["tpc_compressed_tokens"] == words(d.page_content) for d in out)
    assert sum(words(d.page_content) for d in out) == direct.compressed_tokens <= direct.budget
    for d in out:  # each document within its share of the budget
        assert words(d.page_content) <= direct.budget * d.metadata["tpc_origin_tokens"] // direct.origin_tokens


def test_empty_and_whitespace_documents_are_dropped(compressor, short_texts):
    documents = [Document(page_content="", id="empty"), Document(page_content=" \n\t ", id="blank"),
                 Document(page_content=short_texts[0], id="text")]
    out = TPCDocumentCompressor(compressor=compressor, target_tokens=WIRING_BUDGET).compress_documents(documents, "q")
    assert [d.id for d in out] == ["text"]
    assert out[0].page_content == short_texts[0]
    only_blank = [Document(page_content="   ", id="blank")]
    assert TPCDocumentCompressor(compressor=compressor, target_tokens=10).compress_documents(only_blank, "q") == []


def test_non_string_page_content_raises_type_error_naming_the_document(compressor):
    documents = [Document(page_content="Fine text.", id="ok"), Document(page_content="x", id="bad")]
    documents[1].page_content = 42  # Document does not validate on assignment
    with pytest.raises(TypeError, match=r"Document 1 \(id='bad'\) has content of type int"):
        TPCDocumentCompressor(compressor=compressor).compress_documents(documents, "q")


def test_duplicate_ids_are_matched_by_position(compressor, short_texts):
    documents = [Document(page_content=text, id="same") for text in short_texts]
    out = TPCDocumentCompressor(compressor=compressor, target_tokens=WIRING_BUDGET).compress_documents(documents, "q")
    assert [d.id for d in out] == ["same"] * 3
    assert [d.page_content for d in out] == short_texts


def test_empty_list_returns_empty_without_loading_a_model():
    adapter = TPCDocumentCompressor()  # checked at construction, loaded on first use
    assert adapter.compress_documents([], "q") == []
    assert asyncio.run(adapter.acompress_documents([], "q")) == []
    assert adapter._compressor is None


def test_ten_thousand_character_query(compressor, sample):
    query = (sample.question + " ") * (10_000 // (len(sample.question) + 1) + 1)
    assert len(query) >= 10_000
    with oversized():  # the sample's documents have sentences larger than an 80-token budget
        out = TPCDocumentCompressor(compressor=compressor, target_tokens=80).compress_documents(
            _documents(sample.documents[:4]), query)
    assert out and sum(d.metadata["tpc_compressed_tokens"] for d in out) <= 80
    assert out[0].metadata["tpc_task_description"] == query


def test_concurrent_async_calls_match_sequential_calls(compressor, sample):
    adapter = TPCDocumentCompressor(compressor=compressor, target_tokens=60)
    documents = _documents(sample.documents[:4])
    distinct = [sample.question, "Who owns the team?", "When was the season?", "Where was she born?"]
    with oversized():  # the sample's documents have sentences larger than a 60-token budget
        sequential = {q: adapter.compress_documents(documents, q) for q in distinct}
    queries = distinct * 8

    async def run_all() -> tuple[list, int]:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:  # only advances while the event loop is free
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        tick_task = asyncio.create_task(ticker())
        results = await asyncio.gather(*(adapter.acompress_documents(documents, q) for q in queries))
        done.set()
        await tick_task
        return results, ticks

    with oversized():
        concurrent, ticks = asyncio.run(run_all())
    assert len(concurrent) == 32 and ticks > 10
    for query, con in zip(queries, concurrent):
        seq = sequential[query]
        assert [(d.id, d.page_content, d.metadata) for d in seq] == [(d.id, d.page_content, d.metadata) for d in con]


def test_settings_are_validated():
    with pytest.raises(TPCSettingsError, match="unknown field `target_tokns`: did you mean `target_tokens`"):
        TPCDocumentCompressor(target_tokns=300)
    with pytest.raises(TPCSettingsError, match="either target_tokens or rate"):
        TPCDocumentCompressor(target_tokens=300, rate=0.5)
    with pytest.raises(TPCSettingsError, match="budget_scope"):
        TPCDocumentCompressor(budget_scope="document")
    with pytest.raises(TPCSettingsError, match="TPCCompressor"):
        TPCDocumentCompressor(compressor="tpc-mini")
    assert TPCDocumentCompressor.model_fields["target_tokens"].description.startswith("Token budget")


def test_model_is_loaded_once_and_shared(compressor):
    first, second = TPCDocumentCompressor(device="cpu"), TPCDocumentCompressor(device="cpu", target_tokens=5)
    assert first.compressor is compressor and second.compressor is compressor


def test_contextual_compression_retriever_and_pipeline(compressor, sample):
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
    from langchain_core.vectorstores import InMemoryVectorStore

    from tpc_integrations.embeddings import langchain_embeddings

    store = InMemoryVectorStore(embedding=langchain_embeddings())
    store.add_documents(_documents(sample.documents, prefix="p"))
    base = store.as_retriever(search_kwargs={"k": 5})
    retrieved = base.invoke(sample.question)
    assert len(retrieved) == 5

    tpc = TPCDocumentCompressor(compressor=compressor, target_tokens=120)
    for base_compressor in (tpc, DocumentCompressorPipeline(transformers=[tpc])):
        retriever = ContextualCompressionRetriever(base_compressor=base_compressor, base_retriever=base)
        out = retriever.invoke(sample.question)
        expected = tpc.compress_documents(copy.deepcopy(retrieved), sample.question)
        assert [(d.id, d.page_content) for d in out] == [(d.id, d.page_content) for d in expected]
        assert out and set(d.id for d in out) <= set(d.id for d in retrieved)
        assert sum(d.metadata["tpc_compressed_tokens"] for d in out) <= 120
        assert all(set(METADATA_KEYS) <= set(d.metadata) for d in out)
        assert [d.id for d in asyncio.run(retriever.ainvoke(sample.question))] == [d.id for d in out]


def test_empty_query_is_prompt_agnostic(compressor, short_texts):
    documents = _documents(short_texts)
    out = TPCDocumentCompressor(compressor=compressor, target_tokens=40).compress_documents(documents, "")
    assert out and sum(d.metadata["tpc_compressed_tokens"] for d in out) <= 40
    description = out[0].metadata["tpc_task_description"]
    assert isinstance(description, str) and len(description.split()) >= 3  # written by the CTD
    assert all(d.metadata["tpc_task_description"] == description for d in out)
    assert all(isinstance(d.metadata["tpc_relevance_score"], float) for d in out)
    for d in out:
        original = short_texts[int(d.id.split("-")[1])]
        assert_verbatim_in_order(d.metadata["tpc_kept_sentences"], original, d.page_content)
