"""LangChain RAG with TPC: a vector-store retriever whose documents TPC compresses before they reach the prompt.

The one line that adds compression is ``ContextualCompressionRetriever(base_compressor=TPCDocumentCompressor(...),
base_retriever=...)``. Runs offline: in-memory vector store, the PyPI-shipped MiniLM as embedding, tpc-mini.

    python examples/langchain_rag.py [--data /work/shared/data/qa_dev.jsonl] [--sample 0] [--target-tokens 200]
"""

from __future__ import annotations

import argparse
import time

from _example_data import add_data_arguments, answer_found, load_sample, shorten, token_counter
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.prompts import PromptTemplate
from langchain_core.vectorstores import InMemoryVectorStore

from tpc_integrations.embeddings import langchain_embeddings
from tpc_integrations.langchain import TPCDocumentCompressor

PROMPT = PromptTemplate.from_template(
    "Answer the question using only the context.\n\nContext:\n{context}\n\nQuestion: {question}\nAnswer:")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--top-k", type=int, default=5, help="documents the vector store returns")
    parser.add_argument("--target-tokens", type=int, default=200, help="TPC budget over the retrieved documents")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available)")
    args = parser.parse_args(argv)

    sample = load_sample(args.data, args.sample)
    documents = [Document(page_content=text, id=f"{sample.id}/p{i}", metadata={"source": sample.source, "paragraph": i})
                 for i, text in enumerate(sample.documents)]
    store = InMemoryVectorStore(embedding=langchain_embeddings())
    store.add_documents(documents)
    base_retriever = store.as_retriever(search_kwargs={"k": args.top_k})
    compressor = TPCDocumentCompressor(target_tokens=args.target_tokens, device=args.device)
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base_retriever)

    retrieved = base_retriever.invoke(sample.question)
    started = time.perf_counter()
    compressed = retriever.invoke(sample.question)
    seconds = time.perf_counter() - started

    count = token_counter(compressor.compressor)
    before = PROMPT.format(context="\n\n".join(d.page_content for d in retrieved), question=sample.question)
    after = PROMPT.format(context="\n\n".join(d.page_content for d in compressed), question=sample.question)
    print(f"sample {sample.id} ({sample.source}): {len(sample.documents)} documents in the vector store")
    print(f"question: {sample.question}")
    print(f"answers: {sample.answers}")
    print(f"retrieved {len(retrieved)} documents, {len(compressed)} kept after TPC "
          f"(retrieval + compression {seconds:.2f} s)")
    print(f"prompt before: {count(before)} tokens, {len(before)} chars; answer in it: "
          f"{answer_found(sample.answers, before)}")
    print(f"prompt after:  {count(after)} tokens, {len(after)} chars; answer in it: "
          f"{answer_found(sample.answers, after)}  (budget {args.target_tokens} tokens for the documents)")
    for document in compressed:
        meta = document.metadata
        score = meta["tpc_relevance_score"]
        print(f"\n[{document.id}] score={'-' if score is None else f'{score:.3f}'} "
              f"tokens {meta['tpc_origin_tokens']} -> {meta['tpc_compressed_tokens']}; kept sentences:")
        for sentence in meta["tpc_kept_sentences"]:
            print(f"  - {shorten(sentence)}")


if __name__ == "__main__":
    main()
