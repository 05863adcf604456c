"""Structured tool outputs read as records, so that a reduction keeps whole records and the structure stays valid.

A tool result that is, as a whole, one of these is read as a frame and its records (pure functions, no model):

* **JSON** (an array or an object): the records are the array's elements or the object's ``"key": value`` members,
  each its exact text in the input; the frame is the text before the first and after the last, and the separator
  between records is the input's own (``",\\n  "``). Any selection of records is valid JSON again.
* **CSV / TSV** (three lines or more, every line the same number of comma- or tab-separated fields, two or more):
  the header line is the frame, each other line a record.
* **Markdown table** (every line starts with ``|``, the second is the header rule): header and rule are the frame.
* **Code** (one fenced block, or lines that mostly read as code): the records are its blocks between blank lines
  (functions, classes), each kept whole or left out; a fence's opening and closing lines are the frame.

Anything else (prose, or prose around a table) returns ``None``: the sentence splitter reads it line by line, so a
table row or a code line is never cut inside.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tpc_core.segmentation import Span

__all__ = ["Records", "WHOLE_RECORD", "read_records"]

_FENCE = re.compile(r"\A(?P<open>[ \t]*(```|~~~)[^\n]*\n)(?P<body>.*?)(?P<close>\n[ \t]*\2[ \t]*)\Z", re.S)
_CODE_LINE = re.compile(r"^\s*(def |class |import |from \S+ import |return\b|if\b.*[:{]$|for\b.*[:{]$|while\b|"
                        r"#include|function\b|const |let |var |public |private |package |fn |@\w+)|[;{}]\s*$|\):\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_BLOCK_GAP = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*")


@dataclass(frozen=True)
class Records:
    """A structured text as its frame and records.

    Attributes:
        kind: "json", "csv", "table" or "code".
        opening: The frame before the first record (a JSON bracket, a CSV or table header, a fence line).
        records: Each record's exact text in the input, in order.
        separator: What joins two kept records (the input's own separator between its first two records).
        closing: The frame after the last record.
    """

    kind: str
    opening: str
    records: tuple[str, ...]
    separator: str
    closing: str

    def text(self, kept: Sequence[int]) -> str:
        """The structure with only the records ``kept`` (indices, ascending): valid wherever the input was."""
        return self.opening + self.separator.join(self.records[i] for i in kept) + self.closing


class _WholeRecord:
    """A splitter that reads a whole record as one sentence, so the engine keeps it whole or leaves it out."""

    cache_identity = "whole-record-1"

    def spans(self, text: str) -> list[Span]:
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return [(start, end)] if end > start else []


WHOLE_RECORD = _WholeRecord()
"""The splitter the records of a structured text are compressed with: each record is one unit."""


def read_records(text: str) -> Records | None:
    """``text`` as records when it is, as a whole, JSON, CSV/TSV, a Markdown table or code; ``None`` otherwise.
    Code of one block is not read as code (prose that looks like code is left to the sentence splitter)."""
    for reader in (_json_records, _csv_records, _table_records, _code_records):
        records = reader(text)
        if records is not None and records.records and (records.kind != "code" or len(records.records) >= 2):
            return records
    return None


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _json_records(text: str) -> Records | None:
    begin = _skip_space(text, 0)
    if begin >= len(text) or text[begin] not in "[{":
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    decoder = json.JSONDecoder()
    is_object = text[begin] == "{"
    at = _skip_space(text, begin + 1)
    spans: list[tuple[int, int]] = []
    while text[at] not in "]}":
        start = at
        if is_object:
            _, at = decoder.raw_decode(text, at)
            at = _skip_space(text, at) + 1  # the colon
            at = _skip_space(text, at)
        _, at = decoder.raw_decode(text, at)
        spans.append((start, at))
        at = _skip_space(text, at)
        if text[at] == ",":
            at = _skip_space(text, at + 1)
    if not spans:
        return None
    separator = text[spans[0][1]:spans[1][0]] if len(spans) > 1 else ", "
    return Records("json", text[:spans[0][0]], tuple(text[a:b] for a, b in spans), separator, text[spans[-1][1]:])


def _lines(text: str) -> list[str] | None:
    lines = text.strip("\n").split("\n")
    return lines if len(lines) >= 3 and all(line.strip() for line in lines) else None


def _csv_records(text: str) -> Records | None:
    lines = _lines(text)
    if lines is None:
        return None
    for delimiter in (",", "\t"):
        try:
            widths = {len(row) for row in csv.reader(lines, delimiter=delimiter, strict=True)}
        except csv.Error:
            continue
        if len(widths) == 1 and widths.pop() >= 2:
            lead = text[:len(text) - len(text.lstrip("\n"))]
            tail = text[len(text.rstrip("\n")):]
            return Records("csv", lead + lines[0] + "\n", tuple(lines[1:]), "\n", tail)
    return None


def _table_records(text: str) -> Records | None:
    lines = _lines(text)
    if lines is None or not all(line.lstrip().startswith("|") for line in lines) or not _TABLE_RULE.match(lines[1]):
        return None
    lead = text[:len(text) - len(text.lstrip("\n"))]
    tail = text[len(text.rstrip("\n")):]
    return Records("table", lead + lines[0] + "\n" + lines[1] + "\n", tuple(lines[2:]), "\n", tail)


def _code_records(text: str) -> Records | None:
    fenced = _FENCE.match(text.strip("\n"))
    if fenced:
        body = fenced["body"]
        opening = fenced["open"]
        closing = fenced["close"]
    else:
        lines = [line for line in text.split("\n") if line.strip()]
        if len(lines) < 3 or sum(bool(_CODE_LINE.search(line)) for line in lines) < 0.5 * len(lines):
            return None
        body = text
        opening = ""
        closing = ""
    blocks = [block for block in _BLOCK_GAP.split(body) if block.strip()]
    return Records("code", opening, tuple(blocks), "\n\n", closing)
