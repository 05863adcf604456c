"""The one "is this a record?" rule (tpc_core.segmentation.records): a kind of record added as one entry is read by
every reader (a whole tool result read as records, and the splitters keeping its lines apart from prose)."""

from __future__ import annotations

import doctest
import re

import pytest

from tpc_core.segmentation import records, split_sentences
from tpc_core.segmentation.records import RECORD_KINDS, RecordKind, Records, read_records, registered_record_kind

_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ")


def _log_records(text: str) -> Records | None:
    """A log: every line opens with a timestamp; each line a record, nothing around them."""
    lines = text.strip("\n").split("\n")
    if len(lines) < 2 or not all(_STAMP.match(line) for line in lines):
        return None
    return Records("log", "", tuple(lines), "\n", "")


LOG_KIND = RecordKind("log", _log_records, row=r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ")
LOG = ("2024-05-01 12:00:01 INFO the scheduler started the nightly export job for the billing\n"
       "2024-05-01 12:00:07 WARN the export job for the billing database is slow. Retrying\n"
       "2024-05-01 12:00:09 ERROR the export of the billing database failed after retries")


def test_an_unknown_kind_is_prose_to_every_reader() -> None:
    assert "log" not in RECORD_KINDS and read_records(LOG) is None
    pieces = [LOG[start:end] for start, end in split_sentences(LOG)]
    assert pieces != LOG.split("\n")  # wrapped prose: lines joined, a line cut at its full stop


def test_a_kind_registered_as_one_entry_is_read_whole_and_its_lines_stand_apart() -> None:
    with registered_record_kind(LOG_KIND, before="csv"):
        assert list(RECORD_KINDS) == ["json", "log", "csv", "table", "code"]
        read = read_records(LOG)
        assert read is not None and read.kind == "log" and read.records == tuple(LOG.split("\n"))
        assert read.text([0, 2]) == LOG.split("\n")[0] + "\n" + LOG.split("\n")[2]
        assert [LOG[start:end] for start, end in split_sentences(LOG)] == LOG.split("\n")  # each line whole
    assert "log" not in RECORD_KINDS and read_records(LOG) is None


def test_the_table_is_read_only_and_the_built_in_kinds_keep_their_order() -> None:
    assert list(RECORD_KINDS) == ["json", "csv", "table", "code"]
    with pytest.raises(TypeError):
        RECORD_KINDS["log"] = LOG_KIND  # type: ignore[index]
    with pytest.raises(KeyError, match="No kind of record"):
        with registered_record_kind(LOG_KIND, before="yaml"):
            pass  # pragma: no cover
    assert "log" not in RECORD_KINDS


def test_records_doctests() -> None:
    assert doctest.testmod(records, raise_on_error=True).attempted >= 2
