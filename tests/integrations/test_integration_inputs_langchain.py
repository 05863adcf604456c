"""LangChain: TPCInputCompressor on a chain's input dict, before the prompt template, with the real tpc-mini and real
langchain_core runnables: the context variables are compressed toward the question variable (prompt-aware)."""

from __future__ import annotations

import asyncio
import copy

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models import FakeListLLM
from langchain_core.prompts import PromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnablePassthrough

from tests.conversation_helpers import is_selection
from tests.notice_helpers import logged_only
from tpc_integrations._checks import TPCSettingsError
from tpc_integrations.langchain import INPUTS_EVENT, TPCInputCompressor

pytestmark = pytest.mark.slow
BUDGET = 120
PROMPT = PromptTemplate.from_template(
    "Answer the question using only the context.\n\nContext:\n{context}\n\nQuestion: {question}\nAnswer:")
ANSWER = "An answer."


class ListRetriever(BaseRetriever):
    """A retriever that returns the same documents for every query (the vector search is not what is tested)."""

    documents: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager) -> list[Document]:
        return [document.model_copy(deep=True) for document in self.documents]


class Recorder(BaseCallbackHandler):
    """The prompts the LLM was sent and the TPC events of the run."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.events: list[dict] = []

    def on_llm_start(self, serialized, prompts, **kwargs) -> None:
        self.prompts.extend(prompts)

    def on_custom_event(self, name, data, **kwargs) -> None:
        if name == INPUTS_EVENT:
            self.events.append(data)


def _format_docs(documents: list[Document]) -> str:
    return "\n\n".join(document.page_content for document in documents)


@pytest.fixture(scope="module")
def documents(sample) -> list[Document]:
    return [Document(page_content=text, id=f"p{i}", metadata={"paragraph": i, "nested": {"tags": ["a"]}})
            for i, text in enumerate(sample.documents[:5])]


def _check_context(compressed: str, original: str, compressor) -> None:
    """Only original sentences, verbatim and in order, within the budget (the engine's own counter)."""
    assert compressed and compressed != original
    assert is_selection(original, compressed, compressor.engine.splitter())
    assert compressor.token_counter(compressed) <= BUDGET < compressor.token_counter(original)


def test_the_langchain_rag_chain_sends_the_llm_a_context_compressed_toward_its_question(compressor, sample,
                                                                                       documents):
    recorder = Recorder()
    chain = ({"context": ListRetriever(documents=documents) | _format_docs, "question": RunnablePassthrough()}
             | TPCInputCompressor(compressor=compressor, target_tokens=BUDGET) | PROMPT
             | FakeListLLM(responses=[ANSWER]))
    answer = chain.invoke(sample.question, config={"callbacks": [recorder]})

    assert answer == ANSWER
    original = _format_docs(documents)
    direct = compressor.compress(original, question=sample.question, target_tokens=BUDGET)
    assert recorder.prompts == [PROMPT.format(context=direct.compressed_prompt, question=sample.question)]
    _check_context(direct.compressed_prompt, original, compressor)
    [event] = recorder.events
    assert event["task_source"] == "question" and event["task_description"] == sample.question
    assert event["mode"] == "query" and event["compressed_tokens"] <= BUDGET == event["budget"]
    assert event["context_keys"] == ["context"] and event["question_key"] == "question"


def test_documents_come_back_compressed_with_their_metadata_and_the_input_is_untouched(compressor, sample, documents):
    extra = {"keep": ["me"]}
    inputs = {"context": documents, "question": sample.question, "extra": extra}
    before = copy.deepcopy(inputs)
    out, data = TPCInputCompressor(compressor=compressor, target_tokens=BUDGET).compress(inputs)
    direct = compressor.compress([d.page_content for d in documents], question=sample.question, target_tokens=BUDGET)

    assert inputs == before and out is not inputs
    assert out["question"] == sample.question and out["extra"] is extra  # other keys pass through
    kept = [i for i, text in enumerate(direct.compressed_documents) if text]
    assert 0 < len(kept) < len(documents)  # a document that keeps nothing is dropped
    assert [d.id for d in out["context"]] == [f"p{i}" for i in kept]
    assert sum(d.metadata["tpc_compressed_tokens"] for d in out["context"]) == data["compressed_tokens"] <= BUDGET
    for i, new in zip(kept, out["context"]):
        assert new.page_content == direct.compressed_documents[i]
        assert is_selection(documents[i].page_content, new.page_content, compressor.engine.splitter())
        assert new.metadata["paragraph"] == i and new.metadata["nested"] is not documents[i].metadata["nested"]
        assert new.metadata["tpc_task_source"] == "question"
        assert new.metadata["tpc_task_description"] == sample.question
    assert data["documents_in"] == len(documents) and data["documents_out"] == len(kept)


def test_several_context_keys_of_every_shape_share_one_budget(compressor, sample, documents):
    texts = [d.page_content for d in documents[:3]]
    inputs = {"passages": texts, "notes": documents[3], "summary": documents[4].page_content,
              "query": sample.question}
    compressor_runnable = TPCInputCompressor(compressor=compressor, context_keys=["passages", "notes", "summary"],
                                             question_key="query", target_tokens=BUDGET, sort_by_score=True)
    out, data = compressor_runnable.compress(inputs)
    direct = compressor.compress([*texts, documents[3].page_content, documents[4].page_content],
                                 question=sample.question, target_tokens=BUDGET)

    scores = {text: direct.document_score(i) for i, text in enumerate(direct.compressed_documents) if text}
    assert out["passages"] == sorted([t for t in direct.compressed_documents[:3] if t], key=lambda t: -scores[t])
    assert isinstance(out["notes"], Document) and out["notes"].id == "p3"
    assert out["notes"].page_content == direct.compressed_documents[3]
    assert out["summary"] == direct.compressed_documents[4]  # a single str stays a str, "" when it kept nothing
    assert data["compressed_tokens"] == direct.compressed_tokens <= BUDGET
    assert data["task_source"] == "question" and data["task_description"] == sample.question


def test_async_and_batch_give_the_sync_result(compressor, sample, documents):
    runnable = TPCInputCompressor(compressor=compressor, target_tokens=BUDGET)
    inputs = [{"context": _format_docs(documents[:3]), "question": sample.question},
              {"context": _format_docs(documents[2:]), "question": sample.question}]
    expected = [runnable.invoke(item) for item in inputs]
    recorder = Recorder()

    assert runnable.batch(inputs) == expected
    assert asyncio.run(runnable.ainvoke(inputs[0], config={"callbacks": [recorder]})) == expected[0]
    assert asyncio.run(runnable.abatch(inputs)) == expected
    assert [event["task_source"] for event in recorder.events] == ["question"]
    for item, out in zip(inputs, expected):
        assert is_selection(item["context"], out["context"], compressor.engine.splitter())


def test_a_blank_question_uses_the_task_description(compressor, sample, documents):
    runnable = TPCInputCompressor(compressor=compressor, target_tokens=BUDGET, task_description=sample.question)
    out, data = runnable.compress({"context": _format_docs(documents), "question": "  "})
    assert data["mode"] == "task_description" and data["task_description"] == sample.question
    assert out["question"] == "  "
    _check_context(out["context"], _format_docs(documents), compressor)


def test_a_budget_covering_the_context_and_empty_lists_return_it_unchanged(compressor, sample, documents):
    runnable = TPCInputCompressor(compressor=compressor, target_tokens=100_000, context_keys=["context", "none"])
    out, data = runnable.compress({"context": documents[:2], "none": [], "question": sample.question})
    assert [d.page_content for d in out["context"]] == [d.page_content for d in documents[:2]]
    assert out["none"] == [] and data["mode"] == "unscored"
    assert all(d.metadata["tpc_relevance_score"] is None for d in out["context"])


@pytest.mark.parametrize(("inputs", "error", "words"), [
    ({"question": "q"}, KeyError, "no 'context'"),
    ({"context": "text"}, KeyError, "no 'question'"),
    ({"context": "text", "question": ["q"]}, TypeError, "'question' is a list, not a str"),
    ("just a question", TypeError, "input dict"),
    ({"context": 3, "question": "q"}, TypeError, "Context 'context' is a int"),
    ({"context": ["a", 3], "question": "q"}, TypeError, "Context 'context' item 1 is a int"),
    ({"context": Document(page_content="x").model_construct(page_content=b"x"), "question": "q"}, TypeError,
     "content of type bytes"),
])
def test_a_chain_wired_wrong_gets_a_clear_error(compressor, inputs, error, words):
    runnable = TPCInputCompressor(compressor=compressor, target_tokens=BUDGET)
    with pytest.raises(error, match=words):
        runnable.invoke(inputs)


def test_an_unknown_context_key_names_the_keys_the_input_has(compressor):
    runnable = TPCInputCompressor(compressor=compressor, context_keys="docs", target_tokens=BUDGET)
    with pytest.raises(KeyError, match=r"no 'docs' \(it has \['context', 'question'\]\)"):
        runnable.invoke({"context": "text", "question": "q"})


@pytest.mark.parametrize(("settings", "words"), [
    ({"context_keys": []}, "context_keys is empty"),
    ({"context_keys": ["a", "a"]}, "names a key twice"),
    ({"context_keys": ["context", "question"]}, "also in context_keys"),
    ({"context_keys": [3]}, "context_keys"),
    ({"target_token": 10, "rate": 0.5}, "target_tokens"),
])
def test_bad_settings_are_refused_at_construction(compressor, settings, words):
    with pytest.raises(TPCSettingsError, match=words):
        TPCInputCompressor(compressor=compressor, **settings)


def test_passthrough_returns_the_input_unchanged_and_says_why(compressor, documents, caplog):
    runnable = TPCInputCompressor(compressor=compressor, target_tokens=BUDGET, on_error="passthrough")
    inputs = {"context": [documents[0], 3], "question": "q"}
    with logged_only(caplog, "passthrough"):
        out, data = runnable.compress(inputs)
    assert out["context"][0] == documents[0] and out["context"][0] is not documents[0] and out["context"][1] == 3
    assert data["fallback"] == "error" and data["error"].startswith("TypeError") and data["mode"] == "fallback"
