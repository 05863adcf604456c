"""The passages of a QA row's context, and passages written back as one context.

An NQ context is blank-line separated ``Document [k] (Title: T) text`` blocks; a HotpotQA context is blank-line
separated paragraphs, each a title line and its text. Both the request-found dev check (which fills its prompt
families with ``qa_dev`` dev rows, :mod:`synthesis.instructions`) and the training data curation read them so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PASSAGE_STYLES", "Passage", "format_passages", "hotpot_paragraphs", "nq_passages"]

PASSAGE_STYLES: tuple[str, ...] = ("document", "passage", "titled", "numbered")

_NQ_PASSAGE = re.compile(r"^Document \[\d+\] \(Title: ")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Passage:
    """A titled Wikipedia passage or HotpotQA paragraph."""

    title: str
    text: str


def nq_passages(row: Mapping[str, Any]) -> list[Passage]:
    """The ``Document [k] (Title: T) text`` passages of an NQ context; empty for other contexts."""
    passages = []
    for block in (b.strip() for b in _BLANK_LINE.split(str(row["context"])) if b.strip()):
        match = _NQ_PASSAGE.match(block)
        if match is None:
            return []
        passages.append(_split_title(block[match.end() :]))
    return passages


def hotpot_paragraphs(context: str) -> list[Passage]:
    """The paragraphs of a HotpotQA context: a title line and its text (a block without a title line has ``""``)."""
    blocks = [b.strip() for b in _BLANK_LINE.split(context) if b.strip()]
    return [Passage(*b.split("\n", 1)) if "\n" in b else Passage("", b) for b in blocks]


def format_passages(passages: Sequence[Passage], style: str) -> str:
    """Passages numbered from 1, blank-line separated, in ``style`` (one of :data:`PASSAGE_STYLES`)."""
    writers = {
        "document": lambda k, p: f"Document [{k}] (Title: {p.title}) {p.text}",
        "passage": lambda k, p: f"Passage {k}:\n{p.text}",
        "titled": lambda k, p: f"{p.title}\n{p.text}",
        "numbered": lambda k, p: f"Document {k}: {p.title}\n{p.text}",
    }
    if style not in writers:
        raise ValueError(f"unknown passage style {style!r}; expected one of {sorted(writers)}")
    return "\n\n".join(writers[style](k, p) for k, p in enumerate(passages, 1))


def _split_title(block: str) -> Passage:
    """``T) text`` -> Passage(T, text); ``T`` may hold balanced parentheses, e.g. ``Kelly Taylor (90210)``."""
    depth = 0
    for index, char in enumerate(block):
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return Passage(block[:index], block[index + 1 :].strip())
            depth -= 1
    raise ValueError(f"unterminated passage title in {block[:80]!r}")
