"""TPCNodePostprocessor with the real tpc-mini: wiring, node kinds, events, async, a real query engine."""

from __future__ import annotations

import asyncio

import pytest
from integration_helpers import assert_verbatim_in_order

pytest.importorskip("llama_index.core")

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import (
    Document,
    ImageNode,
    MediaResource,
    MetadataMode,
    Node,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)

from tests.notice_helpers import oversized
from tpc_integrations._common import METADATA_KEYS
from tpc_integrations.llama_index import TPCNodePostprocessor

pytestmark = pytest.mark.slow
WIRING_BUDGET = 100_000  # covers everything: no scoring, wiring only


def _nodes(texts: list[str]) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(
        text=text, id_=f"node-{i}", metadata={"position": i, "nested": {"tags": ["a"]}},
        excluded_llm_metadata_keys=["nested"],
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="source-doc", metadata={"k": i})}),
        score=1.0 - i / 100) for i, text in enumerate(texts)]


def _dump(nodes: list[NodeWithScore]) -> list[dict]:
    return [n.model_dump() for n in nodes]


def test_budget_covering_everything_returns_copies_with_retrieval_scores(compressor, sample):
    nodes = _nodes(sample.documents)
    before = _dump(nodes)
    postprocessor = TPCNodePostprocessor(compressor=compressor, target_tokens=WIRING_BUDGET)
    out = postprocessor.postprocess_nodes(nodes, query_str="q")

    assert _dump(nodes) == before  # inputs untouched
    assert [n.node_id for n in out] == [n.node_id for n in nodes]
    for original, new in zip(nodes, out):
        assert new is not original and new.node is not original.node
        assert new.score == original.score  # nothing scored: the retrieval score stays
        assert new.node.get_content(MetadataMode.NONE) == original.node.get_content(MetadataMode.NONE)
        assert new.node.relationships == original.node.relationships
        assert new.node.metadata["nested"] == original.node.metadata["nested"]
        assert new.node.metadata["nested"] is not original.node.metadata["nested"]
        assert new.node.metadata["tpc_relevance_score"] is None
        assert new.node.excluded_llm_metadata_keys == ["nested", *METADATA_KEYS]
        assert set(METADATA_KEYS) <= set(new.node.excluded_embed_metadata_keys)
        assert "tpc_" not in new.node.get_content(MetadataMode.LLM)
        assert "tpc_" not in new.node.get_content(MetadataMode.EMBED)
    out[0].node.metadata["nested"]["tags"].append("changed")
    assert nodes[0].node.metadata["nested"]["tags"] == ["a"]


def test_compression_equals_the_engine_with_tpc_scores(compressor, sample):
    nodes = _nodes(sample.documents)
    before = _dump(nodes)
    postprocessor = TPCNodePostprocessor(compressor=compressor, target_tokens=150)
    out = postprocessor.postprocess_nodes(nodes, QueryBundle(sample.question))
    direct = compressor.compress(sample.documents, question=sample.question, target_tokens=150)

    assert _dump(nodes) == before
    kept = [i for i, text in enumerate(direct.compressed_documents) if text]
    assert 0 < len(kept) < len(nodes)
    assert [n.node_id for n in out] == [f"node-{i}" for i in kept]
    assert sum(n.node.metadata["tpc_compressed_tokens"] for n in out) == direct.compressed_tokens <= 150
    for i, new in zip(kept, out):
        assert new.node.get_content(MetadataMode.NONE) == direct.compressed_documents[i]
        assert new.score == pytest.approx(direct.document_score(i))
        assert new.node.metadata["tpc_kept_sentences"] == [s.text for s in direct.kept_sentences(i)]
        assert new.node.relationships[NodeRelationship.SOURCE].metadata == {"k": i}
        assert_verbatim_in_order(new.node.metadata["tpc_kept_sentences"], sample.documents[i],
                                 new.node.get_content(MetadataMode.NONE))


def test_text_is_read_without_metadata(compressor, short_texts):
    node = TextNode(text=short_texts[0], id_="n", metadata={"title": "Grievances. Many of them."})
    out = TPCNodePostprocessor(compressor=compressor, target_tokens=WIRING_BUDGET).postprocess_nodes(
        [NodeWithScore(node=node, score=0.5)], query_str="q")
    assert out[0].node.text == short_texts[0]  # the title was not merged into the text
    assert " ".join(out[0].node.metadata["tpc_kept_sentences"]) == short_texts[0]
    assert out[0].node.metadata["title"] == "Grievances. Many of them."


def test_media_nodes_pass_through_and_empty_text_nodes_are_dropped(compressor, short_texts):
    image = ImageNode(image_url="https://example.org/seal.png", text="The great seal.", id_="image")
    multimodal = Node(image_resource=MediaResource(url="https://example.org/map.png"), id_="media")
    document = Document(text=short_texts[1], id_="document")
    nodes = [NodeWithScore(node=image, score=0.9), NodeWithScore(node=TextNode(text="", id_="empty"), score=0.8),
             NodeWithScore(node=TextNode(text=" \n ", id_="blank"), score=0.7),
             NodeWithScore(node=multimodal, score=0.6), NodeWithScore(node=document, score=0.5),
             NodeWithScore(node=TextNode(text=short_texts[0], id_="text"), score=0.4)]
    with oversized():  # the short texts have sentences larger than a 30-token budget
        out = TPCNodePostprocessor(compressor=compressor, target_tokens=30).postprocess_nodes(
            nodes, query_str="Who refused his assent to laws?")

    ids = [n.node_id for n in out]
    assert ids[0] == "image" and "media" in ids and "empty" not in ids and "blank" not in ids
    assert out[0].score == 0.9 and out[0].node.text == "The great seal." and out[0].node is not image
    assert out[ids.index("media")].node.image_resource.url == multimodal.image_resource.url
    assert "tpc_relevance_score" not in out[0].node.metadata  # not compressed, not scored
    text_out = [n for n in out if n.node_id in ("document", "text")]
    assert text_out and sum(n.node.metadata["tpc_compressed_tokens"] for n in text_out) <= 30
    for n in text_out:
        original = short_texts[1] if n.node_id == "document" else short_texts[0]
        assert_verbatim_in_order(n.node.metadata["tpc_kept_sentences"], original, n.node.get_content())
        assert isinstance(n.node, Document if n.node_id == "document" else TextNode)


def test_bad_input(compressor, short_texts):
    bad = TextNode.model_construct(text=5, id_="bad", metadata={}, relationships={})
    with pytest.raises(TypeError, match=r"Node 1 \(node_id='bad'\) has content of type int"):
        TPCNodePostprocessor(compressor=compressor).postprocess_nodes(
            [NodeWithScore(node=TextNode(text="Fine.")), NodeWithScore(node=bad)], query_str="q")

    duplicates = [NodeWithScore(node=TextNode(text=text, id_="same")) for text in short_texts]
    out = TPCNodePostprocessor(compressor=compressor, target_tokens=WIRING_BUDGET).postprocess_nodes(
        duplicates, query_str="q")
    assert [n.node.text for n in out] == short_texts and {n.node_id for n in out} == {"same"}

    long_query = "Which laws did the King refuse? " * 320
    assert len(long_query) >= 10_000
    with oversized():
        out = TPCNodePostprocessor(compressor=compressor, target_tokens=30).postprocess_nodes(
            _nodes(short_texts), query_str=long_query)
    assert out and sum(n.node.metadata["tpc_compressed_tokens"] for n in out) <= 30

    unloaded = TPCNodePostprocessor()  # checked at construction, loaded on first use
    assert unloaded.postprocess_nodes([], query_str="q") == []
    assert asyncio.run(unloaded.apostprocess_nodes([], query_str="q")) == []
    assert unloaded._compressor is None


def test_serialisation_and_class_name(compressor):
    postprocessor = TPCNodePostprocessor(compressor=compressor, rate=0.3, budget_scope="per_document")
    data = postprocessor.to_dict()
    assert data["class_name"] == TPCNodePostprocessor.class_name() == "TPCNodePostprocessor"
    restored = TPCNodePostprocessor.from_dict(data)
    assert (restored.rate, restored.budget_scope, restored._compressor) == (0.3, "per_document", None)
    assert TPCNodePostprocessor(device="cpu").compressor is compressor  # the shared model


def test_instrumentation_events(compressor, short_texts):
    import llama_index.core.instrumentation as instrument
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler

    seen = []

    class Collector(BaseEventHandler):
        def handle(self, event, **kwargs) -> None:
            seen.append(event)

    root = instrument.get_dispatcher()
    handler = Collector()
    root.add_event_handler(handler)
    try:
        with oversized():  # the short texts have sentences larger than a 30-token budget
            out = TPCNodePostprocessor(compressor=compressor, target_tokens=30).postprocess_nodes(
                _nodes(short_texts), query_str="Who refused his assent to laws?")
    finally:
        root.event_handlers.remove(handler)
    names = [e.class_name() for e in seen]
    start, end = seen[names.index("ReRankStartEvent")], seen[names.index("ReRankEndEvent")]
    assert [n.node_id for n in start.nodes] == ["node-0", "node-1", "node-2"]
    assert [n.node_id for n in end.nodes] == [n.node_id for n in out]
    assert start.span_id == end.span_id and start.span_id.startswith("TPCNodePostprocessor._postprocess_nodes")


def test_concurrent_async_calls_match_sequential_calls(compressor, sample):
    postprocessor = TPCNodePostprocessor(compressor=compressor, target_tokens=60)
    nodes = _nodes(sample.documents[:4])
    distinct = [sample.question, "Who owns the team?", "When was the season?", "Where was she born?"]
    with oversized():  # the sample's documents have sentences larger than a 60-token budget
        sequential = {q: postprocessor.postprocess_nodes(nodes, query_str=q) for q in distinct}
    queries = distinct * 8

    async def run_all() -> list:
        return await asyncio.gather(*(postprocessor.apostprocess_nodes(nodes, query_str=q) for q in queries))

    with oversized():
        concurrent = asyncio.run(run_all())
    assert len(concurrent) == 32
    for query, con in zip(queries, concurrent):
        assert [(n.node_id, n.score, n.node.text, n.node.metadata) for n in sequential[query]] == \
               [(n.node_id, n.score, n.node.text, n.node.metadata) for n in con]


def test_query_engine_prompt_holds_only_the_compressed_text(compressor, sample):
    from llama_index.core import VectorStoreIndex
    from llama_index.core.llms import MockLLM

    from tpc_integrations.embeddings import llama_index_embedding

    nodes = [TextNode(text=text, id_=f"p{i}", metadata={"paragraph": i}) for i, text in enumerate(sample.documents)]
    index = VectorStoreIndex(nodes, embed_model=llama_index_embedding())
    postprocessor = TPCNodePostprocessor(compressor=compressor, target_tokens=120)
    plain = index.as_query_engine(llm=MockLLM(), similarity_top_k=5).query(sample.question)
    compressed = index.as_query_engine(llm=MockLLM(), similarity_top_k=5,
                                       node_postprocessors=[postprocessor]).query(sample.question)

    prompt = str(compressed)  # MockLLM answers with the prompt it received
    retrieved_ids = [n.node_id for n in plain.source_nodes]
    assert [n.node_id for n in compressed.source_nodes] == [i for i in retrieved_ids
                                                             if i in {n.node_id for n in compressed.source_nodes}]
    assert sum(n.node.metadata["tpc_compressed_tokens"] for n in compressed.source_nodes) <= 120
    assert len(prompt) < len(str(plain)) and sample.question in prompt and "tpc_" not in prompt
    for item in compressed.source_nodes:
        assert item.node.get_content(MetadataMode.NONE) in prompt
        assert f"paragraph: {item.node.metadata['paragraph']}" in prompt  # user metadata still reaches the LLM
        original = sample.documents[item.node.metadata["paragraph"]]
        # a paragraph line that was not kept whole does not reach the prompt whole
        cut_lines = [line for line in original.split("\n") if len(line) > 40 and line not in item.node.text]
        assert all(line not in prompt for line in cut_lines)
    assert asyncio.run(index.as_query_engine(llm=MockLLM(), similarity_top_k=5, node_postprocessors=[postprocessor])
                       .aquery(sample.question)).response == prompt


def test_missing_query_bundle_is_prompt_agnostic(compressor, short_texts):
    out = TPCNodePostprocessor(compressor=compressor, target_tokens=40).postprocess_nodes(_nodes(short_texts))
    assert out and sum(n.node.metadata["tpc_compressed_tokens"] for n in out) <= 40
    description = out[0].node.metadata["tpc_task_description"]
    assert isinstance(description, str) and len(description.split()) >= 3  # written by the CTD
    assert all(n.score == n.node.metadata["tpc_relevance_score"] for n in out)


class ListRetriever(BaseRetriever):
    """A retriever that returns copies of the same nodes for every query (the search is not tested here)."""

    def __init__(self, nodes: list[NodeWithScore]) -> None:
        super().__init__()
        self.nodes = nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [NodeWithScore(node=item.node.model_copy(deep=True), score=item.score) for item in self.nodes]


def test_a_retriever_query_engine_hands_the_postprocessor_its_question(compressor, sample):
    """Prompt-aware in a query engine: the engine's question reaches the postprocessor as its query_bundle, so the
    nodes are compressed toward it (the engine's own result for that question) and nothing is searched for."""
    from llama_index.core import get_response_synthesizer
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    nodes = _nodes(sample.documents[:5])
    engine = RetrieverQueryEngine(ListRetriever(nodes), get_response_synthesizer(llm=MockLLM()),
                                  node_postprocessors=[TPCNodePostprocessor(compressor=compressor, target_tokens=120)])
    response = engine.query(sample.question)
    direct = compressor.compress(sample.documents[:5], question=sample.question, target_tokens=120)

    kept = [i for i, text in enumerate(direct.compressed_documents) if text]
    assert [n.node_id for n in response.source_nodes] == [f"node-{i}" for i in kept]
    for i, item in zip(kept, response.source_nodes):
        assert item.node.text == direct.compressed_documents[i] and item.node.text in str(response)
        assert item.node.metadata["tpc_task_source"] == "question"
        assert item.node.metadata["tpc_task_description"] == sample.question
    assert asyncio.run(engine.aquery(sample.question)).response == response.response


def test_a_synthesizer_used_directly_gets_nodes_compressed_toward_its_query(compressor, sample):
    """Without a query engine, the postprocessor is called with the query the synthesizer is given."""
    from llama_index.core import get_response_synthesizer
    from llama_index.core.llms import MockLLM

    nodes = _nodes(sample.documents[:5])
    compressed = TPCNodePostprocessor(compressor=compressor, target_tokens=120).postprocess_nodes(
        nodes, query_str=sample.question)
    response = get_response_synthesizer(llm=MockLLM()).synthesize(sample.question, compressed)

    prompt = str(response)  # MockLLM answers with the prompt it received
    assert sample.question in prompt
    assert [n.node.text for n in compressed] == [t for t in compressor.compress(
        sample.documents[:5], question=sample.question, target_tokens=120).compressed_documents if t]
    for item in compressed:
        assert item.node.text in prompt and item.node.metadata["tpc_task_source"] == "question"
        assert_verbatim_in_order(item.node.metadata["tpc_kept_sentences"], sample.documents[
            item.node.metadata["position"]], item.node.text)
