"""Query-time compression from a sentence cache: index the full text once, compress per question in milliseconds.

At ingestion, ``TPCDocumentTransformer(mode="warm", cache=DIR)`` (LangChain) or ``TPCTransform(mode="warm",
cache=DIR)`` (LlamaIndex) cuts nothing: the vector store gets every chunk's full text, and DIR gets what TPC reads
of each chunk before any question (its sentences, their token counts and embeddings). At query time
``TPCDocumentCompressor(cache=DIR)`` / ``TPCNodePostprocessor(cache=DIR)`` finds every retrieved chunk there and
runs only what depends on the question: prompt-aware compression at a small fraction of its usual cost. The
adapter's event says whether the call was served from the cache. Runs offline: in-memory stores, the PyPI-shipped
MiniLM embedding, tpc-mini.

    python examples/query_time_cache.py [--framework langchain|llamaindex] [--cache-dir DIR] [--rate 0.3]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from _example_data import add_data_arguments, answer_found, load_sample, shorten, token_counter


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--framework", choices=("langchain", "llamaindex"), default="langchain")
    parser.add_argument("--cache-dir", default=None, help="where the cache entries go (default: a new temporary one)")
    parser.add_argument("--rate", type=float, default=0.3, help="fraction of the retrieved tokens to keep")
    parser.add_argument("--top-k", type=int, default=5, help="chunks retrieved for the question")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available)")
    args = parser.parse_args(argv)

    sample = load_sample(args.data, args.sample)
    cache = args.cache_dir or tempfile.mkdtemp(prefix="tpc-cache-")
    run = _langchain if args.framework == "langchain" else _llama_index
    report = run(sample, cache, args)

    count = token_counter(report["engine"])
    before, after = "\n\n".join(report["retrieved"]), "\n\n".join(report["kept_texts"])
    event = report["event"]
    print(f"sample {sample.id} ({sample.source}), {args.framework}: {report['indexed']} chunks indexed whole, their "
          f"cache entries stored in {cache} ({report['ingest_s']:.1f} s including model loading)")
    print(f"question: {sample.question}")
    print(f"retrieved {len(report['retrieved'])} chunks; served from the cache: {event['from_cache']} "
          f"({event['cache_hits']} hits, {event['cache_misses']} misses)")
    print(f"compression time: {1000 * report['warm_s']:.0f} ms from the cache, {1000 * report['cold_s']:.0f} ms "
          f"without it ({report['cold_s'] / report['warm_s']:.0f}x)")
    print(f"prompt before: {count(before)} tokens; answer in it: {answer_found(sample.answers, before)}")
    print(f"prompt after:  {count(after)} tokens (rate {args.rate}); answer in it: "
          f"{answer_found(sample.answers, after)}")
    print("kept sentences:")
    for sentence in report["kept_sentences"]:
        print(f"  - {shorten(sentence)}")


def _timed(function):
    started = time.perf_counter()
    value = function()
    return value, time.perf_counter() - started


def _langchain(sample, cache: str, args: argparse.Namespace) -> dict:
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from tpc_integrations.embeddings import langchain_embeddings
    from tpc_integrations.langchain import COMPRESSION_EVENT, TPCDocumentCompressor, TPCDocumentTransformer

    class Events(BaseCallbackHandler):
        def __init__(self) -> None:
            self.seen: list[dict] = []

        def on_custom_event(self, name, data, **kwargs) -> None:
            if name == COMPRESSION_EVENT:
                self.seen.append(data)

    chunks = [Document(page_content=text, id=f"{sample.id}/p{i}") for i, text in enumerate(sample.documents)]
    warm = TPCDocumentTransformer(mode="warm", cache=cache, device=args.device)
    indexed, ingest_s = _timed(lambda: warm.transform_documents(chunks))  # full text; entries stored in the cache
    store = InMemoryVectorStore(embedding=langchain_embeddings())
    store.add_documents(indexed)
    base = store.as_retriever(search_kwargs={"k": args.top_k})
    compressor = TPCDocumentCompressor(rate=args.rate, cache=cache, device=args.device)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)

    retrieved = base.invoke(sample.question)
    events = Events()
    compressed = retriever.invoke(sample.question, config={"callbacks": [events]})
    _, warm_s = _timed(lambda: compressor.compress_documents(retrieved, sample.question))
    uncached = TPCDocumentCompressor(rate=args.rate, device=args.device)  # the same engine, no cache
    _, cold_s = _timed(lambda: uncached.compress_documents(retrieved, sample.question))
    return {"engine": compressor.compressor, "indexed": len(indexed), "ingest_s": ingest_s,
            "retrieved": [d.page_content for d in retrieved], "kept_texts": [d.page_content for d in compressed],
            "kept_sentences": [s for d in compressed for s in d.metadata["tpc_kept_sentences"]],
            "event": events.seen[0], "warm_s": warm_s, "cold_s": cold_s}


def _llama_index(sample, cache: str, args: argparse.Namespace) -> dict:
    import llama_index.core.instrumentation as instrument
    from llama_index.core import VectorStoreIndex
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events.rerank import ReRankEndEvent
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.schema import Document, MetadataMode

    from tpc_integrations.embeddings import llama_index_embedding
    from tpc_integrations.llama_index import TPCNodePostprocessor, TPCTransform

    seen: list[dict] = []

    class Events(BaseEventHandler):
        def handle(self, event, **kwargs) -> None:
            if isinstance(event, ReRankEndEvent):
                seen.append(dict(event.tags))

    embed_model = llama_index_embedding()
    pipeline = IngestionPipeline(transformations=[SentenceSplitter(chunk_size=256, chunk_overlap=0),
                                                  TPCTransform(mode="warm", cache=cache, device=args.device),
                                                  embed_model])
    nodes, ingest_s = _timed(lambda: pipeline.run(documents=[Document(text="\n\n".join(sample.documents),
                                                                       id_=sample.id)]))
    retrieved = VectorStoreIndex(nodes, embed_model=embed_model).as_retriever(
        similarity_top_k=args.top_k).retrieve(sample.question)
    postprocessor = TPCNodePostprocessor(rate=args.rate, cache=cache, device=args.device)
    root, handler = instrument.get_dispatcher(), Events()
    root.add_event_handler(handler)
    try:
        compressed, warm_s = _timed(lambda: postprocessor.postprocess_nodes(retrieved, query_str=sample.question))
    finally:
        root.event_handlers.remove(handler)
    uncached = TPCNodePostprocessor(rate=args.rate, device=args.device)
    _, cold_s = _timed(lambda: uncached.postprocess_nodes(retrieved, query_str=sample.question))
    return {"engine": postprocessor.compressor, "indexed": len(nodes), "ingest_s": ingest_s,
            "retrieved": [n.node.get_content(MetadataMode.NONE) for n in retrieved],
            "kept_texts": [n.node.get_content(MetadataMode.NONE) for n in compressed],
            "kept_sentences": [s for n in compressed for s in n.node.metadata["tpc_kept_sentences"]],
            "event": seen[0], "warm_s": warm_s, "cold_s": cold_s}


if __name__ == "__main__":
    main()
