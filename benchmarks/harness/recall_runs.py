"""What the recall suites over generated prompts share: their command line and the files they write.

``benchmarks.layout_recall`` (fixed layouts) and ``benchmarks.generated_recall`` (the open-ended generator) both
read ``qa_dev`` rows (:func:`data_access.loaders.recall_samples`), compress every prompt prompt-agnostic
with one checkpoint and write ``rows.jsonl``, ``summary.json`` and ``summary.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["recall_parser", "write_recall_run"]


def recall_parser(prog: str, description: str | None, *, splits: Sequence[str],
                  per_row: int) -> argparse.ArgumentParser:
    """``--checkpoint``, ``--split`` (``splits``, the first by default), ``--qa``, ``--per-row``, ``--rate``,
    ``--seed``, ``--limit`` and ``--out``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--checkpoint", default="tpc-mini")
    parser.add_argument("--split", choices=tuple(splits), default=splits[0])
    parser.add_argument("--qa", default=None, help="qa_dev.jsonl (default: $TPC_QA_DEV, else the data root's)")
    parser.add_argument("--per-row", type=int, default=per_row)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--limit", type=int, default=None, help="the first N rows only")
    parser.add_argument("--out", required=True)
    return parser


def write_recall_run(out: str | Path, rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any],
                     markdown: str) -> None:
    """``rows.jsonl``, ``summary.json`` and ``summary.md`` in ``out`` (made if missing); prints the markdown."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (folder / "summary.md").write_text(markdown, encoding="utf-8")
    print(markdown)
