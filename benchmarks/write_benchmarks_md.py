"""BENCHMARKS.md, written from the result files under ``benchmarks/results/``: one current table per suite, each with
the command that produces it, the day it was recorded and the machine's load (``benchmarks/recorded_runs.json``).

    python -m benchmarks.write_benchmarks_md           # rewrite BENCHMARKS.md
    python -m benchmarks.write_benchmarks_md --check   # exit 1 when BENCHMARKS.md is not what this writes

A suite's table is read from its results file (a Markdown table the suite wrote, chosen columns and rows of it, or a
JSON record). Where a run's only record is the prose that reported it, its figures are written here as recorded
(``recorded=``), beside the results file that holds the run's own notes. Nothing here measures anything.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = "benchmarks/results"
# The day each suite's run was recorded and the load its record states, by the suite's title: kept beside the code
# as data (the runs' own files do not all carry them).
RECORDED = ROOT / "benchmarks" / "recorded_runs.json"
OUT = ROOT / "BENCHMARKS.md"
WIDTH = 120

Rows = list[list[str]]


@dataclass(frozen=True)
class Suite:
    """One table of BENCHMARKS.md.

    Attributes:
        title: The section's heading.
        command: The command that writes the results file.
        source: The results file, relative to ``benchmarks/results/`` (``None``: the run left none, and
            ``recorded`` says where its figures were written).
        table: Which Markdown table of ``source`` (0 is the first).
        columns: The columns kept, by index (``None``: all).
        headers: The kept columns' headers, where the file's are longer than a page line allows.
        rows: The rows kept, by their first cell (``None``: all).
        where: Keeps only the rows whose cell at this index (of the file's columns) holds this value.
        note: What the table needs to be read right (a sentence or two).
        read: Builds the rows from the source file itself (a JSON record), instead of a Markdown table.
        recorded: The rows of a run whose only record is its prose, header first.
        record: Where that prose is, for a run that left no results file.
    """

    title: str
    command: str
    source: str | None
    table: int = 0
    columns: tuple[int, ...] | None = None
    headers: tuple[str, ...] | None = None
    rows: tuple[str, ...] | None = None
    where: tuple[int, str] | None = None
    note: str = ""
    read: Callable[[Path], Rows] | None = None
    recorded: tuple[tuple[str, ...], ...] | None = None
    record: str = ""


def markdown_tables(text: str) -> list[Rows]:
    """Every table of a Markdown text, each as rows of cells (the separator row left out)."""
    tables: list[Rows] = []
    current: Rows = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            if not all(set(cell) <= set("-: ") for cell in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def hub_cse_rows(path: Path) -> Rows:
    """The CPC encoder's CPU timing record: seconds per window and per 10k tokens."""
    record = json.loads(path.read_text(encoding="utf-8"))
    rows = [["window (tokens)", "one window (s)", "per 10k tokens (s)"]]
    per_10k = record["seconds_per_10k_tokens_in_windows_of"]
    for window, seconds in record["measured_window_seconds"].items():
        rows.append([window, f"{seconds:.1f}", f"{per_10k[window]:.0f}"])
    rows.append(["6144 (CPC's, fitted a·L + b·L², not run)", "—",
                 f"{record['seconds_per_10k_tokens_cpc_windows_extrapolated']:.0f}"])
    return rows


def suite_rows(suite: Suite) -> Rows:
    """The table of ``suite``, as the page shows it."""
    if suite.recorded is not None:
        rows = [list(row) for row in suite.recorded]
    elif suite.source is None:
        raise ValueError(f"{suite.title}: a suite with no results file needs its recorded rows")
    elif not (path := ROOT / RESULTS / suite.source).is_file():
        raise FileNotFoundError(f"{suite.title}: its results file {RESULTS}/{suite.source} is missing")
    elif suite.read is not None:
        rows = suite.read(path)
    else:
        rows = markdown_tables(path.read_text(encoding="utf-8"))[suite.table]
    if suite.where is not None:
        index, value = suite.where
        rows = [rows[0], *(row for row in rows[1:] if row[index] == value)]
    if suite.columns is not None:
        rows = [[row[index] if index < len(row) else "" for index in suite.columns] for row in rows]
    if suite.headers is not None:
        rows[0] = list(suite.headers)
    if suite.rows is not None:
        missing = set(suite.rows) - {row[0] for row in rows[1:]}
        if missing:
            raise ValueError(f"{suite.title}: rows {sorted(missing)} are not in {suite.source}")
        rows = [rows[0], *(row for row in rows[1:] if row[0] in suite.rows)]
    return rows


def render_table(rows: Rows) -> list[str]:
    lines = [f"| {' | '.join(rows[0])} |", f"|{'---|' * len(rows[0])}"]
    lines += [f"| {' | '.join(row)} |".replace("|  |", "| |") for row in rows[1:]]
    return lines


def record_files(source: str) -> str:
    """The results file, and the JSON record of the same run beside it where there is one (``a.{md,json}``)."""
    path = ROOT / RESULTS / source
    if path.suffix == ".md" and path.with_suffix(".json").is_file():
        return f"{RESULTS}/{source.removesuffix('.md')}.{{md,json}}"
    return f"{RESULTS}/{source}"


def render_suite(suite: Suite) -> list[str]:
    """A suite's section: its heading, how it was run and where its record is, its table, what to read it with."""
    commands = " and ".join(f"`{command}`" for command in suite.command.splitlines())
    where = f"`{record_files(suite.source)}`" if suite.source else suite.record
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))[suite.title]
    said = f"{commands}; recorded {recorded['date']}, load {recorded['load']}; {where}. {suite.note}".rstrip()
    paragraph = textwrap.wrap(said, WIDTH, break_long_words=False, break_on_hyphens=False)
    return [f"## {suite.title}", *paragraph, "", *render_table(suite_rows(suite)), ""]


INTRODUCTION = """# Benchmarks

TPC against the compressors a user would otherwise pick, at the same budget, counted with the same token counter
(all-MiniLM-L6-v2's WordPiece, every output re-counted), on the same sentences. The budget is `floor(rate × tokens)`
of the text compressed: the context with a question, the whole filled prompt without one. Choices are made on
held-out `train` rows of `../shared/data`; `dev` is run once, at the end. **Evidence recall**: the share of the gold
supporting sentences kept verbatim; **answer retention**: a gold answer still in the text; 1/τ: original over
compressed tokens. The machine is 2 shared CPU cores, no GPU unless a section says so; at a load above 2 other jobs
shared the cores, so read seconds as indicative. `python -m benchmarks.run --help` lists the suites; each writes
`SUITE.md` and `SUITE.json` (every record, versions, the command). This page is written from `benchmarks/results/` by
`python -m benchmarks.write_benchmarks_md`.
"""

CLOSING = """## What could not be run here

LongBench / ZeroSCROLLS task scores (the paper's Tables 1 and 2): their files are not here; loaders, templates and
metrics are tested on fixtures (`--suite longbench --data-dir DIR --reader ...`). Reader-LLM scores: `--reader
smollm2` works but took over 100 s an answer on the shared cores, so the tables use the reader-free proxies.
LLMLingua / LLMLingua-2: not installed, their weights not downloadable here, skipped with that reason.
"""


REFERENCE = "reference (prompt-aware compress at the budget, last call)"
AGENT_HEADERS = ("method", "recall", "aware, same tokens", "over budget", "tokens sent", "cached share", "cost",
                 "warm ms (mean, p90)")

AGENT_METHODS = ("tpc", "none", "trim_messages", "clear_tool_uses", "clear_tool_uses_defaults", "clear_at_least")


def agents_suite(title: str, split: str, more: tuple[str, ...] = (), shown: tuple[str, ...] = (),
                 note: str = "") -> Suite:
    """An agents run: the methods it ran (``more`` beside the common ones), the rows shown (``shown`` beside them)."""
    methods = ",".join((*AGENT_METHODS, *more))
    rows = ("tpc", "none", "trim_messages", "clear_tool_uses", "clear_at_least", *shown, REFERENCE)
    return Suite(title, f"python -m benchmarks.agents --split {split} --limit 40 --methods {methods}",
                 f"agents/{split}.md", columns=(0, 1, 2, 3, 4, 5, 6, 10), rows=rows, headers=AGENT_HEADERS, note=note)


SUITES: tuple[Suite, ...] = (
    Suite("Prompt-aware: qa_dev, rate 0.2",
          "python -m benchmarks.run --suite dev --rate 0.2 --tpc-model tpc-mini,tpc-mini@pooled_cosine --out OUT",
          "dev.md",
          note="tpc-mini@pooled_cosine: the same checkpoint, the paper's cosine alone. Per source: the same file."),
    Suite("Prompt-agnostic: qa_dev, rate 0.2, `question=None`",
          "python -m benchmarks.run --suite dev --rate 0.2 --methods tpc-agnostic,random,lead,full --out OUT",
          "dev.md", table=2,
          note="The whole LongBench-style prompt is compressed with no question: TPC finds the request it writes."),
    Suite("Summaries: summ_dev (multi_news), rate 0.2, no question",
          "python -m benchmarks.run --suite summ --rate 0.2 --out OUT", "summ/rate0.2/summ.md",
          rows=("tpc-mini", "random", "lead", "lead-per-passage", "minilm-centroid", "full"),
          note="Rate 0.1: `benchmarks/results/summ/rate0.1/summ.md`. LLMLingua was not installed (skipped)."),
    Suite("Index time: each dev context compressed alone, no question",
          "python -m benchmarks.run --suite index --out OUT", "index/with_lead_correction.md",
          columns=(0, 1, 2, 3, 4, 5, 6),
          note="ER / AR: evidence recall / answer retention of the 193 questions later asked of the 184 contexts. "
               "tpc-mini here scores a bare document with the lead correction."),
    Suite("Query time against index time",
          "python -m benchmarks.run --suite dev --methods tpc-aware --rate 0.5 --curve-rates '' --out OUT\n"
          "python -m benchmarks.run --suite index --out OUT",
          "cache/query_vs_index.md",
          note="The same questions and prompt sizes: the first row knows the question (the index holds the full "
               "text and the cache makes it cheap), the others compressed each context at ingestion (the first run "
               "again with --rate 0.3 for the @0.3 columns). Rows from "
               "`benchmarks/results/cache/query_time_rate{0.5,0.3}/dev.md` and `benchmarks/results/index/index.md`, "
               "measured before the lead correction (its index-time figure is the section above)."),
    Suite("The query-time cache: cost", "python -m benchmarks.run --suite cache --out OUT", "cache/cache.md",
           columns=(0, 1, 2, 3, 4, 5, 7, 8),
          note="20 chunks, 9,313 MiniLM tokens, rate 0.2. LangChain's EmbeddingsFilter on the same chunks took "
               "2,880 ms per call (same file)."),
    Suite("The query-time cache: storage", "python -m benchmarks.cache_storage", "cache_storage/table.md",

          note="340 qa_dev train samples, 24,045 stored sentences, rate 0.2; int8 (the default)."),
    Suite("Redis across replicas", "python -m benchmarks.cache_redis --passages 2000",
          "cache_redis/cache_redis.md",
          rows=("median first Redis call / fp32 memory warm (target <= 2)", "Redis warm / fp32 memory warm",
                "entries of the 20 chunks (247 sentences): fp32 / int8", "warm results identical to uncached",
                "Redis killed before call 10 of 20: failed calls",
                "round trips that failed during the outage (circuit)"),
          note="A Ray run over 2,000 NQ passages warmed Redis at 1.08× the rows per second of a directory "
               "(same file)."),
    Suite("Conversations: qa_dev dev, rate 0.2 of the whole conversation",
          "python -m benchmarks.conversations --split dev --limit 96 "
          "--methods compress_messages,reference,trim_messages,flattened,message_documents",
          "conversations/dev.md", columns=(0, 1, 2, 3, 4, 5, 6),
          note="reference: prompt-aware compress of the same documents with the same question. flattened: the "
               "conversation as one text, prompt-agnostic; with the current request head it keeps 0.708 "
               "(`benchmarks/results/conversations/dev_flattened_new_head.md`)."),
    agents_suite("Agents: held-out train trajectories", "train", ("tpc:0", "tpc:1", "tpc:3", "tpc:4"),
                 ("tpc:0", "tpc:4"),
                 note="40 trajectories, 224 model calls, 2,000 MiniLM tokens for everything the model receives. tpc "
                      "is plan_ahead=2 (the default); tpc:K sets plan_ahead=K. Cost: the cached prefix billed at 0.1, "
                      "the rest at 1.0, per trajectory."),
    agents_suite("Agents: dev trajectories, once", "dev"),
    Suite("Agents: the first call over a long history", "python -m benchmarks.agents_latency",
          "agents/latency.md",
          headers=("history tokens", "tool results", "cold ms", "floor ms", "cold / floor", "warm ms", "engine calls"),
          note="One torch thread, medians of 3; the floor is plain MiniLM forward passes over the same new tokens."),
    Suite("The written request is kept", "python -m benchmarks.request_kept --set real|stock|bare|generated "
          "--split train|dev", "request_kept/README.md",
          recorded=(("set (prompts)", "kept", "found", "clean"),
                    ("real requests, train, 6 shapes (240)", "1.000", "1.000", "1.000"),
                    ("real requests, dev, 6 shapes (144)", "1.000", "1.000", "1.000"),
                    ("stock templates, held-out train (200)", "1.000", "1.000", "0.875"),
                    ("stock templates, dev (120)", "1.000", "1.000", "0.917"),
                    ("open-ended generator, held-out components (120)", "0.725", "0.558", "0.167")),
          note="Prompt-agnostic compress at rate 0.2. kept: the request, as written, is in the output; found: 80% of "
               "its content words are in the task description; clean: 80% of the description's words come from it."),
    Suite("Latency by prompt length", "python -m benchmarks.scorer_latency", "scorer_latency/scorer_latency.md",
           where=(1, "tpc-mini@cosine_bm25"), columns=(0, 2, 3, 4, 5),
          note="Prompt-aware, against plain MiniLM forward passes over the same tokens (the floor)."),
    Suite("The engine's own time and the warm call", "python -m benchmarks.engine_overhead --compare 25617e6 "
          "--clock cpu --rounds 2 --repeats 5", "engine_v5/README.md",
          table=1, columns=(0, 2, 4), headers=("measure", "measured", "target"),
          rows=("engine's own, prompt-aware 10k (part clock, CPU, 1 thread)",
                "engine's own, agnostic, request in the prompt (same)",
                "warm cached call, 20 chunks, question given, 1 thread: call",
                "· the question's forward pass (11 tokens + frame)"),
          note="Main-thread CPU milliseconds on one torch thread (wall times were dominated by the load); by part: "
               "`benchmarks/results/engine_v5/compare_cpu_1thread.md`."),
    Suite("Index-time throughput: short passages against one long prompt", "python -m benchmarks.index_throughput",
          "corpus/index_throughput.md", columns=(0, 1, 2, 3, 4, 5, 7)),
    Suite("Corpus throughput: `tpc compress-corpus`", "python -m benchmarks.corpus_throughput --docs 512 "
          "--small-docs 64", None,
          record="the run's report in BENCHMARKS.md at 5374782 (its output files were not committed)",
          recorded=(("engine", "workers × CPUs", "s (512 docs)", "docs/s", "marginal docs/s", "peak RSS (MiB)"),
                    ("local", "1 × 2", "145.5", "3.52", "3.71", "704"),
                    ("ray, 1 worker", "1 × 2", "76.9", "6.66", "13.83", "794"),
                    ("ray, 2 workers", "2 × 1", "86.8", "5.90", "14.84", "762")),
          note="512 Wikipedia passages of ~109 tokens, a fixed task description; marginal: the rate once start-up "
               "and model loads are paid. At 14.84 docs/s on 2 CPUs, a million such passages is ~37.5 CPU-hours, "
               "assuming linear scaling (measured only up to 2 workers)."),
    Suite("A bare document: does the task descriptor's description help?", "python -m benchmarks.ctd_bare_value "
          "--set qa --split dev --limit 14 --out OUT", "ctd_bare/dev/ctd_bare_qa.md", columns=(0, 1, 2, 3, 4, 6),
          headers=("group", "questions", "contexts", "lead + CTD (describe_bare=True)", "lead alone (default)",
                   "same kept text"),
          rows=("all", "description thrown away (fallback)", "description used (generated / matched / extracted)"),
          note="Held-out train runs gave the same (`benchmarks/results/ctd_bare/train/ctd_bare_qa.{md,json}`). The CTD "
               "took 47 s per context, 3.8 s without it: describe_bare is off by default."),
    Suite("A one-shot `tpc compress`", "python -m benchmarks.cli_start --runs 3 --out OUT", "cli_start/cli_start.md",
           columns=(0, 1, 3)),
    Suite("The authors' CPC encoder on this CPU", "python -m benchmarks.hub_cse_timing --lengths 512 2048 "
          "--threads 2", "hub_cse_timing.json", read=hub_cse_rows,
          note="A randomly initialised model of Llama-3.2-1B's shape (same cost, no download), fp32, 2 threads."),
    Suite("A GPU: tpc-mini on an NVIDIA H200", "python -m benchmarks.device_check --device cuda",
          "device_check/h200_real_weights/README.md",
          columns=(0, 1, 3, 4),
          headers=("mode", "kept-set Jaccard, CUDA bf16 vs CPU fp32", "evidence recall CPU / CUDA", "overruns"),
          note="42 qa_dev train rows, rate 0.2. Latency, median of 5: 9.3 / 33.6 / 39.3 / 112.9 ms at 1k / 4k / 10k / "
               "32k tokens prompt-aware; no memory growth over 100 calls (same file)."),
    Suite("`deadline_ms`: overhead and accuracy", "python -m benchmarks.deadline --out OUT", "deadline/README.md",

          recorded=(("measure", "value"),
                    ("warm call, median, no deadline / a deadline never reached", "40.7 / 50.4 ms"),
                    ("lateness past a deadline of 50 / 200 / 500 ms, median", "15.3 / 17.3 / 13.4 ms")),
          note="On a crowded CPU the extra worker thread waits for a core; rerun on a quiet machine before quoting "
               "the ratio. `benchmarks/results/deadline/deadline.json` holds the record."),
)


def write(suites: Sequence[Suite] = SUITES) -> str:
    """The text of BENCHMARKS.md."""
    lines = [*INTRODUCTION.splitlines(), ""]
    for suite in suites:
        lines += render_suite(suite)
    lines += CLOSING.splitlines()
    too_long = [line for line in lines if len(line) > WIDTH]
    if too_long:
        raise ValueError(f"lines over {WIDTH} characters: {too_long}")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when BENCHMARKS.md differs from what is written")
    args = parser.parse_args(argv)
    text = write()
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print("BENCHMARKS.md is not what benchmarks/write_benchmarks_md.py writes: run it", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(text.splitlines())} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
