"""Structured tool outputs read as records, so that a reduction keeps whole records and the structure stays valid.

Whether a text is records (JSON, CSV/TSV, a Markdown table, code) is the one rule of
:mod:`tpc_core.segmentation.records` (:func:`read_records`, re-exported here); this module holds the splitters that
make records units of the engine, so that the one budget loop keeps a record whole or leaves it out:

* :data:`WHOLE_RECORD`: for a tool result that is records as a whole, each record one unit;
* :class:`RecordsInProse`: for a tool result of prose with records inside it, each record block
  (:func:`record_blocks`: a fenced block, a Markdown table, a paragraph that is JSON or CSV) one unit, the prose
  around them split into sentences as usual.

Pure: no model.
"""

from __future__ import annotations

import re

from tpc_core.cache.fingerprint import splitter_identity
from tpc_core.segmentation import SentenceSplitter, Span
from tpc_core.segmentation.records import RECORD_KINDS, Records, read_records, record_lines

__all__ = ["WHOLE_RECORD", "Records", "RecordsInProse", "read_records", "record_blocks"]

_LINE = re.compile(r"[^\n]*")


class _WholeRecord:
    """A splitter that reads a whole record as one sentence, so the engine keeps it whole or leaves it out."""

    cache_identity = "whole-record-1"

    def spans(self, text: str) -> list[Span]:
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return [(start, end)] if end > start else []


WHOLE_RECORD = _WholeRecord()
"""The splitter the records of a structured text are compressed with: each record is one unit."""


def _tight(text: str, start: int, end: int) -> Span:
    """``(start, end)`` without the whitespace at either end."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _lines(text: str) -> list[Span]:
    """Every line of ``text`` (split at ``"\\n"``), blank ones included, as spans without the line break."""
    return [match.span() for match in _LINE.finditer(text) if match.start() == 0 or text[match.start() - 1] == "\n"]


def _paragraph_blocks(text: str, paragraph: list[Span]) -> list[Span]:
    """The record blocks of one paragraph (lines with no blank line between them, no fence among them): the whole
    paragraph when it reads as records, else each run of two or more rows that reads as records (a table)."""
    if not paragraph:
        return []
    whole = (paragraph[0][0], paragraph[-1][1])
    if read_records(text[whole[0]:whole[1]]) is not None:
        return [whole]
    row = record_lines().row
    blocks: list[Span] = []
    run: list[Span] = []
    for line in [*paragraph, None]:
        if line is not None and row.match(text[line[0]:line[1]]):
            run.append(line)
            continue
        if len(run) >= 2 and read_records(text[run[0][0]:run[-1][1]]) is not None:
            blocks.append((run[0][0], run[-1][1]))
        run = []
    return blocks


def record_blocks(text: str) -> list[Span]:
    """The records inside a text of prose, each one block, in order: a fenced block (its opening line to the next
    fence line, both included), a paragraph that reads as records as a whole (JSON, CSV, a table:
    :func:`read_records`), a run of two or more rows inside a paragraph that reads as records (a Markdown table
    between lines of prose). Tight spans (no whitespace at either end), sorted, not overlapping.

    >>> text = "The totals:\\n| city | n |\\n|---|---|\\n| Lyon | 3 |\\nThat is all."
    >>> [text[start:end] for start, end in record_blocks(text)]
    ['| city | n |\\n|---|---|\\n| Lyon | 3 |']
    """
    fence = record_lines().fence
    lines = _lines(text)
    blocks: list[Span] = []
    paragraph: list[Span] = []
    k = 0
    while k < len(lines):
        start, end = lines[k]
        line = text[start:end]
        if fence.match(line):
            close = next((j for j in range(k + 1, len(lines)) if _closes(line, text[lines[j][0]:lines[j][1]], fence)),
                         None)
            if close is not None:
                blocks += _paragraph_blocks(text, paragraph)
                paragraph = []
                blocks.append((start, lines[close][1]))
                k = close + 1
                continue
        if line.strip():
            paragraph.append((start, end))
        else:
            blocks += _paragraph_blocks(text, paragraph)
            paragraph = []
        k += 1
    blocks += _paragraph_blocks(text, paragraph)
    return [_tight(text, start, end) for start, end in blocks]


def _closes(opener: str, line: str, fence: re.Pattern[str]) -> bool:
    """Whether ``line`` closes the block ``opener`` opens: for a backtick or tilde fence, CommonMark's rule (the same
    character, at least as many, nothing after them); for another fence of the table, any fence line."""
    run = _fence_run(opener)
    if not run:
        return fence.match(line) is not None
    closing = _fence_run(line)
    return closing[:1] == run[:1] and len(closing) >= len(run) and not line.strip()[len(closing):].strip()


def _fence_run(line: str) -> str:
    """The run of backticks or tildes (three or more) a line opens with, after up to three spaces; ``""`` for none."""
    body = line.lstrip(" ")
    if len(line) - len(body) > 3 or body[:1] not in ("`", "~"):
        return ""
    run = body[:len(body) - len(body.lstrip(body[0]))]
    return run if len(run) >= 3 else ""


class RecordsInProse:
    """A splitter for prose with records inside it: each record block (:func:`record_blocks`) one sentence, the
    prose between them split by ``prose``, so that the engine keeps a block whole or leaves it out.

    A built-in ``prose`` splitter's length cap applies to the prose, not to a block.

    Args:
        prose: The splitter of the prose around the blocks (the caller's, or the checkpoint's own).
    """

    def __init__(self, prose: SentenceSplitter) -> None:
        self.prose = prose
        identity = splitter_identity(prose)  # what a sentence cache knows it by (None: never cached)
        self.cache_identity = None if identity is None else f"records-in-prose-1/{','.join(RECORD_KINDS)}/{identity}"

    def spans(self, text: str) -> list[Span]:
        """Each record block's span, and the prose splitter's spans between them, in order."""
        spans: list[Span] = []
        position = 0
        for start, end in [*record_blocks(text), (len(text), len(text))]:
            spans += [(position + left, position + right) for left, right in self.prose.spans(text[position:start])]
            if end > start:
                spans.append((start, end))
            position = end
        return spans
