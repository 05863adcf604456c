"""Structured tool outputs read as records, so that a reduction keeps whole records and the structure stays valid.

Whether a tool result is records (JSON, CSV/TSV, a Markdown table, code) is the one rule of
:mod:`tpc_core.segmentation.records` (:func:`read_records`, re-exported here); this module holds what the
conversation does with them: :data:`WHOLE_RECORD`, the splitter that makes each record one unit of the engine.
"""

from __future__ import annotations

from tpc_core.segmentation import Span
from tpc_core.segmentation.records import Records, read_records

__all__ = ["Records", "WHOLE_RECORD", "read_records"]


class _WholeRecord:
    """A splitter that reads a whole record as one sentence, so the engine keeps it whole or leaves it out."""

    cache_identity = "whole-record-1"

    def spans(self, text: str) -> list[Span]:
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return [(start, end)] if end > start else []


WHOLE_RECORD = _WholeRecord()
"""The splitter the records of a structured text are compressed with: each record is one unit."""
