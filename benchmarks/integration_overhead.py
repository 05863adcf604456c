"""Cost of the framework adapters: overhead over a direct ``tpc_core`` call, and query-engine latency with TPC.

1. Adapter overhead: on each dev sample (its paragraphs as documents, its question), time
   ``TPCCompressor.compress`` directly, ``TPCDocumentCompressor.compress_documents`` and
   ``TPCNodePostprocessor.postprocess_nodes`` on the same documents with the same budget, interleaved; report
   medians, the median paired difference (adapter - direct, noisy on a shared machine) and the adapters' own
   work (adapter time minus the time spent inside the engine call it makes).
2. End-to-end: a ``VectorStoreIndex`` per sample (offline MiniLM embedding, MockLLM), ``query()`` latency
   with and without the postprocessor (index building excluded).

    python -m benchmarks.integration_overhead [--data qa_dev.jsonl (default: the data root's)] [--samples 12]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from data_access.loaders import default_qa_dev_path

DEFAULT_DATA = default_qa_dev_path()


def load_dev_samples(path: Path, count: int, max_tokens: int) -> list[dict[str, Any]]:
    """``count`` dev samples of at most ``max_tokens`` (approx.) spread evenly over the file, paragraphs split out."""
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    dev = [row for row in rows if row.get("split") == "dev"
           and row.get("meta", {}).get("approx_tokens", 0) <= max_tokens]
    stride = max(len(dev) // count, 1)
    picked = dev[::stride][:count]
    for row in picked:
        row["documents"] = [p.strip() for p in row["context"].split("\n\n") if p.strip()]
    return picked


def timed(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def adapter_overhead(compressor: Any, samples: list[dict[str, Any]], target_tokens: int,
                     repeats: int) -> dict[str, Any]:
    from langchain_core.documents import Document  # lazy: optional extra (langchain)
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # lazy: optional extra (llamaindex)

    from tpc_integrations.langchain import TPCDocumentCompressor  # lazy: optional extras (langchain / llamaindex)
    from tpc_integrations.llama_index import TPCNodePostprocessor  # lazy: optional extras (langchain / llamaindex)

    langchain = TPCDocumentCompressor(compressor=compressor, target_tokens=target_tokens)
    llama = TPCNodePostprocessor(compressor=compressor, target_tokens=target_tokens)
    direct_compress = compressor.compress
    engine_seconds: list[float] = []

    def timed_compress(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return direct_compress(*args, **kwargs)
        finally:
            engine_seconds.append(time.perf_counter() - started)

    # The adapters call the real engine through this timer, so their own work (outer time - engine time) is
    # measured exactly, free of the engine's run-to-run noise on a shared machine.
    compressor.compress = timed_compress
    per_sample: dict[str, list[float]] = {"direct": [], "langchain": [], "llama_index": []}
    own: dict[str, list[float]] = {"langchain": [], "llama_index": []}
    try:
        for sample in samples:
            texts = sample["documents"]
            question = sample["question"]
            documents = [Document(page_content=t, id=str(i), metadata={"i": i}) for i, t in enumerate(texts)]
            nodes = [NodeWithScore(node=TextNode(text=t, id_=str(i), metadata={"i": i}), score=1.0)
                     for i, t in enumerate(texts)]
            runs = {
                "direct": lambda: direct_compress(texts, question=question, target_tokens=target_tokens),
                "langchain": lambda: langchain.compress_documents(documents, question),
                "llama_index": lambda: llama.postprocess_nodes(nodes, QueryBundle(question)),
            }
            for run in runs.values():  # warm-up (first-call allocations, tokenizer caches)
                run()
            times: dict[str, list[float]] = {name: [] for name in runs}
            for _ in range(repeats):  # interleaved, so load changes hit every method alike
                for name, run in runs.items():
                    engine_seconds.clear()
                    times[name].append(timed(run))
                    if name in own:
                        own[name].append(times[name][-1] - sum(engine_seconds))
            for name in runs:
                per_sample[name].append(statistics.median(times[name]))
    finally:
        del compressor.compress
    direct = per_sample["direct"]
    report: dict[str, Any] = {"samples": len(samples), "repeats": repeats, "target_tokens": target_tokens,
                              "direct_ms_median": 1000 * statistics.median(direct)}
    for name in ("langchain", "llama_index"):
        differences = [a - d for a, d in zip(per_sample[name], direct)]
        report[f"{name}_ms_median"] = 1000 * statistics.median(per_sample[name])
        report[f"{name}_minus_direct_ms_median"] = 1000 * statistics.median(differences)
        report[f"{name}_own_work_ms_median"] = 1000 * statistics.median(own[name])
        report[f"{name}_own_work_ms_max"] = 1000 * max(own[name])
        report[f"{name}_own_work_pct_of_direct"] = 100 * statistics.median(own[name]) / statistics.median(direct)
    return report


def echo_llm() -> Any:
    """LlamaIndex's MockLLM (answers with its prompt) with a 32k-token window: with the default 3.9k window a long
    retrieval is refined over several calls and the echoed answer inflates each refine prompt."""
    from llama_index.core.llms import LLMMetadata, MockLLM  # lazy: optional extra (llamaindex)

    class EchoLLM(MockLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(context_window=32_768, num_output=256)

    return EchoLLM()


def query_engine_latency(compressor: Any, samples: list[dict[str, Any]], target_tokens: int, top_k: int,
                         repeats: int) -> dict[str, Any]:
    from llama_index.core import VectorStoreIndex  # lazy: optional extra (llamaindex)
    from llama_index.core.schema import TextNode  # lazy: optional extra (llamaindex)

    from tpc_integrations.embeddings import llama_index_embedding  # lazy: optional extras (langchain / llamaindex)
    from tpc_integrations.llama_index import TPCNodePostprocessor  # lazy: optional extras (langchain / llamaindex)

    embedding = llama_index_embedding()
    postprocessor = TPCNodePostprocessor(compressor=compressor, target_tokens=target_tokens)
    without = []
    with_tpc = []
    prompt_chars = []
    for sample in samples:
        nodes = [TextNode(text=t, id_=str(i)) for i, t in enumerate(sample["documents"])]
        index = VectorStoreIndex(nodes, embed_model=embedding)
        plain = index.as_query_engine(llm=echo_llm(), similarity_top_k=top_k)
        compressed = index.as_query_engine(llm=echo_llm(), similarity_top_k=top_k,
                                            node_postprocessors=[postprocessor])
        question = sample["question"]
        plain.query(question), compressed.query(question)  # warm-up
        times_plain = []
        times_tpc = []
        for _ in range(repeats):
            times_plain.append(timed(lambda: plain.query(question)))
            times_tpc.append(timed(lambda: compressed.query(question)))
        without.append(statistics.median(times_plain))
        with_tpc.append(statistics.median(times_tpc))
        prompt_chars.append((len(str(plain.query(question))), len(str(compressed.query(question)))))
    return {"samples": len(samples), "top_k": top_k, "target_tokens": target_tokens,
            "without_tpc_ms_median": 1000 * statistics.median(without),
            "with_tpc_ms_median": 1000 * statistics.median(with_tpc),
            "added_ms_median": 1000 * statistics.median(w - o for w, o in zip(with_tpc, without)),
            "prompt_chars_median_without": statistics.median(p for p, _ in prompt_chars),
            "prompt_chars_median_with": statistics.median(c for _, c in prompt_chars)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--samples", type=int, default=12, help="dev samples, spread over the file")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per sample and method (median kept)")
    parser.add_argument("--target-tokens", type=int, default=200)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=6000, help="skip longer samples (approximate tokens)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    from tpc_core import TPCCompressor  # lazy: loads torch

    compressor = TPCCompressor.from_pretrained("tpc-mini", device=args.device)  # every adapter is given this one
    samples = load_dev_samples(args.data, args.samples, args.max_tokens)
    figures = {
        "machine": {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg(),
                    "device": str(compressor.device)},
        "adapter_overhead": adapter_overhead(compressor, samples, args.target_tokens, args.repeats),
        "query_engine": query_engine_latency(compressor, samples, args.target_tokens, args.top_k, args.repeats),
    }
    figures["machine"]["load_average_at_end"] = os.getloadavg()
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
