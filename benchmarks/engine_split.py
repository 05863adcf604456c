"""The engine's own time as the call's wall time minus the encoder's forward passes, with nothing else wrapped.

Usage (through :mod:`benchmarks.engine_overhead`, which owns the inputs):
    python -m benchmarks.engine_overhead --split [--tokens 10000] [--threads 2] [--out DIR]

Definitions (one process, the shipped tpc-mini):

* **Engine's own time**: a ``compress`` call's wall time less the time inside the CSE encoder's forward passes,
  timed by forward pre/post hooks on the encoder module(s) and nothing else (no part of ``tpc_core`` is wrapped:
  ``engine_overhead``'s part wrappers cost time of their own, which its rows count as the engine's). Median of
  ``--split-repeats`` (5) calls after **one** warm-up, ``--threads`` torch threads (default 2), ~``--tokens``
  MiniLM tokens of real qa_dev dev contexts (papers, meetings, Wikipedia), rate 0.2. Prompt-aware: the question
  given. Agnostic: the same text inside LongBench's multi-document QA template, the question written in it.
  The encoder modules hooked are the backbone (``encoder.model``) and, where a tree has one, the encoder's slim
  forward (``encoder.slim``): whichever runs the layers, never both counted (a depth counter).
* **Warm cached call**: the cache suite's 20 chunks and question, ``cache="memory"`` filled by the warm-up, **one**
  torch thread, the whole call's wall time (the question's forward pass included); the encoder's share beside it.
* **Short documents**: ``--corpus-docs`` (512) NQ Wikipedia passages of 60-300 MiniLM tokens in one
  ``compress_batch`` with a fixed question at rate 0.5, against one long prompt (the prompt-aware text, its
  question, rate 0.5), tokens per second, ``--threads`` threads; the index-time path (no question,
  ``describe_bare=False``: no CTD generation) beside it. Each the median of ``--corpus-repeats`` runs after one
  warm-up on the first 32 passages.

Writes ``split.md`` and ``split.json`` to ``--out`` when given. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.timing_inputs import load_passages

CORPUS_TOKENS = (60, 300)


class EncoderClock:
    """Seconds inside the encoder's forward passes, from forward pre/post hooks (nested calls counted once).

    Args:
        compressor: A loaded ``TPCCompressor``.
        synchronize: Called at both edges of a pass (a CUDA device's ``synchronize``: the pass's device time, not
            its launches); ``None`` on the CPU.
    """

    def __init__(self, compressor: Any, synchronize: Any = None) -> None:
        encoder = compressor.encoder
        self._synchronize = synchronize or (lambda: None)  # on CUDA: wait for the device at each edge of a pass
        modules = [encoder.model] + [module for module in (getattr(encoder, "slim", None),) if module is not None]
        self.seconds = 0.0
        self._depth = 0
        self._started = 0.0
        self._handles = []
        for module in modules:
            self._handles.append(module.register_forward_pre_hook(lambda *_: self._enter()))
            self._handles.append(module.register_forward_hook(lambda *_: self._leave()))

    def _enter(self) -> None:
        if self._depth == 0:
            self._synchronize()
            self._started = time.perf_counter()
        self._depth += 1

    def _leave(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            self._synchronize()
            self.seconds += time.perf_counter() - self._started

    def call(self, function: Any) -> tuple[float, float]:
        """Wall seconds of ``function()`` and the encoder's seconds inside it."""
        self.seconds = 0.0
        self._synchronize()
        started = time.perf_counter()
        function()
        self._synchronize()
        return time.perf_counter() - started, self.seconds

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()


def timed(clock: EncoderClock, function: Any, repeats: int) -> dict[str, float]:
    """Median wall, encoder and own milliseconds of ``repeats`` calls after one warm-up."""
    function()
    walls = []
    encoders = []
    for _ in range(repeats):
        wall, encoder = clock.call(function)
        walls.append(wall)
        encoders.append(encoder)
    own = [wall - encoder for wall, encoder in zip(walls, encoders)]
    return {"call_ms": 1000 * statistics.median(walls), "encoder_ms": 1000 * statistics.median(encoders),
            "own_ms": 1000 * statistics.median(own), "own_ms_all": [round(1000 * value, 2) for value in own]}


def short_passages(counter: Any, count: int) -> list[str]:
    """``count`` NQ Wikipedia passages of 60-300 MiniLM tokens."""
    low, high = CORPUS_TOKENS
    texts: list[str] = []
    for row in load_passages(count * 3):
        if low <= counter(row["text"]) <= high:
            texts.append(row["text"])
            if len(texts) == count:
                break
    return texts


def throughput(function: Any, tokens: int, repeats: int) -> dict[str, float]:
    """Tokens per second of ``function()`` (median seconds of ``repeats`` runs)."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        seconds.append(time.perf_counter() - started)
    median = statistics.median(seconds)
    return {"tokens": tokens, "seconds": median, "tokens_per_s": tokens / median,
            "seconds_all": [round(value, 3) for value in seconds]}


def split_report(args: argparse.Namespace, inputs: dict[str, Any], modes: tuple[str, str], warm: str) -> None:
    """Measure and print the split (see the module); write it to ``args.out`` when given.

    Args:
        args: ``engine_overhead``'s arguments (``model``, ``tokens``, ``threads``, ``out``).
        inputs: ``engine_overhead.make_inputs``' inputs, by mode: ``[text, question]``.
        modes: The prompt-aware and agnostic modes' names.
        warm: The warm cached call's name (its input: ``[chunks, question]``).
    """
    import torch  # lazy: loads torch

    from tpc_core import TPCCompressor  # lazy: loads torch
    from tpc_core.cache import resolve_cache  # lazy: loads torch

    threads = args.threads or 2
    repeats = args.split_repeats
    load_before = os.getloadavg()
    torch.set_num_threads(threads)
    compressor = TPCCompressor.from_pretrained(args.model)
    counter = compressor.token_counter
    clock = EncoderClock(compressor)
    rows: dict[str, Any] = {}
    try:
        for mode in modes:
            text, question = inputs[mode]
            rows[mode] = timed(clock, lambda: compressor.compress(text, question=question, rate=0.2), repeats)
            rows[mode]["tokens"] = counter(text)
        torch.set_num_threads(1)
        chunks, question = inputs[warm]
        cache = resolve_cache("memory")
        rows[warm + ", one thread"] = timed(
            clock, lambda: compressor.compress(chunks, question=question, rate=0.2, cache=cache), repeats)
        rows[warm + ", one thread"]["tokens"] = sum(counter(chunk) for chunk in chunks)
        torch.set_num_threads(threads)
    finally:
        clock.close()
    passages = short_passages(counter, args.corpus_docs)
    corpus_tokens = sum(counter(text) for text in passages)
    long_text, long_question = inputs[modes[0]]
    corpus_repeats = args.corpus_repeats
    compressor.compress(long_text, question=long_question, rate=0.5)
    compressor.compress_batch(passages[:32], question=long_question, rate=0.5)
    corpus = {
        "one long prompt, question": throughput(
            lambda: compressor.compress(long_text, question=long_question, rate=0.5), counter(long_text),
            max(corpus_repeats, 3)),
        f"{len(passages)} short passages, one compress_batch, question": throughput(
            lambda: compressor.compress_batch(passages, question=long_question, rate=0.5), corpus_tokens,
            corpus_repeats),
        f"{len(passages)} short passages, index time (no question, describe_bare=False)": throughput(
            lambda: compressor.compress_batch(passages, rate=0.5, describe_bare=False), corpus_tokens,
            corpus_repeats),
    }
    load_after = os.getloadavg()
    lines = [f"engine split: {args.tokens} target tokens, {threads} torch threads (warm call: 1), median of {repeats} "
             f"calls after one warm-up; load average (1, 5, 15 min) {_load(load_before)} before, {_load(load_after)} "
             "after", "",
             "| row | MiniLM tokens | call ms | encoder forwards ms | **engine's own ms** | own ms, each |",
             "|---|---|---|---|---|---|"]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['tokens']} | {row['call_ms']:.1f} | {row['encoder_ms']:.1f} | "
                     f"**{row['own_ms']:.1f}** | {', '.join(f'{value:.1f}' for value in row['own_ms_all'])} |")
    long_rate = corpus["one long prompt, question"]["tokens_per_s"]
    lines += ["", "| corpus row | MiniLM tokens | s (median) | tokens/s | × one long prompt |", "|---|---|---|---|---|"]
    for name, row in corpus.items():
        lines.append(f"| {name} | {row['tokens']} | {row['seconds']:.2f} | {row['tokens_per_s']:.0f} | "
                     f"{row['tokens_per_s'] / long_rate:.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "split.md").write_text(text + "\n", encoding="utf-8")
        (out / "split.json").write_text(json.dumps({"rows": rows, "corpus": corpus, "threads": threads,
                                                    "load": [load_before, load_after]}, indent=1), encoding="utf-8")


def _load(load: Any) -> str:
    return "/".join(f"{value:.2f}" for value in load)
