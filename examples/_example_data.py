"""Example input: one real QA sample from the dev data, or the bundled public-domain text when it is missing.

Shared by the examples (not part of the package). A sample's context is split into documents on blank lines,
which is how its paragraphs were joined.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa_dev.jsonl"
BUNDLED_TEXT = Path(__file__).parent / "data" / "declaration_of_independence.txt"
BUNDLED_QUESTION = Path(__file__).parent / "data" / "declaration_of_independence.json"


@dataclass(frozen=True)
class Sample:
    """A question and the documents it is asked about."""

    id: str
    source: str
    question: str
    answers: list[str]
    documents: list[str]


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """``--data`` and ``--sample`` options shared by the examples."""
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"QA jsonl file (default {DEFAULT_DATA}; the bundled text is used when it is missing)")
    parser.add_argument("--sample", type=int, default=0, help="index among the file's dev samples")


def split_documents(context: str) -> list[str]:
    """Paragraphs of ``context`` (separated by blank lines), empty ones left out."""
    return [paragraph.strip() for paragraph in context.split("\n\n") if paragraph.strip()]


def load_sample(data: Path, index: int = 0) -> Sample:
    """The ``index``-th dev sample of ``data``, or the bundled text with its question when ``data`` is missing."""
    if not data.is_file():
        print(f"[{data} not found: using the bundled public-domain text {BUNDLED_TEXT.name}]", file=sys.stderr)
        meta = json.loads(BUNDLED_QUESTION.read_text(encoding="utf-8"))
        return Sample(meta["id"], meta["source"], meta["question"], meta["answers"],
                      split_documents(BUNDLED_TEXT.read_text(encoding="utf-8")))
    with data.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    dev = [row for row in rows if row.get("split", "dev") == "dev"] or rows
    row = dev[index % len(dev)]
    return Sample(row["id"], row.get("source", ""), row["question"], list(row.get("answers", [])),
                  split_documents(row["context"]))


def answer_found(answers: list[str], text: str) -> bool:
    """Whether any reference answer appears (case-insensitively) in ``text``."""
    lowered = text.lower()
    return any(answer.lower() in lowered for answer in answers if answer)


def token_counter(compressor: object) -> Callable[[str], int]:
    """Counts tokens the way ``compressor`` budgets them by default (its CSE tokenizer)."""
    from tpc_core.engine.tokens import resolve_token_counter

    return resolve_token_counter(None, compressor.encoder.tokenizer)  # type: ignore[attr-defined]


def shorten(text: str, width: int = 110) -> str:
    """One line of at most ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
