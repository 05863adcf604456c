"""Prompt-agnostic compression: no question is given to the compressor, TPC's task descriptor (CTD) reads the
prompt, writes what it asks for, and sentences are kept by relevance to that description.

This is what TPC adds over query-based compressors: it compresses a whole prompt (context and instruction
together) when there is no separate query — a long system prompt, a cached context, an agent's scratchpad.
With LangChain, an empty query selects this mode; with LlamaIndex, ``query_bundle=None``.

    python examples/prompt_agnostic.py [--data /work/shared/data/qa_dev.jsonl] [--sample 0] [--framework llamaindex]
"""

from __future__ import annotations

import argparse
import time

from _example_data import add_data_arguments, answer_found, load_sample, shorten, token_counter

QUESTION_PATTERN = r"^Question:"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--framework", choices=("langchain", "llamaindex"), default="langchain")
    parser.add_argument("--target-tokens", type=int, default=250, help="TPC budget over the whole prompt")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available)")
    args = parser.parse_args(argv)

    sample = load_sample(args.data, args.sample)
    # The prompt as a user would send it: the context, then the instruction. The compressor is not told which
    # part is the question; force_keep_patterns only guarantees the instruction line itself survives.
    parts = [*sample.documents, f"Question: {sample.question}"]
    options = {"target_tokens": args.target_tokens, "device": args.device, "force_keep_patterns": (QUESTION_PATTERN,)}
    started = time.perf_counter()
    if args.framework == "langchain":
        from langchain_core.documents import Document

        from tpc_integrations.langchain import TPCDocumentCompressor

        compressor = TPCDocumentCompressor(**options)
        documents = [Document(page_content=text, id=f"part-{i}") for i, text in enumerate(parts)]
        kept = [(d.id, d.page_content, d.metadata) for d in compressor.compress_documents(documents, query="")]
        engine = compressor.compressor
    else:
        from llama_index.core.schema import NodeWithScore, TextNode

        from tpc_integrations.llama_index import TPCNodePostprocessor

        postprocessor = TPCNodePostprocessor(**options)
        nodes = [NodeWithScore(node=TextNode(text=text, id_=f"part-{i}")) for i, text in enumerate(parts)]
        kept = [(n.node.node_id, n.node.get_content(), n.node.metadata)
                for n in postprocessor.postprocess_nodes(nodes, query_bundle=None)]
        engine = postprocessor.compressor
    seconds = time.perf_counter() - started

    count = token_counter(engine)
    before = "\n\n".join(parts)
    after = "\n\n".join(text for _, text, _ in kept)
    print(f"sample {sample.id} ({sample.source}), {args.framework}, no query given to the compressor")
    print(f"task description ({kept[0][2].get('tpc_task_source')}): {kept[0][2]['tpc_task_description']!r}"
          if kept else "nothing kept")
    print(f"prompt before: {count(before)} tokens, {len(before)} chars, {len(parts)} parts")
    print(f"prompt after:  {count(after)} tokens, {len(after)} chars, {len(kept)} parts "
          f"(budget {args.target_tokens}; {seconds:.1f} s including model loading)")
    print(f"reference answer {sample.answers} still in the prompt: {answer_found(sample.answers, after)}")
    for identifier, _, meta in kept:
        print(f"\n[{identifier}] tokens {meta['tpc_origin_tokens']} -> {meta['tpc_compressed_tokens']}; "
              "kept sentences:")
        for sentence in meta["tpc_kept_sentences"]:
            print(f"  - {shorten(sentence)}")


if __name__ == "__main__":
    main()
