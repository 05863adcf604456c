"""Helpers of the corpus tests: a small real corpus (the bundled Declaration of Independence, one row per
paragraph), reading OUT, running the command."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BUNDLED_TEXT = ROOT / "examples" / "data" / "declaration_of_independence.txt"
BUNDLED_QUESTION = ROOT / "examples" / "data" / "declaration_of_independence.json"
#: A fixed task description: rows are compressed as if it were their question, so no CTD generation runs and
#: outputs do not depend on which rows share a batch (see README, "Compressing a corpus").
TASK = "Which rights does the text name, and which grievances against the King does it list?"


def corpus_rows() -> list[dict]:
    """One row per paragraph of the bundled public-domain text, with an id and a metadata column."""
    paragraphs = [p.strip() for p in BUNDLED_TEXT.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    return [{"id": f"para-{i}", "text": p, "source": "declaration_of_independence"} for i, p in enumerate(paragraphs)]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def read_out(out: Path, key: str = "id") -> list[dict]:
    """OUT's rows, read as a user reads them (one Parquet dataset), in id order."""
    import pyarrow.parquet as pq

    return sorted(pq.read_table(out).to_pylist(), key=lambda row: row[key])


def run_cli(*args: str, timeout: int = 600):
    """``python -m tpc_core ARGS`` from the checkout, as a user runs it."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "tpc_core", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)
