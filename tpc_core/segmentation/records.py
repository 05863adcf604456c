"""The one "is this a record?" rule: structured text read as a frame and whole records, and the lines that belong to
a record wherever they stand.

:data:`RECORD_KINDS` is the table: each kind of record (:class:`RecordKind`) says how a whole text of its kind is
read (``read``), and which lines belong to a record of its kind inside any text (``fences``: a line that opens and
closes a block; ``row``: a line that is one row). Its readers: the splitters keep a record's lines apart from prose
(:mod:`tpc_core.segmentation.layout`), and a tool result is reduced by whole records
(:mod:`tpc_core.conversation.tool_results`). A new kind of record is one entry (:func:`register_record_kind` adds one
at run time). The kinds, in the order they are tried:

* **JSON** (an array or an object): the records are the array's elements or the object's ``"key": value`` members,
  each its exact text in the input; the frame is the text before the first and after the last, and the separator
  between records is the input's own (``",\\n  "``). Any selection of records is valid JSON again.
* **CSV / TSV** (three lines or more, every line the same number of comma- or tab-separated fields, two or more):
  the header line is the frame, each other line a record.
* **Markdown table** (every line starts with ``|``, the second is the header rule): header and rule are the frame.
  Inside any text, a line that starts with ``|`` or holds two bars is a row.
* **Code** (one fenced block, or lines that mostly read as code): the records are its blocks between blank lines
  (functions, classes), each kept whole or left out; a fence's opening and closing lines are the frame; code of one
  block is not read as code (prose that looks like code is left to the sentence splitter). Inside any text, a line
  that opens with three backticks or tildes opens or closes a block.

Anything else (prose, or prose around a table) reads as no records. Pure functions, no model.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["RECORD_KINDS", "RecordKind", "RecordLines", "Records", "read_records", "record_lines",
           "register_record_kind", "registered_record_kind"]

_CODE_FENCES = ("```", "~~~")
_FENCE = re.compile(rf"\A(?P<open>[ \t]*({'|'.join(map(re.escape, _CODE_FENCES))})[^\n]*\n)(?P<body>.*?)"
                    r"(?P<close>\n[ \t]*\2[ \t]*)\Z", re.S)
_CODE_LINE = re.compile(r"^\s*(def |class |import |from \S+ import |return\b|if\b.*[:{]$|for\b.*[:{]$|while\b|"
                        r"#include|function\b|const |let |var |public |private |package |fn |@\w+)|[;{}]\s*$|\):\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_BLOCK_GAP = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*")


@dataclass(frozen=True)
class Records:
    """A structured text as its frame and records.

    Attributes:
        kind: The :class:`RecordKind`'s name: "json", "csv", "table", "code", or a registered kind's.
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


@dataclass(frozen=True)
class RecordKind:
    """One kind of record.

    Attributes:
        name: Its name (the key of :data:`RECORD_KINDS`, and :attr:`Records.kind`).
        read: A whole text of this kind as its frame and records, ``None`` when the text is not of this kind.
        min_records: The fewest records a text must hold to be read as this kind.
        fences: Inside any text, the strings that open a line which opens or closes a block of this kind (up to
            three spaces before them).
        row: Inside any text, a regular expression (matched at a line's start) for a line that is one row of this
            kind; ``""`` for none.
    """

    name: str
    read: Callable[[str], Records | None]
    min_records: int = 1
    fences: tuple[str, ...] = ()
    row: str = ""


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


_KINDS: dict[str, RecordKind] = {kind.name: kind for kind in (
    RecordKind("json", _json_records),
    RecordKind("csv", _csv_records),
    RecordKind("table", _table_records, row=r"[ \t]*\||(?:[^|]*\|){2}"),
    RecordKind("code", _code_records, min_records=2, fences=_CODE_FENCES),
)}
#: Every kind of record, in the order a text is tried against them (read-only: :func:`register_record_kind` adds
#: one).
RECORD_KINDS: Mapping[str, RecordKind] = MappingProxyType(_KINDS)


def read_records(text: str) -> Records | None:
    """``text`` as records when it is, as a whole, of one of :data:`RECORD_KINDS` (the first that reads it, holding
    at least its kind's ``min_records``); ``None`` otherwise.

    >>> read_records('[{"id": 1}, {"id": 2}]').records
    ('{"id": 1}', '{"id": 2}')
    >>> read_records("Plain prose. Two sentences.") is None
    True
    """
    for kind in RECORD_KINDS.values():
        records = kind.read(text)
        if records is not None and len(records.records) >= max(kind.min_records, 1):
            return records
    return None


@dataclass(frozen=True)
class RecordLines:
    """The line rules of every kind, as one expression each (:func:`record_lines`).

    Attributes:
        fence: A line that opens or closes a block (matched at the line's start).
        row: A line that is a row (matched at the line's start).
    """

    fence: re.Pattern[str]
    row: re.Pattern[str]


def _line_rules(kinds: Mapping[str, RecordKind]) -> RecordLines:
    fences = [re.escape(fence) for kind in kinds.values() for fence in kind.fences]
    rows = [kind.row for kind in kinds.values() if kind.row]
    never = r"(?!)"
    return RecordLines(re.compile(rf"[ \t]{{0,3}}(?:{'|'.join(fences) or never})"),
                       re.compile("|".join(rows) or never))


_LINES = _line_rules(RECORD_KINDS)


def record_lines() -> RecordLines:
    """The line rules of the kinds as they stand (after any registered kind)."""
    return _LINES


def register_record_kind(kind: RecordKind, *, before: str | None = None) -> None:
    """Add a kind of record (or replace the one of its name), tried before the kind named ``before`` (default:
    last); every reader recognises it from now on.

    Raises:
        KeyError: ``before`` names no kind.
        re.error: Its ``row`` does not compile.
    """
    global _LINES
    if kind.row:
        re.compile(kind.row)
    if before is not None and before not in _KINDS:
        raise KeyError(f"No kind of record is named {before!r}; the kinds are {', '.join(_KINDS)}.")
    kinds = [existing for existing in _KINDS.values() if existing.name != kind.name]
    at = next((k for k, existing in enumerate(kinds) if existing.name == before), len(kinds))
    kinds.insert(at, kind)
    _KINDS.clear()
    _KINDS.update((existing.name, existing) for existing in kinds)
    _LINES = _line_rules(RECORD_KINDS)


@contextmanager
def registered_record_kind(kind: RecordKind, *, before: str | None = None) -> Iterator[RecordKind]:
    """``kind`` registered for the ``with`` block only (the kinds as they were come back afterwards)."""
    global _LINES
    saved = dict(_KINDS)
    register_record_kind(kind, before=before)
    try:
        yield kind
    finally:
        _KINDS.clear()
        _KINDS.update(saved)
        _LINES = _line_rules(RECORD_KINDS)
