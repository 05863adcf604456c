"""What users coming from LLMLingua, EmbeddingsFilter, SentenceEmbeddingOptimizer and rerankers
run into. Peer field names, post-budget knobs, construction-time checks, the empty-query note, copying, and
LangChain callbacks — each with both adapters where it applies, on the real tpc-mini."""

from __future__ import annotations

import asyncio
import copy
import logging
import pickle

import pytest
import torch
from integration_helpers import assert_verbatim_in_order

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from tests.notice_helpers import oversized
from tpc_integrations._checks import TPCSettingsError
from tpc_integrations._peer_names import PEER_ALIASES, PEER_HINTS
from tpc_integrations.langchain import COMPRESSION_EVENT, TPCDocumentCompressor
from tpc_integrations.llama_index import TPCNodePostprocessor

pytestmark = pytest.mark.slow
ADAPTERS = [TPCDocumentCompressor, TPCNodePostprocessor]


@pytest.fixture(scope="module")
def texts(sample) -> list[str]:
    """Five of the sample's paragraphs: enough documents for top_n and sort order, cheap on 2 CPU cores."""
    return sample.documents[:5]


def _documents(texts: list[str]) -> list[Document]:
    return [Document(page_content=text, id=f"doc-{i}", metadata={"position": i}) for i, text in enumerate(texts)]


def _nodes(texts: list[str]) -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(text=text, id_=f"doc-{i}", metadata={"position": i}), score=1.0 - i / 100)
            for i, text in enumerate(texts)]


def _run(adapter, texts: list[str], query: str | None) -> list[tuple[str, str, dict]]:
    """(id, text, metadata) of what ``adapter`` keeps, whichever framework it belongs to."""
    if isinstance(adapter, TPCDocumentCompressor):
        return [(d.id, d.page_content, d.metadata) for d in adapter.compress_documents(_documents(texts), query or "")]
    bundle = QueryBundle(query) if query else None
    return [(n.node_id, n.node.text, {**n.node.metadata, "_score": n.score})
            for n in adapter.postprocess_nodes(_nodes(texts), bundle)]


# ------------------------------------------------------------------------------------------------ peer names
@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_peer_names_that_mean_the_same_are_refused_with_ours_and_the_value_to_pass(adapter_class):
    with pytest.raises(TPCSettingsError) as raised:
        adapter_class(target_token=80, model_name="tpc-mini", device_map="cpu", k=3)
    message = str(raised.value)
    for ours in ("`target_tokens=80`", "`model_name_or_path='tpc-mini'`", "`device='cpu'`", "`top_n=3`"):
        assert ours in message, ours
    with pytest.raises(TPCSettingsError) as raised:
        adapter_class(model="tpc-mini", device_map="auto", target_token=-1)
    for ours in ("`model_name_or_path='tpc-mini'`", "`device=None`", "`target_tokens=None`"):
        assert ours in str(raised.value), ours  # "auto" is the best device; LLMLingua's -1 means "no token target"
    adapter = adapter_class(target_tokens=80, model_name_or_path="tpc-mini", device="cpu", top_n=3)
    assert (adapter.target_tokens, adapter.model_name_or_path, adapter.device, adapter.top_n) == (80, "tpc-mini",
                                                                                                 "cpu", 3)


@pytest.mark.parametrize("adapter_class", ADAPTERS)
@pytest.mark.parametrize("peer_name", sorted(PEER_HINTS))
def test_peer_names_that_mean_something_else_get_a_did_you_mean(adapter_class, peer_name):
    source, ours, _ = PEER_HINTS[peer_name]
    with pytest.raises(ValueError) as raised:
        adapter_class(**{peer_name: 0.5})
    message = str(raised.value)
    assert f"`{peer_name}`" in message and source in message
    assert (f"did you mean `{ours}`?" if ours else "TPC has no such option") in message
    assert "Extra inputs are not permitted" not in message


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_unknown_and_conflicting_names(adapter_class):
    with pytest.raises(ValueError, match="unknown field `min_scor`: did you mean `min_score`"):
        adapter_class(min_scor=0.2)
    with pytest.raises(TPCSettingsError, match="`target_token` is LLMLingua.*pass `target_tokens=10`"):
        adapter_class(target_token=10, target_tokens=20)
    with pytest.raises(TPCSettingsError, match="device_map='balanced': TPC places its .* models on one device"):
        adapter_class(device_map="balanced")
    with pytest.raises(TPCSettingsError, match="model= takes a TPC checkpoint name or path"):
        adapter_class(model=object())
    assert set(PEER_ALIASES) == {"target_token", "model_name", "model", "device_map", "k", "token_limit"}


# ------------------------------------------------------------------------------------------------ construction
@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_bad_device_and_model_fail_at_construction(adapter_class, tmp_path):
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device='cuda' was requested but CUDA is not available"):
            adapter_class(device="cuda")
    with pytest.raises(ValueError, match="device='gpu' is not a device name"):
        adapter_class(device="gpu")
    with pytest.raises(ValueError, match="model_name_or_path='tpc-mni' cannot be loaded.*did you mean 'tpc-mini'"):
        adapter_class(model_name_or_path="tpc-mni")
    with pytest.raises(ValueError, match="is not a TPC checkpoint"):
        adapter_class(model_name_or_path=str(tmp_path))  # a directory without tpc_config.json
    with pytest.raises(ValueError, match="splitter='punkt' is not a sentence splitter.*did you mean 'nupunkt'"):
        adapter_class(splitter="punkt")
    with pytest.raises(ValueError, match=r"model_kwargs\['revison'\].*set the adapter's `revision` field"):
        adapter_class(model_kwargs={"revison": "main"})
    with pytest.raises(ValueError, match="top_n must be a positive int"):
        adapter_class(top_n=0)
    with pytest.raises(ValueError, match="task_description is blank"):
        adapter_class(task_description=" ")


def test_a_bad_model_fails_before_the_retriever_runs():
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.retrievers import BaseRetriever

    calls = []

    class CountingRetriever(BaseRetriever):
        def _get_relevant_documents(self, query, *, run_manager):
            calls.append(query)
            return _documents(["Some text."])

    with pytest.raises(ValueError, match="tpc-mni"):
        retriever = ContextualCompressionRetriever(base_compressor=TPCDocumentCompressor(model_name_or_path="tpc-mni"),
                                                   base_retriever=CountingRetriever())
        retriever.invoke("q")
    assert calls == []


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_load_on_init_loads_the_model_at_construction(adapter_class, compressor):
    assert adapter_class(device="cpu")._compressor is None  # default: on first use
    assert adapter_class(device="cpu", load_on_init=True)._compressor is compressor


# ------------------------------------------------------------------------------------------------ knobs
@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_top_n_keeps_the_best_documents_within_the_budget(adapter_class, compressor, sample, texts):
    everything = _run(adapter_class(compressor=compressor, rate=0.3), texts, sample.question)
    top = _run(adapter_class(compressor=compressor, rate=0.3, top_n=2), texts, sample.question)
    assert len(everything) > 2 and len(top) == 2
    best = sorted(everything, key=lambda item: -item[2]["tpc_relevance_score"])[:2]
    assert [item[0] for item in top] == [item[0] for item in everything if item in best]  # input order
    assert top == [item for item in everything if item in best]  # same texts: only whole documents removed


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_sort_by_score_gives_reranker_order(adapter_class, compressor, sample, texts):
    plain = _run(adapter_class(compressor=compressor, rate=0.3), texts, sample.question)
    ranked = _run(adapter_class(compressor=compressor, rate=0.3, sort_by_score=True), texts, sample.question)
    scores = [item[2]["relevance_score"] for item in ranked]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    assert sorted(ranked, key=lambda item: item[0]) == sorted(plain, key=lambda item: item[0])
    assert [item[0] for item in plain] == sorted((item[0] for item in plain), key=lambda i: int(i.split("-")[1]))


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_min_score_removes_off_topic_sentences_kept_to_fill_the_budget(adapter_class, compressor, sample, texts):
    direct = compressor.compress(texts, question=sample.question, rate=0.3)
    kept_scores = sorted(s.score for s in direct.kept_sentences())
    floor = kept_scores[len(kept_scores) // 2]
    out = _run(adapter_class(compressor=compressor, rate=0.3, min_score=floor), texts, sample.question)

    expected = [s.text for s in direct.kept_sentences() if s.score >= floor]
    assert 0 < len(expected) < len(kept_scores)
    assert [sentence for _, _, meta in out for sentence in meta["tpc_kept_sentences"]] == expected
    assert sum(meta["tpc_compressed_tokens"] for _, _, meta in out) <= direct.budget
    for identifier, text, meta in out:
        assert meta["tpc_compressed_tokens"] == compressor.token_counter(text)
        assert_verbatim_in_order(meta["tpc_kept_sentences"], texts[int(identifier.split("-")[1])], text)


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_splitter_is_accepted_and_used(adapter_class, compressor):
    texts = ["First line without a full stop\nSecond line. It has two sentences.\nThird line about icebreakers",
             "Another document\nwith the harbour and the mayor who ordered icebreakers"]
    out = _run(adapter_class(compressor=compressor, rate=0.6, splitter="line"), texts, "Who ordered icebreakers?")
    lines = {line for text in texts for line in text.split("\n")}
    assert out and all(sentence in lines for _, _, meta in out for sentence in meta["tpc_kept_sentences"])


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_task_description_replaces_the_descriptor_without_a_query(adapter_class, compressor, sample, texts, caplog):
    task = f"Find the answer to: {sample.question}"
    adapter = adapter_class(compressor=compressor, target_tokens=100, task_description=task)
    with caplog.at_level(logging.INFO, logger="tpc_integrations"):
        fixed = _run(adapter, texts, None)
    as_query = _run(adapter_class(compressor=compressor, target_tokens=100), texts, task)
    assert fixed == as_query and fixed
    assert all(meta["tpc_task_description"] == task for _, _, meta in fixed)
    assert not [r for r in caplog.records if "prompt-agnostically" in r.getMessage()]
    queried = _run(adapter, texts, sample.question)  # a query, when given, wins
    assert all(meta["tpc_task_description"] == sample.question for _, _, meta in queried)


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_score_is_also_under_relevance_score(adapter_class, compressor, sample, texts):
    out = _run(adapter_class(compressor=compressor, target_tokens=120), texts, sample.question)
    assert out and all(meta["relevance_score"] == meta["tpc_relevance_score"] is not None for _, _, meta in out)


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_empty_query_is_logged_once_at_info(adapter_class, compressor, sample, caplog):
    # The prompt writes its question, so the request head finds it and nothing is generated (fast path).
    texts = [*sample.documents[:3], f"Question: {sample.question}"]
    adapter = adapter_class(compressor=compressor, target_tokens=120)
    with caplog.at_level(logging.INFO, logger="tpc_integrations"):
        first = _run(adapter, texts, "")
        second = _run(adapter, texts, None)
    notes = [r for r in caplog.records if "prompt-agnostically" in r.getMessage()]
    assert len(notes) == 1 and notes[0].levelno == logging.INFO
    assert "task_description" in notes[0].getMessage() and adapter_class.__name__ in notes[0].getMessage()
    assert first == second and first[0][2]["tpc_task_description"]  # the behaviour itself is unchanged


# ------------------------------------------------------------------------------------------------ copying
@pytest.mark.parametrize("adapter_class, clone", [
    (TPCDocumentCompressor, copy.deepcopy), (TPCDocumentCompressor, lambda a: pickle.loads(pickle.dumps(a))),
    (TPCNodePostprocessor, lambda a: pickle.loads(pickle.dumps(a)))], ids=["langchain-deepcopy", "langchain-pickle",
                                                                         "llama-index-pickle"])
def test_adapters_with_a_loaded_model_copy_and_pickle(adapter_class, clone, compressor, sample, texts):
    adapter = adapter_class(device="cpu", target_tokens=80, top_n=3, load_on_init=True)
    copied = clone(adapter)
    assert (copied.target_tokens, copied.top_n) == (80, 3)
    with oversized():  # the texts have sentences larger than an 80-token budget
        assert _run(copied, texts, sample.question) == _run(adapter, texts, sample.question)


# ------------------------------------------------------------------------------------------------ callbacks
class _Collector:
    """A real LangChain callback handler that records custom events."""

    def __new__(cls):
        from langchain_core.callbacks import BaseCallbackHandler

        class Handler(BaseCallbackHandler):
            def __init__(self) -> None:
                self.events: list[tuple[str, dict, object]] = []

            def on_custom_event(self, name, data, *, run_id, tags=None, metadata=None, **kwargs) -> None:
                self.events.append((name, data, run_id))

        return Handler()


def test_each_call_emits_a_custom_event_with_token_counts(compressor, sample):
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.runnables import RunnableLambda
    from langchain_core.vectorstores import InMemoryVectorStore

    from tpc_integrations.embeddings import langchain_embeddings

    store = InMemoryVectorStore(embedding=langchain_embeddings())
    store.add_documents(_documents(sample.documents))
    tpc = TPCDocumentCompressor(compressor=compressor, target_tokens=120)
    retriever = ContextualCompressionRetriever(base_compressor=tpc, base_retriever=store.as_retriever(
        search_kwargs={"k": 5}))

    handler = _Collector()
    out = retriever.invoke(sample.question, config={"callbacks": [handler]})
    assert [name for name, _, _ in handler.events] == [COMPRESSION_EVENT]
    data = handler.events[0][1]
    assert data["compressed_tokens"] == sum(d.metadata["tpc_compressed_tokens"] for d in out) <= data["budget"] == 120
    assert data["origin_tokens"] > data["compressed_tokens"]
    assert (data["documents_in"], data["documents_out"]) == (5, len(out))
    assert (data["task_description"], data["mode"]) == (sample.question, "query")

    chain = retriever | RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))
    batch_handler = _Collector()
    chain.batch([sample.question, "Who owns the team?"], config={"callbacks": [batch_handler]})
    assert [name for name, _, _ in batch_handler.events] == [COMPRESSION_EVENT] * 2
    assert len({run_id for _, _, run_id in batch_handler.events}) == 2  # attached to each retriever run

    direct = _Collector()  # handlers passed straight to compress_documents, outside any run
    tpc.compress_documents(_documents(sample.documents[:3]), sample.question, callbacks=[direct])
    assert [name for name, _, _ in direct.events] == [COMPRESSION_EVENT]


def test_astream_events_shows_the_compression_event(compressor, sample):
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.vectorstores import InMemoryVectorStore

    from tpc_integrations.embeddings import langchain_embeddings

    store = InMemoryVectorStore(embedding=langchain_embeddings())
    store.add_documents(_documents(sample.documents))
    retriever = ContextualCompressionRetriever(
        base_compressor=TPCDocumentCompressor(compressor=compressor, target_tokens=120),
        base_retriever=store.as_retriever(search_kwargs={"k": 5}))

    async def collect() -> list[dict]:
        return [event async for event in retriever.astream_events(sample.question, version="v2")]

    events = asyncio.run(collect())
    custom = [e for e in events if e["event"] == "on_custom_event"]
    assert [e["name"] for e in custom] == [COMPRESSION_EVENT]
    end = [e for e in events if e["event"] == "on_retriever_end"][-1]  # the compression retriever ends last
    out = end["data"]["output"]
    assert custom[0]["data"]["compressed_tokens"] == sum(d.metadata["tpc_compressed_tokens"] for d in out) <= 120
    assert custom[0]["data"]["documents_out"] == len(out)


@pytest.mark.parametrize("adapter_class", ADAPTERS)
def test_a_passed_engine_survives_pickling(adapter_class, tiny):
    # tiny is not the model that model_name_or_path names: an unpickled adapter must keep it, not reload tpc-mini
    adapter = adapter_class(compressor=tiny, target_tokens=15, task_description="Who ordered icebreakers?")
    restored = pickle.loads(pickle.dumps(adapter))
    assert restored.compressor.config.name == "tiny" and restored.compressor is not tiny
    assert (restored.target_tokens, restored.task_description) == (15, "Who ordered icebreakers?")
    texts = ["The harbour froze in January. Ships waited outside for weeks. The mayor ordered icebreakers."]
    assert _run(restored, texts, None) == _run(adapter, texts, None)


def test_every_loader_option_of_from_pretrained_is_accepted_in_model_kwargs():
    """``ctd`` (the CTD paired with a ``cpc-*`` encoder) and the other loader options pass the construction check."""
    from tpc_integrations._checks import check_model_kwargs

    check_model_kwargs({"ctd": "tpc-mini", "load_ctd": False, "local_files_only": True, "token": None,
                        "cache_dir": None, "trust_remote_code": False})
    with pytest.raises(ValueError, match=r"model_kwargs\['ctdd'\]"):
        check_model_kwargs({"ctdd": "tpc-mini"})
