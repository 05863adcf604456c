"""Sentence-splitting speed on a ~10k-token prompt: plain text, and the same text as a flattened chat.

Usage:
    python -m benchmarks.splitting_speed [--tokens 10000] [--repeats 30]

The prompt is real qa_dev dev contexts joined until ``--tokens`` tokens (tpc-mini's counter, as
:mod:`benchmarks.engine_overhead` builds it). The chat rows wrap the same text in a ChatML and a Llama 3
conversation (system prompt, the text in the user turn, an assistant reply, a second user turn), so the marker
cuts are exercised. Prints the median milliseconds of ``split_sentences`` with the default splitter over
``--repeats`` runs (after one warm-up), the best CPU milliseconds, the number of spans, and the load average (the
machine is shared: compare rows of one run, not runs). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from benchmarks.harness.timing_inputs import build_prompt
from tpc_core.segmentation import split_sentences


def chat_versions(text: str) -> dict[str, str]:
    """The text as the user turn of a ChatML and of a Llama 3 conversation."""
    return {
        "chatml": (f"<|im_start|>system\nYou answer from the documents.<|im_end|>\n<|im_start|>user\n{text}\n"
                   "Who is named first?<|im_end|>\n<|im_start|>assistant\nThe first name is given above.<|im_end|>\n"
                   "<|im_start|>user\nAnd the second?<|im_end|>\n<|im_start|>assistant\n"),
        "llama3": ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou answer from the documents."
                   f"<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n{text}\nWho is named first?<|eot_id|>"
                   "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    }


def split_ms(text: str, repeats: int) -> tuple[float, float, int]:
    """Median wall and best CPU milliseconds of one default split of ``text``, and its span count.

    CPU time (``time.process_time``) is what the split itself costs; on a shared machine the wall time also holds
    the waits for a core, so compare the CPU column between runs.
    """
    spans = split_sentences(text)
    walls = []
    cpus = []
    for _ in range(repeats):
        started = time.perf_counter()
        cpu_started = time.process_time()
        split_sentences(text)
        cpus.append(time.process_time() - cpu_started)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls) * 1000, min(cpus) * 1000, len(spans)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    from tpc_core import TPCCompressor  # lazy: loads torch

    counter = TPCCompressor.from_pretrained("tpc-mini").token_counter
    text, _ = build_prompt(counter, args.tokens)
    rows = {"plain": text, **chat_versions(text)}
    print(f"prompt: {counter(text)} tokens, {len(text)} characters; load average before: {os.getloadavg()}")
    print("| prompt | wall ms / split (median) | CPU ms / split (best) | spans |")
    print("|---|---|---|---|")
    for name, prompt in rows.items():
        wall, cpu, spans = split_ms(prompt, args.repeats)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {spans} |")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
