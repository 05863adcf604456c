"""Index-time compression inside the real framework objects, on the real tpc-mini.

LangChain: ``TPCDocumentTransformer`` feeding an ``InMemoryVectorStore`` (deterministic offline MiniLM embedding).
LlamaIndex: ``TPCTransform`` inside ``IngestionPipeline.run`` after a ``SentenceSplitter``, then a
``VectorStoreIndex``. Most tests use a fixed ``task_description`` (cheap); one exercises the prompt-agnostic path.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from integration_helpers import assert_verbatim_in_order

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from tpc_integrations._ingest import INGEST_METADATA_KEYS

pytestmark = pytest.mark.slow
RATE = 0.4


@pytest.fixture(scope="module")
def task(sample) -> str:
    return f"Answer questions such as: {sample.question}"


@pytest.fixture(scope="module")
def texts(sample) -> list[str]:
    return sample.documents[:3]


def _expected(compressor, texts: list[str], task: str | None) -> list[str]:
    """What the engine alone makes of each document (one batched call, as the transformers make it): the
    reference the transformers must match; a document that keeps no sentence stays whole."""
    return [text for text, _ in _expected_outcomes(compressor, texts, task)]


def _expected_outcomes(compressor, texts: list[str], task: str | None) -> list[tuple[str, str]]:
    """``(text, tpc_compression)`` the transformers must produce for each document. The status follows from
    the document's sentences and budget, not from the engine's output: "kept_whole" when every sentence is
    larger than the budget (TPC never truncates one, so nothing fits and the document stays whole),
    "unchanged" when the budget covers the document, otherwise "compressed". (Without the dev data, the
    bundled text's first paragraph is a single sentence longer than its budget at this rate: kept whole.)"""
    outcomes = []
    for text, result in zip(texts, compressor.compress_batch(texts, question=task, rate=RATE)):
        sizes = [compressor.token_counter(sentence.text) for sentence in result.sentences]
        if result.origin_tokens <= result.budget:
            outcomes.append((text, "unchanged"))
        elif all(size > result.budget for size in sizes):
            assert result.compressed_prompt == ""
            outcomes.append((text, "kept_whole"))
        else:
            assert result.compressed_prompt and result.compressed_prompt != text
            outcomes.append((result.compressed_prompt, "compressed"))
    return outcomes


# ------------------------------------------------------------------------------------------------ LangChain
def _lc_documents(texts: list[str]):
    from langchain_core.documents import Document

    return [Document(page_content=text, id=f"doc-{i}", metadata={"source": f"s{i}", "nested": {"tags": ["a"]}})
            for i, text in enumerate(texts)]


def test_langchain_transformer_fills_a_vector_store_with_compressed_documents(compressor, sample, task, texts):
    from langchain_core.vectorstores import InMemoryVectorStore

    from tpc_integrations.embeddings import langchain_embeddings
    from tpc_integrations.langchain import TPCDocumentTransformer

    documents = _lc_documents(texts)
    before = [d.model_dump() for d in documents]
    transformer = TPCDocumentTransformer(compressor=compressor, rate=RATE, task_description=task)
    out = transformer.transform_documents(documents)

    assert [d.model_dump() for d in documents] == before  # inputs untouched
    assert [d.id for d in out] == [d.id for d in documents]  # one per input, in order
    expected = _expected_outcomes(compressor, texts, task)
    assert "compressed" in {status for _, status in expected}  # the sample has documents TPC shortens
    for original, new, (text, status) in zip(documents, out, expected):
        assert new.page_content == text
        assert new.metadata["source"] == original.metadata["source"]
        assert new.metadata["nested"] == original.metadata["nested"]
        assert new.metadata["nested"] is not original.metadata["nested"]
        assert set(INGEST_METADATA_KEYS) <= set(new.metadata)
        assert new.metadata["tpc_compression"] == status
        assert new.metadata["tpc_task_description"] == task and new.metadata["tpc_task_source"] == "question"
        assert new.metadata["tpc_origin_tokens"] == compressor.token_counter(original.page_content)
        assert new.metadata["tpc_compressed_tokens"] == compressor.token_counter(new.page_content)
        if status == "compressed":
            assert new.metadata["tpc_compressed_tokens"] <= RATE * new.metadata["tpc_origin_tokens"] + 1
            assert_verbatim_in_order(_sentences(compressor, new.page_content, original.page_content),
                                     original.page_content, new.page_content)
        else:  # kept whole or unchanged: never lost, never cut
            assert new.page_content == original.page_content

    embeddings = langchain_embeddings()
    store = InMemoryVectorStore(embedding=embeddings)
    assert store.add_documents(out) == [d.id for d in out]
    stored = store.get_by_ids([d.id for d in out])
    assert [(d.id, d.page_content, d.metadata) for d in stored] == [(d.id, d.page_content, d.metadata) for d in out]
    hit = store.similarity_search(sample.question, k=1)[0]
    assert hit.page_content in {d.page_content for d in out}
    assert store.store[hit.id]["vector"] == pytest.approx(embeddings.embed_query(hit.page_content), abs=1e-5)

    assert [(d.id, d.page_content, d.metadata) for d in asyncio.run(transformer.atransform_documents(documents))] \
        == [(d.id, d.page_content, d.metadata) for d in out]


def _sentences(compressor, compressed: str, original: str) -> list[str]:
    result = compressor.compress(original, question="x", rate=1.0)  # unscored: just the sentence split
    return [s.text for s in result.sentences if s.text in compressed]


def test_langchain_transformer_never_drops_a_document(compressor, task, caplog):
    from tpc_integrations.langchain import TPCDocumentTransformer

    one_long_sentence = "This single sentence " + "goes on and on " * 30 + "before it finally ends."
    three_sentences = "Bills are paid monthly. Refunds take a week. The office is closed on Sundays."
    documents = _lc_documents([one_long_sentence, "  \n ", three_sentences])
    with caplog.at_level(logging.WARNING, logger="tpc_integrations"):
        out = TPCDocumentTransformer(compressor=compressor, target_tokens=10, task_description=task
                                     ).transform_documents(documents)
    assert [d.page_content for d in out] == [d.page_content for d in documents][:2] + [out[2].page_content]
    assert [d.metadata["tpc_compression"] for d in out] == ["kept_whole", "empty", "compressed"]
    assert out[0].metadata["tpc_compressed_tokens"] == out[0].metadata["tpc_origin_tokens"] > 10
    assert any("kept 1 of 3 documents whole" in r.getMessage() for r in caplog.records)
    with pytest.raises(TypeError, match="unexpected arguments"):
        TPCDocumentTransformer(compressor=compressor).transform_documents(documents, rate=0.3)


def test_langchain_transformer_prompt_agnostic(compressor, sample, caplog):
    from tpc_integrations.langchain import TPCDocumentTransformer

    # No task_description: TPC reads the task from each document. This one states its question, so the request
    # head finds it (the cheap prompt-agnostic road; a bare document would make the CTD write one).
    text = "\n\n".join([*sample.documents[:2], f"Question: {sample.question}"])
    with caplog.at_level(logging.INFO, logger="tpc_integrations"):
        transformer = TPCDocumentTransformer(compressor=compressor, rate=RATE)
        out = transformer.transform_documents(_lc_documents([text]))
        transformer.transform_documents(_lc_documents([text]))
    result = compressor.compress(text, rate=RATE)
    assert out[0].page_content == result.compressed_prompt
    assert out[0].metadata["tpc_task_description"] == result.task_description
    assert out[0].metadata["tpc_task_source"] == result.task_source != "question"
    assert out[0].metadata["tpc_compressed_tokens"] <= result.budget
    assert len([r for r in caplog.records if "prompt-agnostically" in r.getMessage()]) == 1


def test_bare_documents_at_index_time_take_the_fallback_task_without_a_generation(compressor, sample):
    from tpc_integrations.langchain import TPCDocumentTransformer
    from tpc_integrations.llama_index import TPCTransform

    # A stored document asks nothing: by default the adapters do not spend a CTD generation on it (describe_bare
    # False) and select by salience under the fallback task, exactly as compress_batch(describe_bare=False) does.
    text = "\n\n".join(sample.documents[:2])
    expected = compressor.compress_batch([text], rate=RATE, describe_bare=False)[0]
    assert expected.task_source == "fallback"
    out = TPCDocumentTransformer(compressor=compressor, rate=RATE).transform_documents(_lc_documents([text]))
    assert out[0].page_content == expected.compressed_prompt
    assert out[0].metadata["tpc_task_source"] == "fallback"
    assert TPCTransform(compressor=compressor, rate=RATE).describe_bare is False
    with pytest.raises(ValueError):
        TPCDocumentTransformer(compressor=compressor, rate=RATE, describe_bare="maybe")


# ------------------------------------------------------------------------------------------------ LlamaIndex
def test_llama_index_ingestion_pipeline_with_a_node_parser(compressor, sample, task):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.schema import Document, MetadataMode, NodeRelationship

    from tpc_integrations.embeddings import llama_index_embedding
    from tpc_integrations.llama_index import TPCTransform

    documents = [Document(text="\n\n".join(sample.documents[:3]), id_="doc-a", metadata={"title": "first"}),
                 Document(text="\n\n".join(sample.documents[3:6]), id_="doc-b", metadata={"title": "second"})]
    splitter = SentenceSplitter(chunk_size=160, chunk_overlap=0)
    embed_model = llama_index_embedding()
    transform = TPCTransform(compressor=compressor, rate=RATE, task_description=task)
    nodes = IngestionPipeline(transformations=[splitter, transform, embed_model]).run(documents=documents)
    chunks = splitter(documents)  # what the node parser alone makes (node ids are random per run)

    assert len(nodes) == len(chunks) > len(documents)
    expected = _expected(compressor, [chunk.get_content(MetadataMode.NONE) for chunk in chunks], task)
    for node, chunk, compressed in zip(nodes, chunks, expected):
        original = chunk.get_content(MetadataMode.NONE)
        assert node.get_content(MetadataMode.NONE) == compressed
        source = chunk.relationships[NodeRelationship.SOURCE].node_id
        assert node.relationships[NodeRelationship.SOURCE].node_id == source
        assert node.metadata["title"] == chunk.metadata["title"]
        assert node.metadata["tpc_origin_tokens"] == compressor.token_counter(original)
        assert node.metadata["tpc_compressed_tokens"] == compressor.token_counter(node.get_content(MetadataMode.NONE))
        assert "tpc_" not in node.get_content(MetadataMode.EMBED) and "tpc_" not in node.get_content(MetadataMode.LLM)
        assert "title: " in node.get_content(MetadataMode.EMBED)  # the user's metadata is still embedded
        assert node.embedding == pytest.approx(embed_model.get_text_embedding(node.get_content(MetadataMode.EMBED)),
                                               abs=1e-5)  # embedded after compression
    assert sum(n.metadata["tpc_compressed_tokens"] for n in nodes) < sum(n.metadata["tpc_origin_tokens"] for n in nodes)

    index = VectorStoreIndex(nodes, embed_model=embed_model)
    retrieved = index.as_retriever(similarity_top_k=2).retrieve(sample.question)
    assert {r.node.node_id for r in retrieved} <= {n.node_id for n in nodes}
    assert all(r.node.metadata["tpc_compression"] in {"compressed", "unchanged", "kept_whole"} for r in retrieved)


def test_llama_index_transform_keeps_ids_relationships_and_media(compressor, task, texts):
    from llama_index.core.schema import ImageNode, NodeRelationship, RelatedNodeInfo, TextNode

    from tpc_integrations.llama_index import TPCTransform

    nodes = [TextNode(text=text, id_=f"n{i}", metadata={"k": i}, embedding=[0.5] * 4,
                      relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="doc", metadata={"i": i})})
             for i, text in enumerate(texts)]
    nodes.insert(1, ImageNode(image_url="https://example.org/seal.png", text="The great seal.", id_="image"))
    before = [n.model_dump() for n in nodes]
    transform = TPCTransform(compressor=compressor, rate=RATE, task_description=task)
    out = transform(nodes)

    assert [n.model_dump() for n in nodes] == before
    assert [n.node_id for n in out] == [n.node_id for n in nodes]
    assert out[1].model_dump() == nodes[1].model_dump() and out[1] is not nodes[1]  # media: an untouched copy
    text_nodes, text_out = [n for n in nodes if n.node_id != "image"], [n for n in out if n.node_id != "image"]
    expected = _expected_outcomes(compressor, [n.text for n in text_nodes], task)
    assert "compressed" in {status for _, status in expected}
    for node, new, (text, status) in zip(text_nodes, text_out, expected):
        assert new.text == text and new.metadata["tpc_compression"] == status
        assert new.relationships == node.relationships and new.metadata["k"] == node.metadata["k"]
        if status == "compressed":
            assert new.embedding is None  # the old vector described the old text
        else:
            assert new.text == node.text and new.embedding == node.embedding  # same text, vector still valid
        assert set(INGEST_METADATA_KEYS) <= set(new.excluded_embed_metadata_keys)
    assert [n.model_dump() for n in asyncio.run(transform.acall(nodes))] == [n.model_dump() for n in out]
    restored = TPCTransform.from_dict(transform.to_dict())
    assert (restored.rate, restored.task_description) == (RATE, task)


def test_transformers_refuse_peer_names_and_check_settings_at_construction():
    from tpc_integrations._checks import TPCSettingsError
    from tpc_integrations.langchain import TPCDocumentTransformer
    from tpc_integrations.llama_index import TPCTransform

    for transformer_class in (TPCDocumentTransformer, TPCTransform):
        with pytest.raises(TPCSettingsError, match="pass `target_tokens=50`.*pass `model_name_or_path='tpc-mini'`"):
            transformer_class(target_token=50, model_name="tpc-mini", device_map="cpu")
        transformer = transformer_class(target_tokens=50, model_name_or_path="tpc-mini", device="cpu")
        assert transformer.target_tokens == 50
        assert (transformer.model_name_or_path, transformer.device) == ("tpc-mini", "cpu")
        with pytest.raises(ValueError, match="`instruction_str` .* did you mean `task_description`"):
            transformer_class(instruction_str="Answer the question")
        with pytest.raises(ValueError, match="device='gpu' is not a device name"):
            transformer_class(device="gpu")
        with pytest.raises(ValueError, match="batch_size must be a positive int"):
            transformer_class(batch_size=0)
