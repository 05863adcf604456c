"""Speed and memory per method: seconds per prompt by prompt length, tokens/s, peak RSS, GPU memory.

Prompts of 1k/4k/16k/64k MiniLM tokens are built by concatenating real dev contexts; prompt-agnostic methods
get them inside LongBench's multi-document QA template with the question written in it, as users send them. Each method
runs in a fresh subprocess (``python -m benchmarks.timing --worker ...``) so its peak RSS is its own: the process loads
the method, warms up once on the shortest prompt, then times ``repeats`` calls per length and reports the median.
Embedding caches are cleared at every call, so each compression pays for its own embeddings.

Besides the compressors, the row ``minilm-forward-floor`` (:mod:`evaluation.methods.forward_floor`, timing
only) runs plain MiniLM forward passes over each prompt's tokens (510-token windows, batch 8): what reading every token
once with that backbone costs, the reference TPC's prompt-aware time is held to.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from data_access.loaders import Sample
from evaluation.budget import MiniLMTokenCounter, budget_for, minilm_token_counter
from evaluation.methods.base import AWARE, Method
from evaluation.methods.forward_floor import FLOOR_METHOD, MiniLMForwardFloor
from evaluation.methods.registry import MethodSpec, build_method
from evaluation.methods.tpc import DEFAULT_TPC_MODEL
from synthesis.templates import QA_DEV_TEMPLATES, fill_template

__all__ = ["DEFAULT_LENGTHS", "build_timed_method", "build_length_prompts", "run_speed_suite"]

logger = logging.getLogger(__name__)

DEFAULT_LENGTHS: tuple[int, ...] = (1024, 4096, 16384, 65536)


def build_length_prompts(
    samples: Sequence[Sample], lengths: Sequence[int], counter: MiniLMTokenCounter
) -> dict[int, dict[str, str]]:
    """``{length: {"text", "question"}}``: dev contexts joined until ``length`` tokens, cut at a word boundary."""
    ordered = sorted(samples, key=lambda sample: sample.id)
    prompts: dict[int, dict[str, str]] = {}
    for length in lengths:
        parts: list[str] = []
        total = 0
        for sample in ordered:
            parts.append(sample.context.strip())
            total += counter(sample.context)
            if total >= length:
                break
        text = "\n\n".join(parts)
        encoding = counter.tokenizer.backend_tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) > length:
            cut = encoding.offsets[length][0]
            text = text[:cut].rstrip()
        prompts[length] = {"text": text, "question": ordered[0].question}
    return prompts


def build_timed_method(name: str, counter: MiniLMTokenCounter, *, device: str | None = None,
                       tpc_model: str = DEFAULT_TPC_MODEL,
                       embedder_factory: Callable[[], Any] | None = None) -> Method:  # fmt: skip
    """A speed-suite row: the timing-only ``minilm-forward-floor``, or any benchmark method."""
    if name == FLOOR_METHOD:
        return MiniLMForwardFloor(counter, device=device)
    return build_method(name, counter, device=device, tpc_model=tpc_model, embedder_factory=embedder_factory)


def _worker(method_name: str, prompts_path: Path, repeats: Sequence[int], rate: float, device: str | None,
            tpc_model: str = DEFAULT_TPC_MODEL, label: str | None = None) -> dict:  # fmt: skip
    import psutil  # lazy: optional (benchmarks extra)
    import torch  # lazy: loads torch

    from evaluation.methods.embedder import shared_embedder  # lazy: loads torch

    prompts = {int(k): v for k, v in json.loads(prompts_path.read_text()).items()}
    counter = minilm_token_counter()
    method = build_timed_method(method_name, counter, device=device, tpc_model=tpc_model,
                                embedder_factory=lambda: shared_embedder(False))  # fmt: skip
    started = time.perf_counter()
    method.warm_up()

    aware = AWARE in method.settings

    def run(length: int) -> float:
        text = prompts[length]["text"]
        question = prompts[length]["question"]
        if not aware:  # prompt-agnostic input as users send it: the question written inside the prompt
            text = fill_template(QA_DEV_TEMPLATES["multi_doc_qa"], text, question)
        budget = budget_for(counter(text), rate=rate)
        begin = time.perf_counter()
        method.compress(text, question if aware else None, budget, sample_id=f"speed-{length}")
        return time.perf_counter() - begin

    lengths = sorted(prompts)
    run(lengths[0])  # warm-up: lazy imports, model load, first-call allocations
    load_seconds = time.perf_counter() - started
    rss_loaded = psutil.Process().memory_info().rss / 2**20
    rows = []
    for length, count in zip(lengths, repeats, strict=True):
        times = [run(length) for _ in range(count)]
        median = statistics.median(times)
        tokens = counter(prompts[length]["text"])
        rows.append({"length": length, "tokens": tokens, "repeats": count, "seconds_median": median,
                     "seconds_all": times, "tokens_per_s": tokens / median if median > 0 else None})  # fmt: skip
    result: dict[str, Any] = {
        "method": label or method_name, "rows": rows, "load_and_warmup_s": load_seconds,
        "rss_after_load_mb": rss_loaded, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "torch_threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        result["gpu_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return result


def run_speed_suite(
    samples: Sequence[Sample], methods: Sequence[str | MethodSpec], out_dir: Path, *,
    lengths: Sequence[int] = DEFAULT_LENGTHS, repeats: Sequence[int] | None = None, rate: float = 0.2,
    device: str | None = None, timeout_s: float = 1800,
    skipped: dict[str, str] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Time every method in its own subprocess; failures become ``{"method", "error"}`` entries.

    ``methods``: method names, or :class:`~evaluation.methods.registry.MethodSpec` rows (several TPC
    checkpoints).
    """
    counter = minilm_token_counter()
    repeats = list(repeats or [3 if length <= 16384 else 1 for length in lengths])
    out_dir.mkdir(parents=True, exist_ok=True)
    scratch = tempfile.TemporaryDirectory(prefix="tpc-speed-")
    prompts_path = Path(scratch.name) / "speed_prompts.json"  # ~0.5 MB of text: not a result to keep
    prompts_path.write_text(json.dumps(build_length_prompts(samples, lengths, counter)))
    try:
        specs = [spec if isinstance(spec, MethodSpec) else MethodSpec(spec, spec) for spec in methods]
        return _time_methods(specs, prompts_path, counter, repeats, rate, device, timeout_s, skipped)
    finally:
        scratch.cleanup()


def _time_methods(methods: Sequence[MethodSpec], prompts_path: Path, counter: MiniLMTokenCounter,
                  repeats: Sequence[int], rate: float, device: str | None, timeout_s: float,
                  skipped: dict[str, str] | None) -> list[dict]:
    results = []
    for spec in methods:
        name = spec.label
        if skipped and name in skipped:
            results.append({"method": name, "skipped": skipped[name]})
            continue
        reason = build_timed_method(spec.name, counter, tpc_model=spec.tpc_model).unavailable_reason()
        if reason is not None:
            results.append({"method": name, "skipped": reason})
            continue
        command = [sys.executable, "-m", "benchmarks.timing", "--worker", spec.name, "--label", name,
                   "--tpc-model", spec.tpc_model, "--prompts", str(prompts_path),
                   "--repeats", ",".join(map(str, repeats)), "--rate", str(rate)]
        command += ["--device", device] if device else []
        logger.info("timing %s ...", name)
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False,
                                  cwd=Path(__file__).resolve().parents[1], env=os.environ.copy())  # fmt: skip
        except subprocess.TimeoutExpired:
            results.append({"method": name, "error": f"timed out after {timeout_s:.0f}s"})
            continue
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            results.append({"method": name, "error": (done.stderr.strip().splitlines() or ["no output"])[-1]})
            continue
        results.append(json.loads(lines[-1]))
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Timing worker (one method, one fresh process).")
    parser.add_argument("--worker", required=True, help="method name")
    parser.add_argument("--label", default=None, help="row label (default: the method name)")
    parser.add_argument("--tpc-model", default=DEFAULT_TPC_MODEL, help="checkpoint of a TPC method")
    parser.add_argument("--prompts", required=True, type=Path)
    parser.add_argument("--repeats", required=True)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--device", default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    result = _worker(args.worker, args.prompts, [int(x) for x in args.repeats.split(",")], args.rate, args.device,
                     tpc_model=args.tpc_model, label=args.label)  # fmt: skip
    print(json.dumps(result))


if __name__ == "__main__":
    main()
