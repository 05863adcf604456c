"""Cache leftovers: DirectoryCache's size bound (least recently used out, by last use) and the temporary
files a crashed writer leaves; a mistyped cache= string refused without creating anything."""

from __future__ import annotations

import os
import time

import pytest

from tpc_core.cache import DirectoryCache, resolve_cache
from tpc_core.cache.stores import STALE_TEMPORARY_SECONDS


def _fill(cache: DirectoryCache, keys: list[str], size: int) -> None:
    cache.store([(key, bytes(size)) for key in keys])


def test_a_directory_cache_keeps_at_most_max_bytes_dropping_the_least_recently_used(tmp_path):
    cache = DirectoryCache(tmp_path / "c", max_bytes=3000)
    for k, key in enumerate(["tpc-aa01", "tpc-aa02", "tpc-aa03"]):
        _fill(cache, [key], 1000)
        os.utime(cache.directory / key[-2:] / f"{key}.tpcs", (1000 + k, 1000 + k))  # written in this order
    cache.fetch(["tpc-aa01"])  # a read is a use: aa01 is now the most recent
    _fill(cache, ["tpc-aa04"], 1000)
    assert cache.fetch(["tpc-aa01", "tpc-aa02", "tpc-aa03", "tpc-aa04"])[1] is None  # aa02 went
    assert all(value is not None for k, value in enumerate(cache.fetch(["tpc-aa01", "tpc-aa03", "tpc-aa04"])))
    assert cache.held() == (3, 3000) and cache.info().evictions == 1
    with pytest.raises(ValueError, match="positive"):
        DirectoryCache(tmp_path / "d", max_bytes=0)


def test_temporary_files_a_crash_left_are_removed_when_the_cache_opens(tmp_path):
    cache = DirectoryCache(tmp_path / "c")
    _fill(cache, ["tpc-bb01"], 10)
    folder = cache.directory / "01"
    stale, fresh = folder / ".tmp-crashed.tpcs", folder / ".tmp-writing.tpcs"
    stale.write_bytes(b"half an entry")
    fresh.write_bytes(b"a write under way")
    old = time.time() - STALE_TEMPORARY_SECONDS - 10
    os.utime(stale, (old, old))
    reopened = DirectoryCache(tmp_path / "c")
    assert reopened.removed_temporaries == 1 and not stale.exists() and fresh.exists()
    assert reopened.fetch(["tpc-bb01"]) == [bytes(10)]


@pytest.mark.parametrize("typo", ["Memory", "memory ", "mem", "cache"])
def test_a_string_that_is_not_a_path_is_refused_and_nothing_is_created(tmp_path, monkeypatch, typo):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="neither 'memory' nor a directory path"):
        resolve_cache(typo)
    assert os.listdir(tmp_path) == []
    (tmp_path / "existing").mkdir()
    assert isinstance(resolve_cache("existing"), DirectoryCache) and isinstance(resolve_cache("new/"), DirectoryCache)
