"""What ``deadline_ms`` costs and how late a call past its deadline returns.

* **Overhead**: a warm query-time call (every chunk found in the sentence cache, the short calls a deadline is for)
  through ``TPCDocumentCompressor`` with no deadline, then with a deadline it never reaches (the call runs in a
  worker thread and is waited for). Calls alternate between the two so load changes hit both alike.
* **Accuracy**: cold calls (no cache, about a second of model work each) under deadlines shorter than the call:
  how long after its deadline each call returned (its input, uncompressed).

    python -m benchmarks.deadline --out benchmarks/results/deadline

Wall-clock figures on this machine, with ``os.getloadavg()`` before and after; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings
from pathlib import Path

from data_access.loaders import load_qa_dev


def _documents(count: int):  # LangChain documents
    from langchain_core.documents import Document  # lazy: optional extra (langchain)

    chunks: list[str] = []
    for sample in load_qa_dev(split="train"):
        chunks.extend(p for p in sample.context.split("\n\n") if len(p.split()) > 40)
        if len(chunks) >= count:
            break
    return [Document(page_content=text, id=str(k)) for k, text in enumerate(chunks[:count])]


def overhead(compressor, documents, question: str, calls: int) -> dict:
    """Milliseconds of warm calls without and with a deadline that is never reached, alternated."""
    from tpc_integrations.langchain import TPCDocumentCompressor  # lazy: optional extras (langchain / llamaindex)

    plain = TPCDocumentCompressor(compressor=compressor, rate=0.2, cache="memory")
    guarded = TPCDocumentCompressor(compressor=compressor, rate=0.2, cache="memory", deadline_ms=60_000)
    plain.compress_documents(documents, question)  # warms the cache for both (one memory cache per compressor)
    times: dict[str, list[float]] = {"none": [], "deadline": []}
    for _ in range(calls):
        for name, adapter in (("none", plain), ("deadline", guarded)):
            started = time.perf_counter()
            adapter.compress_documents(documents, question)
            times[name].append((time.perf_counter() - started) * 1000)
    medians = {name: statistics.median(values) for name, values in times.items()}
    return {"calls_each": calls, "median_ms": medians, "mean_ms": {n: statistics.fmean(v) for n, v in times.items()},
            "median_ratio_deadline_over_none": medians["deadline"] / medians["none"],
            "median_added_ms": medians["deadline"] - medians["none"]}


def lateness(compressor, documents, question: str, deadlines_ms: list[float], calls: int) -> dict:
    """How many milliseconds after its deadline each cold call returned."""
    from tpc_integrations.langchain import TPCDocumentCompressor  # lazy: optional extras (langchain / llamaindex)

    rows = {}
    for deadline in deadlines_ms:
        adapter = TPCDocumentCompressor(compressor=compressor, rate=0.2, deadline_ms=deadline)
        late = []
        for _ in range(calls):
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                adapter.compress_documents(documents, question)
            late.append((time.perf_counter() - started) * 1000 - deadline)
            time.sleep(1.5)  # let the abandoned work finish, so the next call starts on a quiet engine
        rows[str(deadline)] = {"late_ms_median": statistics.median(late), "late_ms_max": max(late),
                               "late_ms_min": min(late), "calls": calls}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--calls", type=int, default=30, help="warm calls per arm (overhead)")
    parser.add_argument("--late-calls", type=int, default=5, help="cold calls per deadline (accuracy)")
    parser.add_argument("--deadlines", type=float, nargs="+", default=[50.0, 200.0, 500.0])
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads for the run (0: leave torch's default). On a crowded CPU a call "
                             "on the main thread with torch's default threads was ~10x slower than the same call on "
                             "a worker thread, which swamps the deadline's own cost: compare at one thread")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    import torch  # lazy: loads torch

    from tpc_core import TPCCompressor  # lazy: loads torch

    if args.threads:
        torch.set_num_threads(args.threads)

    load_before = os.getloadavg()
    compressor = TPCCompressor.from_pretrained("tpc-mini", device="cpu")
    documents = _documents(args.chunks)
    question = load_qa_dev(split="train")[0].question
    record = {"chunks": len(documents), "torch_threads": torch.get_num_threads(), "load_average_before": load_before,
              "overhead": overhead(compressor, documents, question, args.calls),
              "lateness": lateness(compressor, documents, question, args.deadlines, args.late_calls),
              "load_average_after": os.getloadavg(), "command": "python -m benchmarks.deadline "
              + " ".join(f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                         for k, v in vars(args).items() if k != "out" and v is not None)}
    text = json.dumps(record, indent=2, default=list)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "deadline.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
