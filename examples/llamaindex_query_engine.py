"""LlamaIndex query engine with TPC: retrieved nodes are compressed before the LLM sees them.

The one line that adds compression is ``index.as_query_engine(node_postprocessors=[TPCNodePostprocessor(...)])``.
Runs offline: the PyPI-shipped MiniLM as embedding, tpc-mini, and LlamaIndex's ``MockLLM`` (given a large
window), which answers with the prompt it received, so the prompt the LLM would see is printed and measured.

    python examples/llamaindex_query_engine.py [--data /work/shared/data/qa_dev.jsonl] [--sample 0]
"""

from __future__ import annotations

import argparse
import time

from _example_data import add_data_arguments, answer_found, load_sample, shorten, token_counter
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import LLMMetadata, MockLLM
from llama_index.core.schema import TextNode

from tpc_integrations.embeddings import llama_index_embedding
from tpc_integrations.llama_index import TPCNodePostprocessor


class EchoLLM(MockLLM):
    """MockLLM (answers with the prompt it received) with a 32k-token window, so a long retrieval is sent in one
    call; with MockLLM's 3.9k default LlamaIndex refines over several calls and the echo inflates each one."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=32_768, num_output=256)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--top-k", type=int, default=5, help="nodes the retriever returns")
    parser.add_argument("--target-tokens", type=int, default=200, help="TPC budget over the retrieved nodes")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available)")
    args = parser.parse_args(argv)

    sample = load_sample(args.data, args.sample)
    nodes = [TextNode(text=text, id_=f"{sample.id}/p{i}", metadata={"paragraph": i})
             for i, text in enumerate(sample.documents)]
    index = VectorStoreIndex(nodes, embed_model=llama_index_embedding())
    postprocessor = TPCNodePostprocessor(target_tokens=args.target_tokens, device=args.device)
    plain_engine = index.as_query_engine(llm=EchoLLM(), similarity_top_k=args.top_k)
    tpc_engine = index.as_query_engine(llm=EchoLLM(), similarity_top_k=args.top_k, node_postprocessors=[postprocessor])

    before = plain_engine.query(sample.question)
    started = time.perf_counter()
    after = tpc_engine.query(sample.question)
    seconds = time.perf_counter() - started

    count = token_counter(postprocessor.compressor)
    print(f"sample {sample.id} ({sample.source}): {len(nodes)} nodes in the index")
    print(f"question: {sample.question}")
    print(f"answers: {sample.answers}")
    print(f"retrieved {len(before.source_nodes)} nodes, {len(after.source_nodes)} kept after TPC "
          f"(query with TPC {seconds:.2f} s)")
    # EchoLLM answers with its prompt: the response *is* the prompt the LLM received.
    print(f"LLM prompt before: {count(str(before))} tokens, {len(str(before))} chars; answer in it: "
          f"{answer_found(sample.answers, str(before))}")
    print(f"LLM prompt after:  {count(str(after))} tokens, {len(str(after))} chars; answer in it: "
          f"{answer_found(sample.answers, str(after))}  (budget {args.target_tokens} tokens for the nodes)")
    for item in after.source_nodes:
        meta = item.node.metadata
        print(f"\n[{item.node.node_id}] score={item.score:.3f} tokens {meta['tpc_origin_tokens']} -> "
              f"{meta['tpc_compressed_tokens']}; kept sentences:")
        for sentence in meta["tpc_kept_sentences"]:
            print(f"  - {shorten(sentence)}")


if __name__ == "__main__":
    main()
