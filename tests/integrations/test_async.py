"""The adapters' async paths under pytest-asyncio: the event loop keeps running during a compression, and
concurrent calls on one shared engine give the sequential results (tiny random checkpoint: wiring only)."""

from __future__ import annotations

import asyncio
import threading

import pytest

TEXTS = ["Alice went to Paris. Bob stayed home. The weather was warm.",
         "Carol flew to Rome. Rome is in Italy. Pasta is popular there.",
         "Dan sailed to Oslo. Oslo is cold. He bought a warm coat."]
QUERIES = ["Where did Alice go?", "What is in Italy?", "Who bought a coat?", "Where is Oslo?"]


@pytest.fixture
def gated(tiny):
    """The engine's first forward pass waits until the test opens the gate (or 30 s pass)."""
    gate, outcome = threading.Event(), []
    handle = tiny.encoder.forward_module.register_forward_pre_hook(lambda *_: outcome.append(gate.wait(30)) or None)
    yield gate, outcome
    handle.remove()


async def _open(gate: threading.Event) -> None:
    await asyncio.sleep(0)
    gate.set()


@pytest.mark.asyncio
async def test_langchain_acompress_leaves_the_event_loop_free(tiny, gated):
    from langchain_core.documents import Document

    from tpc_integrations.langchain import TPCDocumentCompressor

    gate, outcome = gated
    adapter = TPCDocumentCompressor(compressor=tiny, target_tokens=12)
    result, _ = await asyncio.gather(adapter.acompress_documents([Document(page_content=t) for t in TEXTS],
                                                                 QUERIES[0]), _open(gate))
    assert outcome and all(outcome)  # the gate opened while the compression waited in its worker thread
    assert result == adapter.compress_documents([Document(page_content=t) for t in TEXTS], QUERIES[0])


@pytest.mark.asyncio
async def test_llama_index_apostprocess_leaves_the_event_loop_free(tiny, gated):
    from llama_index.core.schema import NodeWithScore, TextNode

    from tpc_integrations.llama_index import TPCNodePostprocessor

    gate, outcome = gated
    adapter = TPCNodePostprocessor(compressor=tiny, target_tokens=12)
    nodes = [NodeWithScore(node=TextNode(text=t, id_=f"n{i}"), score=0.5) for i, t in enumerate(TEXTS)]
    result, _ = await asyncio.gather(adapter.apostprocess_nodes(nodes, query_str=QUERIES[1]), _open(gate))
    assert outcome and all(outcome)
    expected = adapter.postprocess_nodes(nodes, query_str=QUERIES[1])
    assert [(n.node.node_id, n.node.get_content(), n.score) for n in result] == \
        [(n.node.node_id, n.node.get_content(), n.score) for n in expected]


@pytest.mark.asyncio
async def test_concurrent_async_calls_on_one_engine_match_sequential_calls(tiny):
    from langchain_core.documents import Document

    from tpc_integrations.langchain import TPCDocumentCompressor

    adapter = TPCDocumentCompressor(compressor=tiny, target_tokens=10)
    documents = [Document(page_content=t) for t in TEXTS]
    concurrent = await asyncio.gather(*(adapter.acompress_documents(documents, q) for q in QUERIES))
    assert list(concurrent) == [adapter.compress_documents(documents, q) for q in QUERIES]
    assert all(d.page_content and d.metadata["tpc_task_description"] == q for q, docs in zip(QUERIES, concurrent)
               for d in docs)
