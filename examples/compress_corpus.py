"""Compress a corpus once, at ingestion, so that every later prompt built from it is smaller.

Writes one real sample's paragraphs as a JSONL corpus (one row per paragraph, with an ``id``), compresses it
with :func:`tpc_core.corpus.compress_corpus` (what ``tpc compress-corpus IN OUT`` runs) into a directory of
Parquet files, reads it back, then runs again to show that the rows already in OUT are skipped (resuming).

A fixed task description is the cheap road at index time (no question is known yet, and nothing is generated);
``--agnostic`` lets TPC's task descriptor describe each row instead (slower: one CTD call per row that writes
no request). ``--engine ray`` runs the same on a local Ray cluster (``pip install 'tpc-langchain[ray]'``).

    python examples/compress_corpus.py [--data /work/shared/data/qa_dev.jsonl] [--sample 0] [--engine ray]

The same from a shell:

    tpc compress-corpus corpus.jsonl corpus_tpc/ --rate 0.3 --task-description "What facts does it state?"
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _example_data import add_data_arguments, load_sample, shorten

TASK = "What facts does this passage state about its subject?"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--engine", choices=("local", "ray"), default="local")
    parser.add_argument("--rate", type=float, default=0.3, help="kept fraction of each row's tokens")
    parser.add_argument("--agnostic", action="store_true", help="no fixed task description: the CTD describes rows")
    parser.add_argument("--workdir", type=Path, default=None, help="where IN and OUT go (default: a temporary dir)")
    args = parser.parse_args(argv)

    import pyarrow.parquet as pq

    from tpc_core.corpus import CorpusSettings, compress_corpus

    sample = load_sample(args.data, args.sample)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tpc_corpus_"))
    source, out = workdir / "corpus.jsonl", workdir / "corpus_tpc"
    with source.open("w", encoding="utf-8") as handle:
        for number, paragraph in enumerate(sample.documents):
            handle.write(json.dumps({"id": f"{sample.id}-{number}", "text": paragraph, "source": sample.source}) + "\n")

    settings = CorpusSettings(model="tpc-mini", rate=args.rate, task_description=None if args.agnostic else TASK)
    report = compress_corpus(source, out, settings, engine=args.engine, num_workers=2 if args.engine == "ray" else 1)
    print(f"{source} -> {out}/: {report.compressed_rows} rows compressed in {report.seconds:.1f} s")

    rows = sorted(pq.read_table(out).to_pylist(), key=lambda row: row["id"])  # or pandas.read_parquet(out)
    before, after = sum(r["origin_tokens"] for r in rows), sum(r["compressed_tokens"] for r in rows)
    print(f"{len(rows)} rows, {before} -> {after} tokens ({after / before:.0%} kept)")
    for row in rows[:3]:
        print(f"\n[{row['id']}] {row['origin_tokens']} -> {row['compressed_tokens']} tokens; task "
              f"({row['task_source']}): {shorten(row['task_description'] or '-', 70)}")
        print(f"  before: {shorten(row['text'])}")
        print(f"  after:  {shorten(row['compressed_text'])}")

    again = compress_corpus(source, out, settings, engine=args.engine)
    print(f"\nsecond run: {again.compressed_rows} rows compressed, {again.skipped_rows} already in {out}/ (resumed)")


if __name__ == "__main__":
    main()
