"""End to end with the query-time cache: the same questions asked twice of a LangChain and a LlamaIndex pipeline.

Part of ``python -m benchmarks.run --suite cache`` (:mod:`benchmarks.cache_suite`). The corpus is the chunks of
the questions' own qa_dev ``train`` contexts (about 500 MiniLM tokens each, cut at sentence ends), indexed once
in an in-memory vector store with the offline MiniLM embeddings:

* LangChain: ``ContextualCompressionRetriever(base_compressor=TPCDocumentCompressor(cache="memory"),
  base_retriever=InMemoryVectorStore(...).as_retriever(k=top_k))``;
* LlamaIndex: the query engine ``VectorStoreIndex(...).as_query_engine(similarity_top_k=top_k,
  node_postprocessors=[TPCNodePostprocessor(cache="memory")], response_mode="no_text")`` builds (a
  ``RetrieverQueryEngine``; no answer is written, so no LLM time is mixed in).

Each pipeline gets its own compressor (its own memory cache) and runs every question twice, all of the first
round before the second. A thin wrapper times the compressor's / postprocessor's own call inside the pipeline;
retrieval and index building are not counted. Hits and misses come from the adapters' events (LangChain's
``tpc_compression`` custom event, LlamaIndex's ``ReRankEndEvent`` tags), so they also check that the events
say whether a call was served from the cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from pydantic import Field

from data_access.loaders import Sample
from evaluation.budget import MiniLMTokenCounter
from evaluation.chunks import build_chunks, spread_over_sources

__all__ = ["RememberingEncoder", "corpus_chunks", "langchain_rounds", "llama_index_rounds", "run_pipelines"]


def corpus_chunks(samples: Sequence[Sample], counter: MiniLMTokenCounter, chunk_tokens: int) -> list[Any]:
    """Every chunk of the samples' distinct contexts, in order (:func:`evaluation.chunks.build_chunks`)."""
    seen: set[str] = set()
    chunks = []
    for sample in samples:
        if sample.context not in seen:
            seen.add(sample.context)
            chunks += build_chunks(sample, counter, chunk_tokens)
    return chunks


def run_pipelines(samples: Sequence[Sample], counter: MiniLMTokenCounter, settings: Any) -> dict[str, Any]:
    """Both pipelines over the first ``settings.e2e_questions`` samples (spread over sources)."""
    from tpc_core import TPCCompressor  # lazy: loads torch

    chosen = spread_over_sources(samples, settings.e2e_questions)
    chunks = corpus_chunks(chosen, counter, settings.chunk_tokens)
    texts = [chunk.text for chunk in chunks]
    questions = [sample.question for sample in chosen]
    runs = {}
    for name, rounds in (("langchain", langchain_rounds), ("llama_index", llama_index_rounds)):
        compressor = TPCCompressor.from_pretrained("tpc-mini", device=settings.device)  # an empty cache of its own
        found = rounds(compressor, texts, questions, settings)
        first, second = found
        runs[name] = {"runs": found,
                      "second_over_first": second["compression_s"] / first["compression_s"]
                      if first["compression_s"] else None}
    return {"questions": len(questions), "corpus_chunks": len(texts), "top_k": settings.e2e_top_k,
            "rate": settings.rate, "runs": runs}


def _round_summary(seconds: list[float], events: list[dict[str, Any]]) -> dict[str, Any]:
    def total(key: str) -> int | None:
        values = [event.get(key) for event in events]
        return None if not values or any(value is None for value in values) else int(sum(values))

    return {"calls": len(seconds), "compression_s": sum(seconds),
            "median_call_ms": 1000 * sorted(seconds)[len(seconds) // 2] if seconds else None,
            "cache_hits": total("cache_hits"), "cache_misses": total("cache_misses")}



def _two_rounds(questions: Sequence[str], ask: Callable[[str], Any], seconds: list[float],
                events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every question asked twice over (a cold round, then a warm one); ``seconds`` and ``events`` are what the
    pipeline records, emptied before each round."""
    rounds = []
    for _ in range(2):
        seconds.clear()
        events.clear()
        for question in questions:
            ask(question)
        rounds.append(_round_summary(list(seconds), list(events)))
    return rounds


# ---------------------------------------------------------------------------------------------- LangChain
def langchain_rounds(compressor: Any, texts: list[str], questions: list[str], settings: Any) -> list[dict[str, Any]]:
    """Two rounds of every question through a ``ContextualCompressionRetriever``; one summary per round."""
    from langchain_classic.retrievers import ContextualCompressionRetriever  # lazy: optional extra (langchain)
    from langchain_core.documents import Document  # lazy: optional extra (langchain)
    from langchain_core.vectorstores import InMemoryVectorStore  # lazy: optional extra (langchain)

    from tpc_integrations.langchain import TPCDocumentCompressor  # lazy: optional extras (langchain / llamaindex)

    store = InMemoryVectorStore(embedding=_embeddings("langchain"))
    store.add_documents([Document(page_content=text, id=str(i)) for i, text in enumerate(texts)])
    timed_compressor = _timed_langchain_class()(
        inner=TPCDocumentCompressor(compressor=compressor, rate=settings.rate, cache="memory"))
    base_retriever = store.as_retriever(search_kwargs={"k": settings.e2e_top_k})
    retriever = ContextualCompressionRetriever(base_compressor=timed_compressor, base_retriever=base_retriever)
    handler = _event_collector()
    return _two_rounds(questions, lambda question: retriever.invoke(question, config={"callbacks": [handler]}),
                       timed_compressor.seconds, handler.events)


@lru_cache(maxsize=1)
def _timed_langchain_class() -> type:
    from langchain_core.documents import BaseDocumentCompressor  # lazy: optional extra (langchain)

    class TimedCompressor(BaseDocumentCompressor):
        """Delegates to ``inner`` and records each call's seconds."""

        inner: BaseDocumentCompressor
        seconds: list[float] = Field(default_factory=list)

        def compress_documents(self, documents: Sequence[Any], query: str, callbacks: Any = None) -> Sequence[Any]:
            started = time.perf_counter()
            try:
                return self.inner.compress_documents(documents, query, callbacks=callbacks)
            finally:
                self.seconds.append(time.perf_counter() - started)

    return TimedCompressor


def _event_collector() -> Any:
    from langchain_core.callbacks import BaseCallbackHandler  # lazy: optional extra (langchain)

    from tpc_integrations.langchain import COMPRESSION_EVENT  # lazy: optional extras (langchain / llamaindex)

    class Collector(BaseCallbackHandler):
        def __init__(self) -> None:
            self.events: list[dict[str, Any]] = []

        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            if name == COMPRESSION_EVENT:
                self.events.append(dict(data))

    return Collector()


# ---------------------------------------------------------------------------------------------- LlamaIndex
def llama_index_rounds(compressor: Any, texts: list[str], questions: list[str], settings: Any) -> list[dict[str, Any]]:
    """Two rounds of every question through a LlamaIndex query engine; one summary per round."""
    import llama_index.core.instrumentation as instrument  # lazy: optional extra (llamaindex)
    from llama_index.core import VectorStoreIndex  # lazy: optional extra (llamaindex)
    from llama_index.core.llms import MockLLM  # lazy: optional extra (llamaindex)
    from llama_index.core.query_engine import RetrieverQueryEngine  # lazy: optional extra (llamaindex)
    from llama_index.core.response_synthesizers.no_text import NoText  # lazy: optional extra (llamaindex)
    from llama_index.core.schema import TextNode  # lazy: optional extra (llamaindex)

    from tpc_integrations.llama_index import TPCNodePostprocessor  # lazy: optional extras (langchain / llamaindex)

    index = VectorStoreIndex([TextNode(text=text, id_=str(i)) for i, text in enumerate(texts)],
                             embed_model=_embeddings("llama_index"))
    postprocessor = _timed_llama_index_class()(
        inner=TPCNodePostprocessor(compressor=compressor, rate=settings.rate, cache="memory"))
    # what as_query_engine(response_mode="no_text") builds, with the LLM given (its factory drops llm= for NoText)
    engine = RetrieverQueryEngine(retriever=index.as_retriever(similarity_top_k=settings.e2e_top_k),
                                  response_synthesizer=NoText(llm=MockLLM()), node_postprocessors=[postprocessor])
    handler = _rerank_end_collector()
    root = instrument.get_dispatcher()
    root.add_event_handler(handler)
    try:
        return _two_rounds(questions, engine.query, postprocessor.seconds, handler.events)
    finally:
        root.event_handlers.remove(handler)


@lru_cache(maxsize=1)
def _timed_llama_index_class() -> type:
    from llama_index.core.postprocessor.types import BaseNodePostprocessor  # lazy: optional extra (llamaindex)

    class TimedPostprocessor(BaseNodePostprocessor):
        """Delegates to ``inner`` and records each call's seconds."""

        inner: BaseNodePostprocessor
        seconds: list[float] = Field(default_factory=list)

        def _postprocess_nodes(self, nodes: list[Any], query_bundle: Any = None) -> list[Any]:
            started = time.perf_counter()
            try:
                return self.inner.postprocess_nodes(nodes, query_bundle=query_bundle)
            finally:
                self.seconds.append(time.perf_counter() - started)

    return TimedPostprocessor


def _rerank_end_collector() -> Any:
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler  # lazy: optional extra (llamaindex)
    from llama_index.core.instrumentation.events.rerank import ReRankEndEvent  # lazy: optional extra (llamaindex)

    class Collector(BaseEventHandler):
        events: list[dict[str, Any]] = []

        def handle(self, event: Any, **kwargs: Any) -> None:
            if isinstance(event, ReRankEndEvent) and "cache_hits" in event.tags:
                self.events.append(dict(event.tags))

    collector = Collector()
    collector.events = []
    return collector


class RememberingEncoder:
    """The offline MiniLM encoder (``tpc_integrations.embeddings``) remembering the vectors it made, so both
    indexes embed the corpus once (indexing is not what is timed)."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.vectors: dict[str, list[float]] = {}

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(text for text in texts if text not in self.vectors))
        if missing:
            self.vectors.update(zip(missing, self.encoder.encode(missing)))
        return [self.vectors[text] for text in texts]


@lru_cache(maxsize=1)
def _encoder() -> RememberingEncoder:
    from tpc_integrations.embeddings import shared_encoder  # lazy: optional extras (langchain / llamaindex)

    return RememberingEncoder(shared_encoder())


def _embeddings(framework: str) -> Any:
    """The offline MiniLM embeddings for ``framework`` over the one remembering encoder."""
    from tpc_integrations.embeddings import (  # lazy: optional extras (langchain / llamaindex)
        langchain_embeddings,
        llama_index_embedding,
    )

    return (langchain_embeddings if framework == "langchain" else llama_index_embedding)(_encoder())
