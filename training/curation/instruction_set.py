"""Build the request head's instruction-style records (:mod:`synthesis.instructions`) from train data.

``python -m training.curation.instruction_set --ctd runs/curation/ctd_formats/ctd.jsonl
--out runs/curation/instructions [--seed 13]``

Rows: the NQ and ``qa_dev`` train rows that the CTD set puts in its ``train`` split (so no question of its
held-out families is used), shuffled, then cut in two by row: ``fit`` rows are rendered in the train families
only; ``check`` rows in every family (train and held-out), for choices. Prompts with no request are built from
``summ_train`` documents, the same way. Writes ``records.jsonl`` (``role`` = ``fit`` or ``check``) and
``stats.json``; deterministic for a seed.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data_access.paths import data_file
from synthesis.instructions import (
    HELD_OUT_INSTRUCTION_FAMILIES,
    INSTRUCTION_FAMILIES,
    instruction_records,
    no_request_records,
)
from training.common.jsonl import read_jsonl
from training.curation.format_tasks import load_format_inputs

__all__ = ["TRAIN_FAMILIES", "build_instruction_set", "main", "record_set_parser", "summ_documents", "write_record_set"]

# The first round's train families, dealt over the first rows; the second round's (a true/false statement with no
# question mark, a lead-in sentence before an instruction) over rows after those, so the first round's records
# (and their cached encodings) stay as they were.
FIRST_FAMILIES = ("imperative", "highlight_details", "please_describe", "numbered_true_false", "need_then_ask",
                  "mcq_select")
SECOND_FAMILIES = ("statement_label", "lead_in_instruction")
TRAIN_FAMILIES = FIRST_FAMILIES + SECOND_FAMILIES


def summ_documents(path: str | Path, count: int, seed: int, max_words: int) -> list[tuple[str, str]]:
    """``count`` summ_train documents (the first of each row), clipped to ``max_words`` words."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    rows = [r for r in rows if r.get("split") == "train" and r.get("documents")]
    random.Random(f"{seed}:summ").shuffle(rows)
    return [(str(r["id"]), " ".join(str(r["documents"][0]).split(" ")[:max_words])) for r in rows[:count]]


def build_instruction_set(ctd_path: str, nq_path: str, qa_path: str, summ_path: str, *, seed: int, fit_rows: int,
                          check_rows: int, fit_without: int, check_without: int, second_fit_rows: int = 0,
                          second_check_rows: int = 0, extra_without: int = 0,
                          max_document_words: int = 1500) -> list[dict[str, Any]]:
    """The fit and check records (see the module docstring)."""
    train_ids = {str(r.get("source_id")) for r in read_jsonl(ctd_path) if r.get("split") == "train"}
    held_ids = {str(r.get("source_id")) for r in read_jsonl(ctd_path) if r.get("split") == "validation"}
    inputs = load_format_inputs(nq_path, qa_path)
    rows = [row for row in (*inputs.nq, *inputs.qa) if str(row["id"]) in train_ids - held_ids]
    random.Random(f"{seed}:instruction-rows").shuffle(rows)
    fit = rows[:fit_rows]
    check = rows[fit_rows: fit_rows + check_rows]
    second = rows[fit_rows + check_rows:]
    second_fit = second[:second_fit_rows]
    second_check = second[second_fit_rows: second_fit_rows + second_check_rows]
    documents = summ_documents(summ_path, fit_without + check_without + extra_without, seed, max_document_words)
    first_check_families = tuple(f for f in INSTRUCTION_FAMILIES if f not in SECOND_FAMILIES)
    records = [
        *({**r, "role": "fit"} for r in instruction_records(fit, fit, seed=seed, families=FIRST_FAMILIES,
                                                            prefix="instr-fit")),
        *({**r, "role": "check"} for r in instruction_records(check, check, seed=seed, families=first_check_families,
                                                              prefix="instr-check")),
        *({**r, "role": "fit"} for r in no_request_records(documents[:fit_without], seed=seed, prefix="none-fit")),
        *({**r, "role": "check", "split": "validation"}
          for r in no_request_records(documents[fit_without: fit_without + check_without], seed=seed,
                                      prefix="none-check")),
    ]
    if second_fit:
        records += [{**r, "role": "fit"} for r in instruction_records(second_fit, second_fit, seed=seed,
                                                                      families=SECOND_FAMILIES, prefix="instr-fit2")]
    if second_check:
        records += [{**r, "role": "check"} for r in instruction_records(second_check, second_check, seed=seed,
                                                                        families=SECOND_FAMILIES,
                                                                        prefix="instr-check2")]
    if extra_without:
        records += [{**r, "role": "fit"} for r in no_request_records(documents[-extra_without:], seed=seed,
                                                                     prefix="none-fit2",
                                                                     families=("summary", "label"))]
    return records


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = record_set_parser("python -m training.curation.instruction_set", __doc__, "runs/curation/instructions")
    parser.add_argument("--fit-rows", type=int, default=600)
    parser.add_argument("--check-rows", type=int, default=260)
    parser.add_argument("--fit-without", type=int, default=150)
    parser.add_argument("--check-without", type=int, default=40)
    parser.add_argument("--second-fit-rows", type=int, default=200)
    parser.add_argument("--second-check-rows", type=int, default=48)
    parser.add_argument("--extra-without", type=int, default=150)
    args = parser.parse_args(argv)
    records = build_instruction_set(args.ctd, args.nq, args.qa, args.summ, seed=args.seed, fit_rows=args.fit_rows,
                                    check_rows=args.check_rows, fit_without=args.fit_without,
                                    check_without=args.check_without, second_fit_rows=args.second_fit_rows,
                                    second_check_rows=args.second_check_rows, extra_without=args.extra_without)
    write_record_set(args.out, records, held_out_families=sorted(HELD_OUT_INSTRUCTION_FAMILIES))
    return 0


def record_set_parser(prog: str, description: str | None, out: str) -> argparse.ArgumentParser:
    """The options every record set takes: its inputs (``--ctd``, ``--nq``, ``--qa``, ``--summ``: the data root's
    files by default), ``--out`` and ``--seed``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--ctd", default="runs/curation/ctd_formats/ctd.jsonl")
    parser.add_argument("--nq", default=str(data_file("nq_train.jsonl.gz")))
    parser.add_argument("--qa", default=str(data_file("qa_dev.jsonl")))
    parser.add_argument("--summ", default=str(data_file("summ_train.jsonl.gz")))
    parser.add_argument("--out", default=out)
    parser.add_argument("--seed", type=int, default=13)
    return parser


def write_record_set(out_dir: str | Path, records: Sequence[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """``records.jsonl`` and ``stats.json`` (count, SHA-256 prefix, counts by role and family / shape, ``extra``,
    the command) in ``out_dir``; prints the count and hash, and returns the stats."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    (out / "records.jsonl").write_text(text, encoding="utf-8")
    stats = {"records": len(records), "sha256_16": hashlib.sha256(text.encode("utf-8")).hexdigest()[:16],
             "by_role_family": dict(Counter(f"{r['role']}:{r['family']}" for r in records)),
             "by_role_shape": dict(Counter(f"{r['role']}:{r['shape']}" for r in records)),
             **extra, "command": " ".join(sys.argv)}
    (out / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: stats[k] for k in ("records", "sha256_16")}))
    return stats


if __name__ == "__main__":
    sys.exit(main())
