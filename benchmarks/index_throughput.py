"""Index-time throughput: many short passages through ``tpc compress-corpus``'s local engine against one long prompt.

Usage:
    python -m benchmarks.index_throughput [--docs 512] [--ctd-docs 16] [--rate 0.5] [--batch-size 64]
        [--threads N] [--out benchmarks/results/corpus]

One process, one loaded tpc-mini, every row timed after a warm-up:

* **long prompt, prompt-aware**: one ~``--long-tokens`` prompt (real qa_dev dev contexts joined, the first one's
  question), ``compress(text, question=q)``; the median of ``--repeats`` runs, measured before and after the
  corpus rows (the machine's load drifts; both are shown and their mean is the reference).
* **corpus, fixed description**: ``--docs`` real Wikipedia passages (one per row; see
  :func:`benchmarks.corpus_throughput.load_passages`) through the local engine of ``tpc compress-corpus``
  (:func:`tpc_core.corpus.local.run_local`: batches of rows, ``compress_table``, Parquet parts) with
  ``--task-description``.
* **corpus, no description**: the same rows, no description, the command's default (``describe_bare=False``).
* **corpus, no description, CTD on** (``--describe-bare``): only the first ``--ctd-docs`` rows (0 skips it):
  the cost of a CTD generation per row with no written request.

Tokens are the MiniLM tokens of the input (``origin_tokens``); model loading is excluded from every row. The CSE
forward passes are watched with a forward pre-hook to report the share of padding in the tokens they read.
Prints a markdown table and writes it with the raw figures to ``--out`` (``index_throughput.{md,json}``).
Asserts nothing; timings on a shared machine are noisy (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.harness.timing_inputs import TASK, build_prompt, load_passages
from tpc_core.corpus.io import CorpusSettings, plan_corpus, write_manifest
from tpc_core.corpus.local import run_local

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Row:
    """One measured configuration."""

    mode: str
    docs: int
    tokens: int
    seconds: float
    padding_share: float  # padded positions / all positions read by the CSE forwards
    task_sources: dict[str, int]

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds


class PaddingMeter:
    """Counts real and padded token positions of every CSE forward pass (a forward pre-hook, no engine change)."""

    def __init__(self, model) -> None:  # a transformers model
        self.real = self.total = 0
        model.register_forward_pre_hook(self._count, with_kwargs=True)

    def _count(self, _module, _args, kwargs):
        mask = kwargs.get("attention_mask")
        if mask is not None and mask.dim() == 2:
            self.real += int(mask.sum())
            self.total += mask.numel()

    def share_since(self, real: int, total: int) -> float:
        positions = self.total - total
        return (positions - (self.real - real)) / positions if positions else 0.0


def long_prompt_row(compressor, text: str, question: str, rate: float, repeats: int,
                    meter: PaddingMeter) -> Row:
    """The median of ``repeats`` prompt-aware compressions of the long prompt, after one warm-up."""
    compressor.compress(text, question=question, rate=rate)  # warm-up
    real = meter.real
    total = meter.total
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = compressor.compress(text, question=question, rate=rate)
        times.append(time.perf_counter() - started)
    return Row("long prompt, prompt-aware", 1, result.origin_tokens, statistics.median(times),
               meter.share_since(real, total), {str(result.task_source): 1})


def corpus_row(compressor, rows: list[dict], mode: str, settings, batch_size: int, workdir: Path,
               meter: PaddingMeter) -> Row:
    """``rows`` through the local engine (plan, ``run_local``, Parquet parts in ``workdir``), model loaded."""
    import pyarrow.parquet as pq  # lazy: optional extra (corpus)

    slug = "".join(ch if ch.isalnum() else "-" for ch in mode)
    source = workdir / f"{slug}-{len(rows)}.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    plan = plan_corpus(source, workdir / f"{slug}-{len(rows)}-out", settings)
    write_manifest(plan.out_dir, plan.settings)
    real = meter.real
    total = meter.total
    started = time.perf_counter()
    _, origin, _ = run_local(plan, compressor, batch_size, rows_per_file=1000, show_progress=False)
    seconds = time.perf_counter() - started
    sources: dict[str, int] = {}
    for value in pq.read_table(plan.out_dir, columns=["task_source"]).column(0).to_pylist():
        sources[str(value)] = sources.get(str(value), 0) + 1
    return Row(mode, len(rows), origin, seconds, meter.share_since(real, total), sources)


def markdown(rows: list[Row], reference: float, header: str) -> str:
    lines = [header, "", "| mode | docs | tokens | s | tokens/s | × long prompt | CSE padding | task sources |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        sources = ", ".join(f"{k} {v}" for k, v in sorted(row.task_sources.items()))
        lines.append(f"| {row.mode} | {row.docs} | {row.tokens} | {row.seconds:.2f} | {row.tokens_per_second:.0f} | "
                     f"{row.tokens_per_second / reference:.2f} | {row.padding_share:.1%} | {sources} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=512, help="passages in the corpus (default 512)")
    parser.add_argument("--ctd-docs", type=int, default=16, help="passages of the CTD-on row (0: skip it)")
    parser.add_argument("--long-tokens", type=int, default=10_000, help="size of the long prompt (default 10k)")
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--batch-size", type=int, default=64, help="rows per compress_batch call (the CLI default)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the long prompt, median taken")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--model", default="tpc-mini")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "corpus")
    args = parser.parse_args(argv)
    import torch  # lazy: loads torch

    from tpc_core import TPCCompressor  # lazy: loads torch

    warnings.simplefilter("ignore", UserWarning)  # oversized sentences, counted in the rows' results
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    compressor = TPCCompressor.from_pretrained(args.model)
    meter = PaddingMeter(compressor.encoder.model)
    text, question = build_prompt(compressor.token_counter, args.long_tokens)
    passages = load_passages(args.docs)
    fixed = CorpusSettings(model=args.model, rate=args.rate, task_description=TASK)
    bare = CorpusSettings(model=args.model, rate=args.rate)
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        corpus_row(compressor, passages[:args.batch_size], "warm-up", fixed, args.batch_size, workdir, meter)
        before = long_prompt_row(compressor, text, question, args.rate, args.repeats, meter)
        rows = [corpus_row(compressor, passages, "corpus, fixed description", fixed, args.batch_size, workdir,
                           meter),
                corpus_row(compressor, passages, "corpus, no description", bare, args.batch_size, workdir, meter)]
        if args.ctd_docs:
            ctd = CorpusSettings(model=args.model, rate=args.rate, describe_bare=True)
            rows.append(corpus_row(compressor, passages[:args.ctd_docs], "corpus, no description, --describe-bare",
                                   ctd, args.batch_size, workdir, meter))
        after = long_prompt_row(compressor, text, question, args.rate, args.repeats, meter)
    reference = (before.tokens_per_second + after.tokens_per_second) / 2
    before = Row("long prompt, prompt-aware (before the corpus rows)", **{k: v for k, v in asdict(before).items()
                                                                         if k != "mode"})
    after = Row("long prompt, prompt-aware (after the corpus rows)", **{k: v for k, v in asdict(after).items()
                                                                       if k != "mode"})
    table_rows = [before, after, *rows]
    load_after = os.getloadavg()
    header = (f"{args.model}, rate {args.rate}, {args.batch_size} rows per batch, torch threads "
              f"{torch.get_num_threads()}, {os.cpu_count()} CPUs; load average (1 min) {load_before[0]:.1f} before, "
              f"{load_after[0]:.1f} after. × long prompt: tokens/s over the mean of the two long-prompt rows "
              f"({reference:.0f} tokens/s).")
    table = markdown(table_rows, reference, header)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "index_throughput.md").write_text(table, encoding="utf-8")
    (args.out / "index_throughput.json").write_text(json.dumps(
        {"settings": vars(args) | {"out": str(args.out)}, "load_average_before": load_before,
         "load_average_after": load_after, "reference_tokens_per_second": reference,
         "rows": [asdict(row) | {"tokens_per_second": row.tokens_per_second,
                                 "over_long_prompt": row.tokens_per_second / reference} for row in table_rows]},
        indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
