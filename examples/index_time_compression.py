"""Index-time compression: compress every document once, while it is ingested, so every later prompt is smaller.

TPC needs no question, so the corpus can be compressed before anyone asks one. With LangChain,
``TPCDocumentTransformer`` transforms the documents before they go into the vector store; with LlamaIndex,
``TPCTransform`` sits in ``IngestionPipeline(transformations=[SentenceSplitter(), TPCTransform(...), embed_model])``.
Sentences are scored against a fixed ``--task-description`` (cheap), or with ``--agnostic`` against the task TPC
reads from each document itself (its task descriptor may generate one per document: slower on CPU).
Runs offline: in-memory stores, the PyPI-shipped MiniLM embedding, tpc-mini.

    python examples/index_time_compression.py [--framework langchain|llamaindex] [--rate 0.5] [--agnostic]
"""

from __future__ import annotations

import argparse
import time

from _example_data import add_data_arguments, answer_found, load_sample, shorten

DEFAULT_TASK = "Answer factual questions about the people, places and events in these passages."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--framework", choices=("langchain", "llamaindex"), default="langchain")
    parser.add_argument("--rate", type=float, default=0.5, help="fraction of each document's tokens to keep")
    parser.add_argument("--task-description", default=DEFAULT_TASK, help="what the corpus will be used for")
    parser.add_argument("--agnostic", action="store_true", help="no task description: TPC reads it per document")
    parser.add_argument("--top-k", type=int, default=3, help="documents retrieved for the sample question")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available)")
    args = parser.parse_args(argv)

    sample = load_sample(args.data, args.sample)
    options = {"rate": args.rate, "device": args.device,
               "task_description": None if args.agnostic else args.task_description}
    started = time.perf_counter()
    if args.framework == "langchain":
        indexed, hits = _langchain(sample, options, args.top_k)
    else:
        indexed, hits = _llama_index(sample, options, args.top_k)
    seconds = time.perf_counter() - started

    origin = sum(meta["tpc_origin_tokens"] for _, meta in indexed)
    kept = sum(meta["tpc_compressed_tokens"] for _, meta in indexed)
    statuses = sorted({meta["tpc_compression"] for _, meta in indexed})
    print(f"sample {sample.id} ({sample.source}), {args.framework}: {len(indexed)} chunks ingested "
          f"({seconds:.1f} s including model loading)")
    print(f"task description: {indexed[0][1]['tpc_task_description']!r}" if not args.agnostic else
          "task description: read from each document (prompt-agnostic)")
    print(f"index before: {origin} tokens; index after: {kept} tokens (rate {args.rate}); statuses: {statuses}")
    in_index = answer_found(sample.answers, " ".join(text for text, _ in indexed))
    print(f"answer {sample.answers} still in the index: {in_index}")
    print(f"question: {sample.question}")
    for text, meta in hits:
        print(f"  - [{meta['tpc_origin_tokens']} -> {meta['tpc_compressed_tokens']} tokens] {shorten(text)}")


def _langchain(sample, options: dict, top_k: int) -> tuple[list, list]:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore

    from tpc_integrations.embeddings import langchain_embeddings
    from tpc_integrations.langchain import TPCDocumentTransformer

    documents = [Document(page_content=text, id=f"{sample.id}/p{i}", metadata={"paragraph": i})
                 for i, text in enumerate(sample.documents)]
    compressed = TPCDocumentTransformer(**options).transform_documents(documents)  # once, at ingestion
    store = InMemoryVectorStore(embedding=langchain_embeddings())
    store.add_documents(compressed)
    hits = store.similarity_search(sample.question, k=top_k)
    return [(d.page_content, d.metadata) for d in compressed], [(d.page_content, d.metadata) for d in hits]


def _llama_index(sample, options: dict, top_k: int) -> tuple[list, list]:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.ingestion import IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.schema import Document, MetadataMode

    from tpc_integrations.embeddings import llama_index_embedding
    from tpc_integrations.llama_index import TPCTransform

    embed_model = llama_index_embedding()
    pipeline = IngestionPipeline(transformations=[SentenceSplitter(chunk_size=256, chunk_overlap=0),
                                                  TPCTransform(**options), embed_model])
    nodes = pipeline.run(documents=[Document(text="\n\n".join(sample.documents), id_=sample.id)])
    index = VectorStoreIndex(nodes, embed_model=embed_model)
    hits = index.as_retriever(similarity_top_k=top_k).retrieve(sample.question)
    return ([(n.get_content(MetadataMode.NONE), n.metadata) for n in nodes],
            [(h.node.get_content(MetadataMode.NONE), h.node.metadata) for h in hits])


if __name__ == "__main__":
    main()
