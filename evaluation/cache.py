"""A small on-disk JSON cache (sqlite) for per-sample compression results and reader answers.

Keys are SHA-256 hashes of the JSON of everything that determines the value (method identity, sample,
budget; reader id, prompt, generation parameters), so reruns are cheap and an interrupted run resumes where
it stopped: each value is committed as soon as it is computed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["JsonCache", "cache_key"]


def cache_key(*parts: Any) -> str:
    """Stable hash of JSON-serialisable parts."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class JsonCache:
    """``get``/``put`` JSON values by key in namespaces (``compress``, ``answer``); ``path=None`` keeps nothing."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._connection: sqlite3.Connection | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connection = sqlite3.connect(self.path, timeout=120)  # several runs may share one cache
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS entries "
                "(namespace TEXT, key TEXT, value TEXT, PRIMARY KEY (namespace, key))"
            )
            self._connection.commit()
        self.hits = 0
        self.misses = 0

    def get(self, namespace: str, key: str) -> Any | None:
        if self._connection is None:
            self.misses += 1
            return None
        row = self._connection.execute(
            "SELECT value FROM entries WHERE namespace = ? AND key = ?", (namespace, key)
        ).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, namespace: str, key: str, value: Any) -> None:
        if self._connection is None:
            return
        self._connection.execute(
            "INSERT OR REPLACE INTO entries (namespace, key, value) VALUES (?, ?, ?)",
            (namespace, key, json.dumps(value, ensure_ascii=False)),
        )
        self._connection.commit()

    def count(self, namespace: str) -> int:
        if self._connection is None:
            return 0
        return self._connection.execute("SELECT COUNT(*) FROM entries WHERE namespace = ?", (namespace,)).fetchone()[0]

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
