"""An agent's first model call over a long history: what TPCContextMiddleware adds, cold and warm, beside the
encoder's own time for the same new tokens.

``python -m benchmarks.agents_latency`` (one torch thread; ``--tokens 2000,10000,30000``).

For each size, a view of a system prompt, a request (a held-out train row's question) and tool results of about
2,000 MiniLM tokens each (held-out train rows' paragraphs; ``search`` calls) until the history counts the size. The
middleware (``target_tokens`` a quarter of the history, defaults otherwise, a sentence cache of its own) is called
through its own ``wrap_model_call``, the model not called:

* cold: a fresh middleware and an empty sentence cache, every tool result new (median of ``--repeats``);
* warm: the same call again, every result seen before (median of ``--repeats``);
* floor: plain forward passes of the MiniLM backbone over the tool results' text (the new tokens;
  :class:`evaluation.methods.forward_floor.MiniLMForward`, median of ``--repeats`` after one warm-up).

One warm-up call on other text first (the model's one-time work). Reported: cold ms, cold / floor, warm ms, the
engine calls of the cold call (one batched call reads every new result) and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.agents import SYSTEM, capture
from benchmarks.conversations import split_documents
from evaluation.budget import minilm_token_counter
from evaluation.loaders import recall_samples

__all__ = ["history", "main", "measure"]

RESULT_TOKENS = 2000


def history(documents: Sequence[str], question: str, tokens: int, counter: Any) -> tuple[list[Any], list[str]]:
    """A view of about ``tokens`` tokens (system prompt, request, tool calls and results of ``RESULT_TOKENS`` each)
    and its tool results' texts."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # lazy: optional extra

    messages: list[Any] = [SystemMessage(SYSTEM), HumanMessage(question)]
    total = counter(SYSTEM) + counter(question)
    results: list[str] = []
    pieces: list[str] = []
    size = 0
    for document in documents:
        if total + size >= tokens:
            break
        pieces.append(document)
        size += counter(document)
        if size >= min(RESULT_TOKENS, tokens - total) or total + size >= tokens:
            k = len(results)
            text = "\n\n".join(pieces)
            call = {"name": "search", "args": {"query": question, "page": k + 1}, "id": f"call_{k}"}
            messages += [AIMessage("", tool_calls=[call]), ToolMessage(text, tool_call_id=f"call_{k}", name="search")]
            results.append(text)
            total += counter(text)
            pieces = []
            size = 0
    return messages, results


def measure(compressor: Any, view: list[Any], results: list[str], budget: int, repeats: int) -> dict[str, Any]:
    """Cold and warm ms of the middleware's call on ``view``, its engine calls, and the encoder's floor."""
    from evaluation.methods.forward_floor import MiniLMForward  # lazy: loads torch
    from tpc_core.cache import MemoryCache  # lazy: loads torch
    from tpc_integrations.langchain_agents import TPCContextMiddleware  # lazy: optional extra

    counter = minilm_token_counter()
    engine = compressor.engine
    calls = []
    original = engine.compress

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(len(args[0]))
        return original(*args, **kwargs)

    cold: list[float] = []
    warm: list[float] = []
    engine.compress = counted  # the instance's attribute: counts the engine calls of the cold call
    try:
        for _ in range(repeats):
            middleware = TPCContextMiddleware(compressor=compressor, target_tokens=budget, token_counter=counter,
                                              cache=MemoryCache())
            calls.clear()
            started = time.perf_counter()
            capture(middleware, view)
            cold.append(time.perf_counter() - started)
            engine_calls = list(calls)
            for _ in range(repeats):
                started = time.perf_counter()
                capture(middleware, view)
                warm.append(time.perf_counter() - started)
    finally:
        del engine.compress
    floor = MiniLMForward(compressor.device, compressor.dtype).median_seconds("\n\n".join(results), repeats)
    return {"tool_results": len(results), "new_tokens": sum(counter(text) for text in results),
            "cold_ms": 1000 * statistics.median(cold), "warm_ms": 1000 * statistics.median(warm),
            "floor_ms": 1000 * floor, "cold_over_floor": statistics.median(cold) / floor,
            "engine_calls": len(engine_calls), "prompts_per_call": engine_calls}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", default="2000,10000,30000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data", default=None, help="qa_dev.jsonl (default: ../shared/data)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/agents"))
    args = parser.parse_args(argv)
    import torch  # lazy: loads torch

    from tpc_core import TPCCompressor  # lazy: loads torch

    torch.set_num_threads(1)
    counter = minilm_token_counter()
    samples = recall_samples(args.data, dev=False)
    documents = [d for sample in samples for d in split_documents(sample.context) if len(d) > 200]
    compressor = TPCCompressor.from_pretrained("tpc-mini", device="cpu")
    warmup, results = history(documents[::-1], samples[-1].question, 1000, counter)  # other text: the cache stays cold
    measure(compressor, warmup, results, 250, 1)  # the model's one-time work (first pass, conversions) left out
    load_before = os.getloadavg()
    rows = []
    for tokens in (int(value) for value in args.tokens.split(",")):
        view, results = history(documents, samples[0].question, tokens, counter)
        size = sum(counter(m.content) for m in view)
        row = {"history_tokens": size, **measure(compressor, view, results, size // 4, args.repeats)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    load_after = os.getloadavg()
    lines = [f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; one torch thread; medians of "
             f"{args.repeats}\n", "| history tokens | tool results | cold ms | encoder floor ms (new tokens) "
             "| cold / floor | warm ms | engine calls (cold) |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {r['history_tokens']} | {r['tool_results']} | {r['cold_ms']:.0f} | {r['floor_ms']:.0f} | "
              f"{r['cold_over_floor']:.2f} | {r['warm_ms']:.1f} | {r['engine_calls']} |" for r in rows]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latency.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (args.out / "latency.json").write_text(json.dumps({"load_average_before": load_before,
                                                       "load_average_after": load_after, "rows": rows}, indent=1),
                                           encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
