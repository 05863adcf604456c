"""JSON Lines helpers that survive interruption: appends are flushed per record, a torn last line is dropped."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["JsonlAppender", "read_jsonl", "repair_jsonl"]


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of ``path`` (plain or ``.gz``), one per non-empty line.

    Raises:
        ValueError: A line is not a JSON object; the message gives the file and line number.
    """
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid JSON ({error})") from error
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
            yield record


def repair_jsonl(path: str | Path) -> int:
    """Cut a trailing partial line left by a killed writer; returns the number of bytes removed."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with open(path, "rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        handle.truncate(keep)
        return len(data) - keep


class JsonlAppender:
    """Append JSON objects to a file, flushing after every write so a crash loses at most one line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_jsonl(self.path)
        self._handle = open(self.path, "a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()

    def write_many(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()

    def sync(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
