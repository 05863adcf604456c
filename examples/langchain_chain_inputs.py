"""A LangChain RAG chain that gives TPC the question: ``TPCInputCompressor`` on the chain's input dict compresses the
``context`` variable toward the ``question`` variable, before the prompt template fills them in (prompt-aware:
nothing to find).

The chain is the LangChain docs' RAG shape with one runnable added::

    {"context": retriever | format_docs, "question": RunnablePassthrough()} | TPCInputCompressor(...) | prompt | llm

Runs offline: in-memory vector store, the PyPI-shipped MiniLM as embedding, tpc-mini; the chain stops at the
prompt (add your LLM after it).

    python examples/langchain_chain_inputs.py [--data /work/shared/data/qa_dev.jsonl] [--sample 0] [--target-tokens 200]
"""

from __future__ import annotations

import argparse

from _example_data import add_data_arguments, answer_found, load_sample, shorten, token_counter
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.prompts import PromptTemplate
from langchain_core.runnables import RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore

from tpc_integrations.embeddings import langchain_embeddings
from tpc_integrations.langchain import INPUTS_EVENT, TPCInputCompressor

PROMPT = PromptTemplate.from_template(
    "Answer the question using only the context.\n\nContext:\n{context}\n\nQuestion: {question}\nAnswer:")


def format_docs(documents: list[Document]) -> str:
    return "\n\n".join(document.page_content for document in documents)


class EventPrinter(BaseCallbackHandler):
    """Keeps the compressor's event: its figures and the question it compressed toward."""

    def __init__(self) -> None:
        self.data: dict = {}

    def on_custom_event(self, name, data, **kwargs) -> None:
        if name == INPUTS_EVENT:
            self.data = data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--top-k", type=int, default=5, help="documents the vector store returns")
    parser.add_argument("--target-tokens", type=int, default=200, help="TPC budget over the context variable")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available)")
    args = parser.parse_args(argv)

    sample = load_sample(args.data, args.sample)
    store = InMemoryVectorStore(embedding=langchain_embeddings())
    store.add_documents([Document(page_content=text, id=f"{sample.id}/p{i}")
                         for i, text in enumerate(sample.documents)])
    retriever = store.as_retriever(search_kwargs={"k": args.top_k})
    compressor = TPCInputCompressor(context_keys=["context"], question_key="question",
                                    target_tokens=args.target_tokens, device=args.device)
    inputs = {"context": retriever | format_docs, "question": RunnablePassthrough()}

    event = EventPrinter()
    before = (inputs | PROMPT).invoke(sample.question).to_string()
    after = (inputs | compressor | PROMPT).invoke(sample.question, config={"callbacks": [event]}).to_string()

    count = token_counter(compressor.compressor)
    print(f"sample {sample.id} ({sample.source}): {len(sample.documents)} documents in the vector store")
    print(f"question: {sample.question}")
    print(f"answers: {sample.answers}")
    print(f"compressed toward ({event.data['task_source']}): {event.data['task_description']}")
    print(f"prompt before: {count(before)} tokens, {len(before)} chars; answer in it: "
          f"{answer_found(sample.answers, before)}")
    print(f"prompt after:  {count(after)} tokens, {len(after)} chars; answer in it: "
          f"{answer_found(sample.answers, after)}  (context {event.data['compressed_tokens']} tokens, budget "
          f"{args.target_tokens})")
    print("\nsentences kept:")
    context = after.split("Context:\n", 1)[1].rsplit("\n\nQuestion:", 1)[0]
    for start, end in compressor.compressor.engine.splitter().spans(context):
        print(f"  - {shorten(context[start:end])}")


if __name__ == "__main__":
    main()
