"""Benchmark CLI: ``python -m benchmarks.run --suite dev --out results/``.

Suites:
  dev          qa_dev (or any JSONL in its schema): reader-free proxies (+ reader scores with --reader),
               quality-vs-rate curves over --curve-rates on the first --curve-limit samples.
  speed        seconds per prompt / tokens/s / RSS by prompt length, each method in a fresh process.
  longbench    LongBench tasks from --data-dir (Table 1 layout; needs --reader for task scores).
  zeroscrolls  ZeroSCROLLS tasks from --data-dir (Table 2 layout; needs --reader for task scores).
  summ         summ_dev (LongBench multi_news): the whole filled prompt compressed with no question;
               ROUGE-1/2 recall of the reference summary by the compressed text (--max-samples N).
  index        index-time compression: each qa_dev dev context compressed on its own, no question, no
               template, at --index-rates (default 0.5,0.3; --rate R for one rate); evidence recall and
               answer retention of the questions asked later, per source (--limit N questions).
  cache        query-time sentence cache: cold / cold with a cache / warm call time on 20 retrieved
               chunks of ~500 tokens from qa_dev train contexts (memory and directory storage, question given
               and not), LangChain's EmbeddingsFilter on the same chunks, bytes per sentence, time by number of
               chunks (plot), and a LangChain retriever and a LlamaIndex query engine asked the same 50
               questions twice (--quick: tiny inputs, one repeat; a check, not a measurement).
  all          dev + speed.
``--smoke``: a few dev samples, a few methods, no curves, no timing; for CI (< 2 min on 2 cores).
``--tpc-model`` may be repeated or take a comma list: one TPC row per model in every suite.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.cache_suite import CacheSuiteSettings, run_cache_suite
from benchmarks.timing import DEFAULT_LENGTHS, run_speed_suite
from data_access.loaders import (
    LONGBENCH_TASKS,
    ZEROSCROLLS_TASKS,
    DataNotFoundError,
    Sample,
    load_longbench,
    load_qa_dev,
    load_summ_dev,
    load_zeroscrolls,
    round_robin,
)
from evaluation.budget import minilm_token_counter
from evaluation.cache import JsonCache
from evaluation.evaluate import evaluate
from evaluation.index import (
    INDEX_METHODS,
    INDEX_RATES,
    INDEX_SMOKE_METHODS,
    evaluate_index,
    index_summary,
    index_table,
    plot_index_recall,
)
from evaluation.methods.base import AGNOSTIC, Method
from evaluation.methods.forward_floor import FLOOR_METHOD
from evaluation.methods.registry import (
    ALL_METHOD_NAMES,
    METHOD_NAMES,
    OPT_IN_METHOD_NAMES,
    build_method,
    method_settings,
    method_specs,
    tpc_model_labels,
)
from evaluation.methods.tpc import DEFAULT_TPC_MODEL, TPCMethod
from evaluation.reader import CachedReader, ReaderUnavailable, resolve_reader
from evaluation.report import (
    aggregate,
    dev_tables,
    environment_info,
    longbench_table,
    plot_latency,
    plot_rate_curves,
    plot_summ_rouge,
    speed_ratio_lines,
    speed_table,
    summ_summary,
    summ_table,
    write_json,
    zeroscrolls_table,
)
from evaluation.summ import evaluate_summ, evenly_spaced

__all__ = ["main", "parse_args", "stratified"]

logger = logging.getLogger("benchmarks")

SMOKE_METHODS = ("tpc-aware", "lead", "bm25", "full")
SPEED_METHODS = tuple(name for name in METHOD_NAMES if name != "full") + (FLOOR_METHOD,)
SUMM_METHODS = tuple(name for name in METHOD_NAMES if AGNOSTIC in method_settings(name))
SUMM_SMOKE_METHODS = ("lead", "lead-per-passage", "random", "minilm-centroid")


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _tpc_models(values: Sequence[Sequence[str]] | None) -> list[str]:
    """``--tpc-model`` values (each a comma list), flattened, duplicates dropped; default ``[tpc-mini]``."""
    models = list(dict.fromkeys(model for value in values or () for model in value))
    return models or [DEFAULT_TPC_MODEL]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _parser()
    args = parser.parse_args(argv)
    known = ALL_METHOD_NAMES + ((FLOOR_METHOD,) if args.suite == "speed" else ())
    unknown = [name for name in args.methods or () if name not in known]
    if unknown:
        parser.error(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    if args.rate is not None and args.target_tokens is not None:
        parser.error("give --rate or --target-tokens, not both")
    args.rate_given = args.rate is not None
    if args.rate is None and args.target_tokens is None:
        args.rate = 0.2
    if args.max_samples is not None and args.max_samples < 1:
        parser.error("--max-samples must be at least 1")
    args.tpc_models = _tpc_models(args.tpc_model_args)
    if args.suite in ("summ", "index"):
        needs_question = [name for name in args.methods or () if AGNOSTIC not in method_settings(name)]
        if needs_question:
            parser.error(f"--suite {args.suite} has no question: {', '.join(needs_question)} cannot run "
                         f"(choose from {', '.join(SUMM_METHODS)})")  # fmt: skip
    if args.suite == "index":
        _check_index_rates(parser, args)
    return args




def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--suite", default="dev",
                        choices=("dev", "speed", "longbench", "zeroscrolls", "summ", "index", "cache", "all"))
    parser.add_argument("--out", type=Path, default=Path("results"))
    parser.add_argument("--smoke", action="store_true", help="few samples and methods, no curves or timing")
    parser.add_argument("--quick", action="store_true",
                        help="cache: tiny inputs, one repeat (a check, not a measurement)")
    parser.add_argument("--repeats", type=int, default=None, help="cache: timed repeats per call (default 5)")
    parser.add_argument("--threads", type=int, default=None, help="cache: torch intra-op threads (default: torch's)")
    parser.add_argument("--methods", type=_csv, default=None,
                        help=f"comma list from: {', '.join(ALL_METHOD_NAMES)} (default: all but "
                             f"{', '.join(OPT_IN_METHOD_NAMES)}); --suite speed also {FLOOR_METHOD}")  # fmt: skip
    parser.add_argument("--rate", type=float, default=None, help="budget = rate x original tokens (default 0.2)")
    parser.add_argument("--target-tokens", type=int, default=None, help="fixed budget (LongBench protocol: 2000)")
    parser.add_argument("--limit", type=int, default=None, help="at most N samples (spread over sources)")
    parser.add_argument("--max-samples", type=int, default=None,
                        help="summ: N samples spread evenly over the file (default: all 100)")  # fmt: skip
    parser.add_argument("--data-dir", type=Path, default=None, help="qa_dev.jsonl / LongBench / ZeroSCROLLS files")
    parser.add_argument("--tasks", type=_csv, default=None, help="LongBench / ZeroSCROLLS tasks (default: all)")
    parser.add_argument("--reader", default="none", help="none | smollm2 | hf:DIR | openai")
    parser.add_argument("--reader-base-url", default=None)
    parser.add_argument("--reader-model", default=None)
    parser.add_argument("--agnostic-limit", type=int, default=None,
                        help="evaluate the prompt-agnostic block on the first N of the samples "
                             "(the CTD is slow on CPU)")
    parser.add_argument("--curve-rates", type=_csv, default=["0.1", "0.2", "0.33", "0.5"])
    parser.add_argument("--index-rates", type=_csv, default=[str(rate) for rate in INDEX_RATES],
                        help="index: the rates each context is compressed at (default 0.5,0.3)")  # fmt: skip
    parser.add_argument("--curve-limit", type=int, default=60, help="samples for the rate curves")
    parser.add_argument("--speed-lengths", type=_csv, default=[str(n) for n in DEFAULT_LENGTHS])
    parser.add_argument("--speed-repeats", type=_csv, default=None, help="repeats per length (default 3,3,3,1)")
    parser.add_argument("--cache", type=Path, default=None, help="sqlite cache (default OUT/cache.sqlite)")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="device for TPC / readers (default: auto)")
    parser.add_argument("--tpc-model", dest="tpc_model_args", type=_csv, action="append", default=None,
                        metavar="NAME[,NAME...]",
                        help="TPC checkpoint(s): repeat the flag or give a comma list; one TPC row per model "
                             f"(default {DEFAULT_TPC_MODEL})")  # fmt: skip
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def _check_index_rates(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--suite index``: the rates as numbers in (0, 1] (``--rate`` alone when given), never a token target."""
    if args.target_tokens is not None:
        parser.error("--suite index compresses at rates: use --index-rates or --rate, not --target-tokens")
    try:
        args.index_rates = [args.rate] if args.rate_given else [float(rate) for rate in args.index_rates]
    except ValueError:
        parser.error(f"--index-rates must be numbers, got {args.index_rates}")
    if not args.index_rates or not all(0 < rate <= 1 for rate in args.index_rates):
        parser.error(f"index rates must be in (0, 1], got {args.index_rates}")


def stratified(samples: Sequence[Sample], limit: int | None) -> list[Sample]:
    """The first ``limit`` samples taken round-robin over sources (all samples when ``limit`` is None)."""
    if limit is None or limit >= len(samples):
        return list(samples)
    by_source: dict[str, list[Sample]] = {}
    for sample in samples:
        by_source.setdefault(sample.source, []).append(sample)
    return round_robin(list(by_source.values()), limit)


def _methods(args: argparse.Namespace, default: Sequence[str], *,
             label_tpc_by_model: bool = False) -> dict[str, Method]:  # fmt: skip
    """The rows to run, by label: ``--methods`` (or ``default``), TPC methods once per ``--tpc-model``."""
    counter = minilm_token_counter()
    specs = method_specs(args.methods or list(default), args.tpc_models, label_tpc_by_model=label_tpc_by_model)
    return {spec.label: build_method(spec.name, counter, seed=args.seed, tpc_model=spec.tpc_model,
                                     device=args.device, label=spec.label) for spec in specs}  # fmt: skip


def _reader(args: argparse.Namespace, cache: JsonCache) -> CachedReader | None:
    reader = resolve_reader(args.reader, base_url=args.reader_base_url, model=args.reader_model, device=args.device)
    return CachedReader(reader, cache) if reader is not None else None


def _budget_text(args: argparse.Namespace) -> str:
    return f"target_tokens={args.target_tokens}" if args.target_tokens is not None else f"rate={args.rate}"


def run_dev(args: argparse.Namespace, cache: JsonCache) -> dict[str, Any]:
    samples = stratified(load_qa_dev(args.data_dir), 3 if args.smoke and args.limit is None else args.limit)
    methods = _methods(args, SMOKE_METHODS if args.smoke else METHOD_NAMES)
    reader = _reader(args, cache)
    counter = minilm_token_counter()
    started = time.perf_counter()
    subsets = {"aware": samples, "agnostic": stratified(samples, args.agnostic_limit)}
    records = []
    skipped = {}
    for setting, subset in subsets.items():
        found, reasons = evaluate(subset, methods, counter, rate=args.rate, target_tokens=args.target_tokens,
                                  settings=(setting,), cache=cache, reader=reader)  # fmt: skip
        records += found
        skipped.update(reasons)
    summary = aggregate(records)
    order = list(methods)
    sizes = {setting: len(subset) for setting, subset in subsets.items()}
    payload: dict[str, Any] = {
        "suite": "dev", "budget": _budget_text(args), "samples": len(samples), "samples_per_setting": sizes,
        "methods": order, "skipped": skipped, "token_counter": counter.name,
        "reader": reader.identity if reader else None, "summary": summary,
        "seconds": time.perf_counter() - started, "records": records,
    }  # fmt: skip
    size_text = f"{len(samples)} dev samples"
    if sizes["aware"] != sizes["agnostic"]:
        size_text = (f"{sizes['aware']} dev samples prompt-aware, the first {sizes['agnostic']} of them "
                     "prompt-agnostic")
    markdown = [f"## qa_dev ({size_text}, {_budget_text(args)}, MiniLM token counter)", "",
                dev_tables(summary, skipped, order)]  # fmt: skip
    rates = [] if args.smoke else [float(rate) for rate in args.curve_rates]
    if rates:
        curve_sets = {setting: stratified(subset, args.curve_limit) for setting, subset in subsets.items()}
        curves: dict[str, Any] = {}
        for rate in rates:
            curve_records: list[dict[str, Any]] = []
            for setting, subset in curve_sets.items():
                found, _ = evaluate(subset, methods, counter, rate=rate, settings=(setting,), cache=cache)
                curve_records += found
            curves[str(rate)] = aggregate(curve_records)
        payload["curves"] = {"samples_per_setting": {s: len(v) for s, v in curve_sets.items()}, "by_rate": curves}
        for metric in ("evidence_recall", "answer_retention"):
            plot_rate_curves(curves, args.out / f"dev_curve_{metric}.png", metric)
        markdown += [f"Quality vs rate ({', '.join(f'{s}: {len(v)} samples' for s, v in curve_sets.items())}): "
                     "dev_curve_evidence_recall.png, dev_curve_answer_retention.png", ""]  # fmt: skip
    (args.out / "dev.md").write_text("\n".join(markdown))
    return payload


def run_speed(args: argparse.Namespace) -> dict[str, Any]:
    samples = load_qa_dev(args.data_dir)
    names = args.methods or list(SPEED_METHODS)
    lengths = [int(length) for length in args.speed_lengths]
    repeats = [int(count) for count in args.speed_repeats] if args.speed_repeats else None
    specs = method_specs([n for n in names if n != "full"], args.tpc_models)
    results = run_speed_suite(samples, specs, args.out, lengths=lengths, repeats=repeats, rate=args.rate or 0.2,
                              device=args.device)  # fmt: skip
    plot_latency(results, args.out / "speed_latency.png")
    markdown = ["## Speed and memory (median seconds per prompt; tokens/s in brackets)", "", speed_table(results), ""]
    ratios = speed_ratio_lines(results, [spec.label for spec in specs if spec.name == "tpc-aware"], FLOOR_METHOD)
    markdown += [*ratios, ""] if ratios else []
    (args.out / "speed.md").write_text("\n".join(markdown))
    return {"suite": "speed", "lengths": lengths, "results": results}


def run_summ(args: argparse.Namespace, cache: JsonCache) -> dict[str, Any]:
    """summ_dev: compress each filled multi_news prompt with no question; ROUGE-1/2 recall of the reference."""
    count = args.max_samples if args.max_samples is not None else args.limit
    everything = load_summ_dev(args.data_dir)
    samples = evenly_spaced(everything, 3 if args.smoke and count is None else count)
    methods = _methods(args, SUMM_SMOKE_METHODS if args.smoke else SUMM_METHODS, label_tpc_by_model=True)
    counter = minilm_token_counter()
    started = time.perf_counter()
    records, skipped = evaluate_summ(samples, methods, counter, rate=args.rate, target_tokens=args.target_tokens,
                                     cache=cache)  # fmt: skip
    order = list(methods)
    summary = summ_summary(records)
    plot_summ_rouge(summary, args.out / "summ_rouge.png", order)
    markdown = [
        f"## summ_dev: LongBench multi_news ({len(samples)} of {len(everything)} samples, {_budget_text(args)}, "
        "prompt-agnostic, MiniLM token counter)", "",
        "The whole filled multi_news prompt is compressed with no question; ROUGE-N recall = share of the "
        "reference summary's n-grams found in the compressed text (clipped counts).", "",
        summ_table(summary, skipped, order), "", "Plot: summ_rouge.png", "",
    ]  # fmt: skip
    (args.out / "summ.md").write_text("\n".join(markdown))
    return {
        "suite": "summ", "budget": _budget_text(args), "samples": len(samples), "sample_ids": [s.id for s in samples],
        "methods": order, "skipped": skipped, "token_counter": counter.name,
        "summary": summary, "seconds": time.perf_counter() - started, "records": records,
    }  # fmt: skip


def run_index(args: argparse.Namespace, cache: JsonCache) -> dict[str, Any]:
    """Index time: each dev context compressed on its own with no question; the later questions' evidence kept."""
    samples = stratified(load_qa_dev(args.data_dir), 3 if args.smoke and args.limit is None else args.limit)
    methods = _methods(args, INDEX_SMOKE_METHODS if args.smoke else INDEX_METHODS, label_tpc_by_model=True)
    for method in methods.values():  # as TPCDocumentTransformer / TPCTransform / compress-corpus: no CTD on bare rows
        if isinstance(method, TPCMethod):
            method.describe_bare = False
    counter = minilm_token_counter()
    started = time.perf_counter()
    records: list[dict[str, Any]] = []
    by_rate: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for rate in args.index_rates:
        found, reasons = evaluate_index(samples, methods, counter, rate=rate, cache=cache)
        records += found
        skipped.update(reasons)
        by_rate[str(rate)] = index_summary(found)
    order = list(methods)
    plot_index_recall(by_rate, args.out / "index_evidence_recall.png", order)
    contexts = len({record["context_id"] for record in records})
    markdown = [
        f"## Index-time compression: qa_dev dev, {len(samples)} questions on {contexts} distinct contexts, rates "
        f"{', '.join(by_rate)}, MiniLM token counter", "",
        "Each context is compressed on its own, with no question and no prompt template (as "
        "`TPCDocumentTransformer` does at ingestion); each question is then scored on its context's compressed "
        "text. ER = evidence recall (share of the question's supporting sentences kept), AR = answer retention "
        "(a gold answer still in the text); s/context = mean seconds per context at each rate (MiniLM sentence "
        "vectors are cached across rates, so minilm-centroid's second time excludes embedding).", "",
        index_table(by_rate, skipped, order), "", "Plot: index_evidence_recall.png", "",
    ]  # fmt: skip
    (args.out / "index.md").write_text("\n".join(markdown))
    return {
        "suite": "index", "rates": args.index_rates, "samples": len(samples), "contexts": contexts,
        "sample_ids": [sample.id for sample in samples], "methods": order, "skipped": skipped,
        "token_counter": counter.name, "summary": by_rate, "seconds": time.perf_counter() - started,
        "records": records,
    }  # fmt: skip


def run_cache(args: argparse.Namespace) -> dict[str, Any]:
    """The query-time cache suite on qa_dev ``train`` contexts (:mod:`benchmarks.cache_suite`)."""
    settings = CacheSuiteSettings.quick_settings(args.device) if args.quick else CacheSuiteSettings(device=args.device)
    if args.repeats is not None:
        settings = replace(settings, repeats=args.repeats)
    if args.threads is not None:
        settings = replace(settings, threads=args.threads)
    if args.rate_given:
        settings = replace(settings, rate=args.rate)
    return run_cache_suite(load_qa_dev(args.data_dir, split="train"), args.out, settings)


def run_task_suite(args: argparse.Namespace, cache: JsonCache, suite: str) -> dict[str, Any]:
    if suite == "longbench":
        samples = load_longbench(args.tasks or LONGBENCH_TASKS, args.data_dir)
    else:
        samples = load_zeroscrolls(args.tasks or ZEROSCROLLS_TASKS, args.data_dir)
    by_task: dict[str, list[Sample]] = {}
    for sample in samples:
        by_task.setdefault(sample.dataset, []).append(sample)
    samples = [s for task in by_task.values() for s in task[: args.limit or len(task)]]
    methods = _methods(args, METHOD_NAMES)
    reader = _reader(args, cache)
    records, skipped = evaluate(samples, methods, minilm_token_counter(), rate=args.rate,
                                target_tokens=args.target_tokens, cache=cache, reader=reader)  # fmt: skip
    table = (longbench_table if suite == "longbench" else zeroscrolls_table)(records, skipped, list(methods))
    note = "" if reader else "\n\nNo --reader given: task scores need a reader LLM; tokens and 1/τ are measured."
    heading = f"## {suite} ({len(samples)} samples, {_budget_text(args)})"
    (args.out / f"{suite}.md").write_text(f"{heading}\n\n{table}{note}\n")
    return {"suite": suite, "budget": _budget_text(args), "skipped": skipped,
            "reader": reader.identity if reader else None, "summary": aggregate(records), "records": records}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose or not args.smoke else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    no_cache = args.no_cache or args.suite == "cache"  # the cache suite times calls: nothing to reuse
    cache = JsonCache(None if no_cache else (args.cache or args.out / "cache.sqlite"))
    suites = ["dev", "speed"] if args.suite == "all" else [args.suite]
    if args.smoke and "speed" in suites:
        suites.remove("speed")
    try:
        for suite in suites:
            if suite == "dev":
                payload = run_dev(args, cache)
            elif suite == "speed":
                payload = run_speed(args)
            elif suite == "summ":
                payload = run_summ(args, cache)
            elif suite == "index":
                payload = run_index(args, cache)
            elif suite == "cache":
                payload = run_cache(args)
            else:
                payload = run_task_suite(args, cache, suite)
            payload["tpc_models"] = tpc_model_labels(args.tpc_models)  # checkpoint -> its row label
            payload["environment"] = environment_info()
            payload["command"] = "python -m benchmarks.run " + " ".join(sys.argv[1:] if argv is None else argv)
            write_json(args.out / f"{suite}.json", payload)
            print((args.out / f"{suite}.md").read_text())
    except (DataNotFoundError, ReaderUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        cache.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
