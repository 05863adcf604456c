"""Compress a whole corpus: ``tpc compress-corpus IN OUT`` and :func:`compress_corpus`.

Two engines write the same OUT (a directory of Parquet files, see :mod:`tpc_core.corpus.io`):

* ``local`` (default): this process, batches of rows through :meth:`TPCCompressor.compress_batch`, a progress
  bar, one Parquet file per ``rows_per_file`` rows, each written atomically (a temporary name, then a rename),
  so an interrupted run leaves only complete files.
* ``ray`` (:mod:`tpc_core.corpus.ray_engine`): Ray Data, one compressor per actor.

Both skip the rows whose id is already in OUT, so a run can be interrupted and started again with the same
command. ``--warm-cache DIR`` compresses nothing: each row's sentence-cache entry is stored in DIR and its whole
text written to OUT (``compression="cached"``), for an index of the full text compressed at query time. Without
``--task-description``, rows in which no written request is found get the checkpoint's fallback task without a CTD
generation unless ``--describe-bare`` is given (:attr:`CorpusSettings.describe_bare`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tpc_core.corpus.io import (
    CorpusInputError,
    CorpusPlan,
    CorpusSettings,
    open_dataset,
    output_schema,
    pending_mask,
    plan_corpus,
    write_manifest,
)
from tpc_core.corpus.table import check_threads, compress_table, load_compressor, row_outcome, torch_threads
from tpc_core.loading.registry import DEFAULT_MODEL
from tpc_core.options.surfaces import add_option_flags, flag_options

if TYPE_CHECKING:
    import pyarrow as pa

    from tpc_core.compressor import TPCCompressor

__all__ = ["CorpusReport", "compress_corpus", "run_local", "compress_table", "row_outcome", "load_compressor",
           "add_corpus_parser", "run_corpus_command", "ENGINES"]

ENGINES = ("local", "ray")
#: The compress options that ``tpc compress-corpus`` has as flags (the rest of a row's compression is fixed).
CORPUS_OPTIONS = ("target_tokens", "rate", "describe_bare", "batch_size")
#: Where the corpus job's default differs from ``compress``'s: bare rows get the fallback task without a generation,
#: and many short rows share a forward pass (their windows are bucketed by length, so little of it is padding).
CORPUS_DEFAULTS = {"describe_bare": False, "batch_size": 64}


@dataclass(frozen=True)
class CorpusReport:
    """What a run did.

    Attributes:
        total_rows: Rows in IN.
        skipped_rows: Rows already in OUT, not compressed again.
        compressed_rows: Rows compressed by this run.
        origin_tokens: Tokens of the rows compressed by this run, before compression (``None`` for ``ray``,
            which does not bring the rows back to the driver).
        compressed_tokens: The same rows' tokens after compression (``None`` for ``ray``).
        seconds: Wall time of the run, model loading included.
    """

    total_rows: int
    skipped_rows: int
    compressed_rows: int
    origin_tokens: int | None
    compressed_tokens: int | None
    seconds: float


def _pending_batches(plan: CorpusPlan, rows: int) -> Any:
    """Record batches of IN's rows still to do (with the ``row`` column when rows are numbered)."""
    import pyarrow as pa

    settings = plan.settings
    numbered = settings.id_column is None
    position = 0
    for batch in open_dataset(plan.files, plan.format).to_batches(batch_size=rows):
        table = pa.Table.from_batches([batch])
        if numbered:
            table = table.append_column("row", pa.array(range(position, position + table.num_rows), pa.int64()))
        position += table.num_rows
        if plan.done:
            mask = pending_mask(table.column(settings.id_field).to_pylist(), plan.done)
            table = table.filter(pa.array(mask))
        if table.num_rows:
            yield table


def _write_part(table: pa.Table, out_dir: Path, name: str) -> Path:
    """Write one Parquet file atomically: readers and resumes never see a half-written file."""
    import pyarrow.parquet as pq

    final = out_dir / name
    temporary = out_dir / f".{name}.tmp"
    pq.write_table(table, temporary)
    os.replace(temporary, final)
    return final


def run_local(plan: CorpusPlan, compressor: TPCCompressor, batch_size: int, rows_per_file: int,
              show_progress: bool | None) -> tuple[int, int, int]:
    """The local engine on a validated plan with a loaded compressor (what ``compress_corpus`` runs after loading
    the model; public so benchmarks time it without the load). Returns (rows done, origin tokens, compressed
    tokens); ``plan.out_dir`` must exist (``write_manifest`` creates it)."""
    import pyarrow as pa
    from tqdm.auto import tqdm

    schema = output_schema(plan.schema, plan.settings)
    run = uuid.uuid4().hex[:8]
    done = origin = compressed = parts = 0
    buffered: list[pa.Table] = []
    with tqdm(total=plan.pending_rows, unit="doc", desc="tpc compress-corpus",
              disable=(not show_progress) if show_progress is not None else None) as progress:
        for table in _pending_batches(plan, batch_size):
            try:
                out = compress_table(compressor, table, plan.settings, batch_size)
            except BaseException:  # a dead --warm-cache Redis, an interrupt: the rows done before are kept
                if buffered:
                    _write_part(pa.concat_tables(buffered).cast(schema), plan.out_dir,
                                f"part-{run}-{parts:05d}.parquet")
                raise
            buffered.append(out)
            done += out.num_rows
            origin += sum(out.column("origin_tokens").to_pylist())
            compressed += sum(out.column("compressed_tokens").to_pylist())
            progress.update(out.num_rows)
            if sum(t.num_rows for t in buffered) >= rows_per_file:
                _write_part(pa.concat_tables(buffered).cast(schema), plan.out_dir, f"part-{run}-{parts:05d}.parquet")
                buffered = []
                parts = parts + 1
        if buffered:
            _write_part(pa.concat_tables(buffered).cast(schema), plan.out_dir, f"part-{run}-{parts:05d}.parquet")
    return done, origin, compressed


def check_device(device: str | None, engine: str) -> None:
    """``--device`` before anything is read or written: one this machine has for the local engine; a device name
    TPC accepts for Ray (its workers may run on other machines; each then loads on its own).

    Raises:
        CorpusInputError: The device, with what to use instead.
    """
    from tpc_core.loading.devices import check_device_name, resolve_device

    try:
        check_device_name(device) if engine == "ray" else resolve_device(device)
    except (TypeError, ValueError) as error:
        raise CorpusInputError(str(error)) from error


def compress_corpus(source: str | Path, out: str | Path, settings: CorpusSettings, *, engine: str = "local",
                    batch_size: int = 64, num_workers: int = 1, cpus_per_worker: float = 1.0,
                    rows_per_file: int = 1000, address: str | None = None, device: str | None = None,
                    local_files_only: bool = False, explicit_id: bool = True,
                    show_progress: bool | None = None, threads: int | None = None) -> CorpusReport:
    """Compress every row of IN not yet in OUT, and write it to OUT.

    Args:
        source: IN: a JSONL (``.jsonl``, ``.jsonl.gz``, ``.json``) or Parquet file, or a directory of them.
        out: OUT: a directory of Parquet files (created; a previous run's OUT is resumed).
        settings: Model, budget, task description, text and id columns.
        engine: ``"local"`` or ``"ray"``.
        batch_size: Rows per ``compress_batch`` call (and per Ray batch).
        num_workers: Ray actors, each with its own compressor (``ray`` only).
        cpus_per_worker: CPUs reserved per Ray actor; also its torch thread count (``ray`` only).
        rows_per_file: Rows per Parquet file (``local``; at most this many rows are redone after an interrupt).
        address: An existing Ray cluster (``"auto"`` or ``"ray://host:10001"``); ``None`` starts a local one.
        device: ``"cpu"``, ``"cuda"``, ... (``None``: the best available on each worker).
        local_files_only: Never use the network to load the model.
        explicit_id: Whether ``settings.id_column`` was named by the user (then it must exist in IN).
        show_progress: Progress bar (``local``; default: on a terminal).
        threads: torch intra-op threads of the model (``local``: for this run, restored after; ``ray``: of each
            actor). ``None``: torch's default (``local``) or ``int(cpus_per_worker)`` (``ray``).

    Raises:
        CorpusInputError: Bad input or options, before any model loads.
    """
    started = time.perf_counter()
    if engine not in ENGINES:
        raise CorpusInputError(f"engine must be one of {ENGINES}, got {engine!r}")
    for name, value in (("batch_size", batch_size), ("num_workers", num_workers), ("rows_per_file", rows_per_file)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise CorpusInputError(f"{name} must be a positive integer, got {value!r}")
    if not cpus_per_worker > 0:
        raise CorpusInputError(f"cpus_per_worker must be positive, got {cpus_per_worker!r}")
    check_threads(threads)
    check_device(device, engine)
    if engine == "ray":
        from tpc_core.corpus.ray_engine import require_ray

        require_ray()
    plan = plan_corpus(source, out, settings, explicit_id=explicit_id)
    write_manifest(plan.out_dir, plan.settings)
    skipped = len(plan.done)
    if plan.pending_rows == 0:
        return CorpusReport(plan.total_rows, skipped, 0, 0, 0, time.perf_counter() - started)
    if engine == "ray":
        from tpc_core.corpus.ray_engine import run_ray

        run_ray(plan, batch_size=batch_size, num_workers=num_workers, cpus_per_worker=cpus_per_worker,
                address=address, device=device, local_files_only=local_files_only, threads=threads)
        return CorpusReport(plan.total_rows, skipped, plan.pending_rows, None, None, time.perf_counter() - started)
    with torch_threads(threads):
        compressor = load_compressor(plan.settings, device=device, local_files_only=local_files_only)
        done, origin, compressed = run_local(plan, compressor, batch_size, rows_per_file, show_progress)
    return CorpusReport(plan.total_rows, skipped, done, origin, compressed, time.perf_counter() - started)


# ---------------------------------------------------------------------------------------------------- command line
def add_corpus_parser(commands: Any) -> argparse.ArgumentParser:
    """Register ``tpc compress-corpus`` on the ``tpc`` subcommand parsers."""
    parser = commands.add_parser(
        "compress-corpus", allow_abbrev=False,
        help="Compress every row of a JSONL/Parquet corpus into a directory of Parquet files.",
        description="Compress the text column of every row of IN and write the rows, with compressed_text, "
                    "origin_tokens, compressed_tokens, task_description, task_source and compression, to OUT (a "
                    "directory of Parquet files). Rows already in OUT are skipped: run the same command again to "
                    "resume.")
    parser.add_argument("input", metavar="IN",
                        help="A .jsonl/.jsonl.gz/.json or .parquet file, or a directory of them.")
    parser.add_argument("output", metavar="OUT", help="Output directory of Parquet files (resumed if it exists).")
    parser.add_argument("--model", "-m", default=DEFAULT_MODEL, help="Checkpoint name or path (default tpc-mini).")
    # the budget, --describe-bare and --batch-size: their types and help come from CompressOptions
    add_option_flags(parser, CORPUS_OPTIONS, defaults=CORPUS_DEFAULTS)
    parser.add_argument("--task-description", default=None,
                        help="One description of the task for every row (fast, and independent of batching); "
                             "without it each row is compressed prompt-agnostically: its own written request where "
                             "the request head finds one, else a summary-like coverage selection.")
    parser.add_argument("--warm-cache", metavar="DIR|URL", default=None,
                        help="Do not compress: store each row's sentence-cache entry in DIR (or the Redis server of "
                             "a redis:// URL, written by every worker) and write its whole text (compression=cached), "
                             "so the full text can be indexed and compressed at query time, per question, by a "
                             "compressor given the same cache= (TPCDocumentCompressor, TPCNodePostprocessor, "
                             "compress). A row is written only once its entry is stored; a Redis that fails stops "
                             "the run with exit code 1 (run the command again to resume). Excludes --rate, "
                             "--target-tokens, --task-description.")
    parser.add_argument("--text-column", default="text", help="Column holding the text (default: text).")
    parser.add_argument("--id-column", default=None,
                        help="Column identifying a row, used to resume (default: id; without one, the row's "
                             "number in IN, written as a 'row' column).")
    parser.add_argument("--token-counter", default=None, help="Count tokens with this tokenizer (default: the CSE's).")
    parser.add_argument("--engine", choices=ENGINES, default="local", help="local (default) or ray (Ray Data).")
    parser.add_argument("--num-workers", type=int, default=1, help="Ray actors, one compressor each (default 1).")
    parser.add_argument("--cpus-per-worker", type=float, default=1.0,
                        help="CPUs per Ray actor, also its torch threads unless --threads is given (default 1).")
    parser.add_argument("--rows-per-file", type=int, default=1000, help="Rows per Parquet file, local engine.")
    parser.add_argument("--address", default=None,
                        help="Connect to an existing Ray cluster ('auto', 'ray://host:10001'); default: start one.")
    parser.add_argument("--device", default=None, help="cpu, cuda, mps (default: best available).")
    parser.add_argument("--threads", type=_positive_int, default=None,
                        help="torch intra-op threads of the model (local: this run; ray: each actor, default "
                             "--cpus-per-worker). Default: torch's own choice.")
    parser.add_argument("--local-files-only", action="store_true", help="Never use the network.")
    return parser


def _positive_int(text: str) -> int:
    """argparse type of ``--threads``: a positive integer, else argparse's usage error (exit code 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def run_corpus_command(args: argparse.Namespace) -> int:
    """Run ``tpc compress-corpus``; exit code 2 for bad input (checked before any model loads)."""
    options = {**CORPUS_DEFAULTS, **flag_options(args, CORPUS_OPTIONS)}
    settings = CorpusSettings(model=args.model, rate=options.get("rate"), target_tokens=options.get("target_tokens"),
                              task_description=args.task_description, text_column=args.text_column,
                              id_column=args.id_column or "id", token_counter=args.token_counter,
                              describe_bare=options["describe_bare"], warm_cache=args.warm_cache)
    try:
        report = compress_corpus(args.input, args.output, settings, engine=args.engine,
                                 batch_size=options["batch_size"],
                                 num_workers=args.num_workers, cpus_per_worker=args.cpus_per_worker,
                                 rows_per_file=args.rows_per_file, address=args.address, device=args.device,
                                 local_files_only=args.local_files_only, explicit_id=args.id_column is not None,
                                 threads=args.threads)
    except (ValueError, TypeError, OSError, ImportError) as error:  # CorpusInputError, a model that cannot load
        print(f"tpc: error: {error}", file=sys.stderr)
        # A --warm-cache Redis that failed mid-run (CacheUnavailable) is not bad input: exit 1, and it resumes.
        return 1 if type(error).__name__ == "CacheUnavailable" else 2
    except RuntimeError as error:
        from tpc_core.corpus.ray_engine import CorpusWorkerError  # imports no Ray

        if not isinstance(error, CorpusWorkerError):
            raise
        print(f"tpc: error: {error}", file=sys.stderr)
        return 2
    tokens = (f"; {report.origin_tokens} -> {report.compressed_tokens} tokens"
              if report.origin_tokens is not None and report.compressed_rows else "")
    from tpc_core.cache.redis_store import redacted_url

    done = "cached in " + redacted_url(args.warm_cache) if args.warm_cache else "compressed"
    print(f"[tpc] {report.compressed_rows} rows {done}, {report.skipped_rows} already in {args.output} "
          f"(of {report.total_rows}){tokens}; {report.seconds:.1f} s", file=sys.stderr)
    return 0
