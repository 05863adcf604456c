"""The kinds of ``cache=`` value are one table: a new kind is one class and one row, registered from a module of
its own, and every reader of ``cache=`` (resolve, check, the registry's sharing, the compressor, the adapters)
accepts it with no other file edited."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from tests.golden_cases import TEXT
from tpc_core.cache import CACHE_KINDS, CacheKind, CacheRegistry, SecretURL, check_cache_spec, resolve_cache
from tpc_core.cache import kinds as kinds_module
from tpc_core.cache.kinds import cache_kind, register_cache_kind

SHELF_MODULE = '''
"""A store of a new kind: a 'shelf://NAME' URL names a dict shared in this process."""
from tpc_core.cache import CacheKind, SentenceCache, register_cache_kind

SHELVES = {}
BUILT = []


class ShelfCache(SentenceCache):
    def __init__(self, name):
        super().__init__()
        self.shelf = SHELVES.setdefault(name, {})
        BUILT.append(name)

    def fetch(self, keys):
        return [self.shelf.get(key) for key in keys]

    def store(self, items):
        self.shelf.update(items)


def check(spec):
    if not spec[len("shelf://"):]:
        raise ValueError("a shelf:// URL names its shelf")


register_cache_kind(CacheKind(
    "shelf", "a shelf:// URL", lambda spec: isinstance(spec, str) and spec.startswith("shelf://"),
    lambda spec: ShelfCache(spec[len("shelf://"):]), check=check, key=lambda spec: spec, shown=repr))
'''


@pytest.fixture
def shelf(tmp_path, monkeypatch):
    """The module above, written to a temporary folder and imported: it registers its kind (the table is restored
    after the test)."""
    monkeypatch.setattr(kinds_module, "CACHE_KINDS", list(CACHE_KINDS))
    path = tmp_path / "shelf_cache.py"
    path.write_text(textwrap.dedent(SHELF_MODULE), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("shelf_cache", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "shelf_cache", module)
    spec.loader.exec_module(module)
    return module


def test_a_kind_registered_from_its_own_module_is_resolved_checked_and_shared(shelf, tmp_path):
    assert cache_kind("shelf://a").name == "shelf"
    check_cache_spec("shelf://a")  # checking builds nothing
    assert shelf.BUILT == []
    with pytest.raises(ValueError, match="names its shelf"):
        check_cache_spec("shelf://")
    assert isinstance(resolve_cache("shelf://a"), shelf.ShelfCache)
    registry = CacheRegistry()
    assert registry.resolve("shelf://b") is registry.resolve("shelf://b")
    assert registry.resolve("shelf://b") is not registry.resolve("shelf://c")
    assert shelf.BUILT == ["a", "b", "c"]
    # a directory is still a directory, and an unknown kind's message names the new one
    assert type(resolve_cache(tmp_path / "d")).__name__ == "DirectoryCache"
    with pytest.raises(TypeError, match="a shelf:// URL"):
        check_cache_spec(5)


def test_the_compressor_and_the_adapters_accept_a_registered_kind(shelf, tpc_mini):
    from tpc_integrations.langchain import TPCDocumentCompressor

    question = "When was the tower finished?"
    first = tpc_mini.compress(TEXT, question=question, rate=0.3, cache="shelf://calls")
    again = tpc_mini.compress(TEXT, question=question, rate=0.3, cache="shelf://calls")
    assert (first.cache_misses, again.cache_hits) == (1, 1)
    assert again.compressed_prompt == first.compressed_prompt
    assert shelf.SHELVES["calls"] and tpc_mini.cache_info("shelf://calls").hits == 1
    assert TPCDocumentCompressor(compressor=tpc_mini, cache="shelf://calls").cache == "shelf://calls"
    with pytest.raises(ValueError, match="names its shelf"):
        TPCDocumentCompressor(compressor=tpc_mini, cache="shelf://")


def test_a_kind_is_registered_once_and_before_a_row_that_exists(monkeypatch):
    monkeypatch.setattr(kinds_module, "CACHE_KINDS", list(CACHE_KINDS))
    row = CacheKind("odd", "an odd number", lambda spec: isinstance(spec, int) and spec % 2 == 1, lambda spec: None)
    with pytest.raises(ValueError, match="No cache kind is named 'nowhere'"):
        register_cache_kind(row, before="nowhere")
    register_cache_kind(row)
    with pytest.raises(ValueError, match="registered already"):
        register_cache_kind(row)
    assert [kind.name for kind in kinds_module.CACHE_KINDS].index("odd") == \
        [kind.name for kind in kinds_module.CACHE_KINDS].index("directory") - 1


@pytest.mark.parametrize("value, name", [(None, "none"), ("memory", "memory"), ("./folder/", "directory"),
                                         ("redis://h:6379/0", "redis URL"), (SecretURL("redis://:pw@h/0"), "redis URL"),
                                         ("Memory", "directory")])
def test_each_value_is_of_one_row(value, name):
    assert cache_kind(value).name == name


def test_every_row_shows_a_value_without_its_password():
    for value in ("redis://:s3cret@h:6379/0", SecretURL("redis://:s3cret@h:6379/0")):
        assert "s3cret" not in cache_kind(value).shown(value)
    secret = SecretURL("rediss://u:s3cret@h/0")
    assert cache_kind(secret).key is not None and "s3cret" not in repr(cache_kind(secret).shown(secret))


def test_the_cache_arrives_once_as_the_option_and_the_engine_resolves_it_through_the_facade(tpc_mini):
    import dataclasses

    from tpc_core.cache import MemoryCache
    from tpc_core.engine.options import CompressionOptions

    engine, counter, own = tpc_mini.engine, tpc_mini.token_counter, MemoryCache()
    options = CompressionOptions.build(rate=0.3, cache=own)
    assert tpc_mini._cache_store("memory").cache is tpc_mini._cache_store("memory").cache  # one cache per value
    first = engine.compress([(TEXT,)], ["When was it finished?"], counter, options)[0]
    again = engine.compress([(TEXT,)], ["When was it finished?"], counter, options)[0]
    assert (first.cache_misses, again.cache_hits) == (1, 1)
    assert tpc_mini._cache_store(own).cache is own and tpc_mini._cache_store(None) is None
    bare = dataclasses.replace(engine, cache_stores=None)
    with pytest.raises(ValueError, match="no cache_stores"):  # never silently uncached
        bare.compress([(TEXT,)], ["When was it finished?"], counter, options)


def test_the_readme_shows_the_table_of_kinds():
    readme = (Path(__file__).resolve().parents[3] / "docs" / "caching-and-scale.md").read_text(encoding="utf-8")
    rows = ["| `cache=` kind (tried in this order) | what it takes |", "| --- | --- |",
            *(f"| {kind.name} | {kind.accepts} |" for kind in CACHE_KINDS)]
    assert "\n".join(rows) + "\n" in readme, \
        "docs/caching-and-scale.md's table of cache= kinds differs from CACHE_KINDS:\n" + "\n".join(rows)
