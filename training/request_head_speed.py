"""What the structural request finder adds to a prompt-agnostic call: milliseconds per 200 sentences.

Usage:
    python -m training.request_head_speed --head runs/seq/sequence/request_head.safetensors
        --baseline runs/mlp/request_head.safetensors [--sentences 200] [--repeats 50] [--threads 1]

Both heads read the same sentences (real prose, ``examples/data``) and the same embeddings (their values do not
change the time): a per-sentence head (``--baseline``, :mod:`training.request_mlp`; the library no longer runs
one) and the sequence head file given. Each is timed whole (``probabilities``: layout features and the model);
the difference of the medians is what the sequence head adds. Timed alternately in one process, with the load
average printed. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from tpc_core.segmentation import split_sentences

__all__ = ["main", "time_head"]

_TEXT = Path(__file__).resolve().parents[1] / "examples" / "data" / "declaration_of_independence.txt"


def time_head(head, embeddings, sentences: Sequence[str]) -> float:
    """Seconds for one ``probabilities`` call."""
    started = time.perf_counter()
    head.probabilities(embeddings, sentences)
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    import torch  # lazy: loads torch

    from tpc_core.engine.task.request import FEATURE_NAMES  # lazy: loads torch
    from tpc_core.engine.task.request_sequence import SequenceRequestHead  # lazy: loads torch
    from training.request_mlp import load_any_head  # lazy: loads torch

    parser = argparse.ArgumentParser(prog="python -m training.request_head_speed", description=__doc__)
    parser.add_argument("--head", required=True, help="a sequence request head file")
    parser.add_argument("--baseline", required=True, help="a per-sentence request head file (training.request_mlp)")
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="write the figures as JSON here too")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    text = _TEXT.read_text(encoding="utf-8")
    pool = [text[start:end] for start, end in split_sentences(text)]
    sentences = [pool[k % len(pool)] for k in range(args.sentences)]
    sequence = SequenceRequestHead.load(args.head)
    baseline = load_any_head(args.baseline)
    width = sequence.input_width - len(FEATURE_NAMES)
    embeddings = torch.nn.functional.normalize(torch.randn(len(sentences), width), dim=1)
    times: dict[str, list[float]] = {"per_sentence": [], "sequence": []}
    for _ in range(3):  # warm-up
        time_head(sequence, embeddings, sentences), time_head(baseline, embeddings, sentences)
    for _ in range(args.repeats):
        times["sequence"].append(time_head(sequence, embeddings, sentences))
        times["per_sentence"].append(time_head(baseline, embeddings, sentences))
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    result = {"sentences": len(sentences), "threads": args.threads, "repeats": args.repeats,
              "window": sequence.window, "parameters": sum(p.numel() for p in sequence.model.parameters()),
              "per_sentence_ms": round(medians["per_sentence"], 3), "sequence_ms": round(medians["sequence"], 3),
              "added_ms": round(medians["sequence"] - medians["per_sentence"], 3),
              "added_ms_per_200_sentences": round((medians["sequence"] - medians["per_sentence"])
                                                  * 200 / len(sentences), 3),
              "load_average": os.getloadavg()}
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
