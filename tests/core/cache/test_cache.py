"""The sentence cache without a model: the entry format and its checks, the stores (memory, directory, the real
LangChain and LlamaIndex stores), ``cache=`` values, damaged and failing stores, and the memory bound."""

from __future__ import annotations

import hashlib
import struct
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.notice_helpers import logged_only
from tpc_core.cache import (
    ByteStoreCache,
    CacheInfo,
    CacheRegistry,
    DamagedEntry,
    DirectoryCache,
    Entry,
    KeyValueCache,
    MemoryCache,
    decode_entry,
    encode_entry,
    entry_key,
    fingerprint,
    resolve_cache,
    splitter_identity,
)
from tpc_core.segmentation import get_splitter

FINGERPRINT = bytes(range(16))
OTHER = bytes(range(1, 17))


def make_entry(sentences: int = 5, dim: int = 8, seed: int = 0, fp: bytes = FINGERPRINT) -> Entry:
    generator = torch.Generator().manual_seed(seed)
    spans = tuple((10 * i + 1, 10 * i + 9) for i in range(sentences))
    vectors = torch.nn.functional.normalize(torch.randn(sentences, dim, generator=generator), dim=-1)
    return Entry(spans, tuple(range(3, 3 + sentences)), 4 * sentences, vectors, 10 * sentences + 3, fp)


# ---------------------------------------------------------------------------------------------- the format
@pytest.mark.parametrize("dtype", ["fp32", "fp16", "int8"])
def test_an_entry_round_trips(dtype):
    entry = make_entry(sentences=7, dim=384)
    back = decode_entry(encode_entry(entry, dtype), FINGERPRINT)
    assert (back.spans, back.counts, back.document_tokens, back.text_length, back.fingerprint) == \
        (entry.spans, entry.counts, entry.document_tokens, entry.text_length, entry.fingerprint)
    if dtype == "fp32":
        assert torch.equal(back.embeddings, entry.embeddings)  # exact, bit for bit
    else:
        assert torch.allclose(back.embeddings, entry.embeddings, atol={"fp16": 1e-3, "int8": 1e-2}[dtype])
        assert torch.allclose(back.embeddings.norm(dim=1), torch.ones(7), atol=1e-5)  # unit rows again


def test_the_format_is_the_documented_one():
    entry = make_entry(sentences=3, dim=4)
    data = encode_entry(entry, "fp32")
    magic, version, dtype, width, _, fp, n, d, tokens, length = struct.unpack_from("<4sBBBB16sIHII", data)
    assert (magic, version, dtype, width, fp, n, d, tokens, length) == (b"TPCS", 1, 0, 2, FINGERPRINT, 3, 4, 12, 33)
    assert len(data) == 38 + 3 * 3 * 2 + 3 * 4 * 4 + 16
    assert data[-16:] == hashlib.blake2b(data[:-16], digest_size=16).digest()
    assert b"pickle" not in data and not data.startswith(b"\x80")  # data, never a pickle


def test_int8_costs_under_400_bytes_a_minilm_sentence():
    entry = make_entry(sentences=20, dim=384)
    assert len(encode_entry(entry, "int8")) / 20 < 400
    assert len(encode_entry(entry, "fp32")) / 20 > 1536


def test_long_documents_use_wide_integers():
    spans = ((0, 70_000), (70_001, 140_002))
    entry = Entry(spans, (1, 2), 3, torch.zeros(2, 4), 140_002, FINGERPRINT)
    assert decode_entry(encode_entry(entry, "fp32")).spans == spans


def damaged_forms(data: bytes) -> dict[str, object]:
    flipped = bytearray(data)
    flipped[60] ^= 0x01
    resealed = bytearray(data[:-16])
    resealed[0:4] = b"XXXX"
    return {"truncated": data[:-5], "empty": b"", "checksum": bytes(flipped),
            "magic": bytes(resealed) + hashlib.blake2b(bytes(resealed), digest_size=16).digest(),
            "a string": data.decode("latin-1"), "a dict": {"entry": data}, "an int": 7,
            "extra bytes": data[:-16] + b"\0" + hashlib.blake2b(data[:-16] + b"\0", digest_size=16).digest()}


DAMAGE_FORMS = ["truncated", "empty", "checksum", "magic", "a string", "a dict", "an int", "extra bytes"]


@pytest.mark.parametrize("form", DAMAGE_FORMS)
def test_a_damaged_value_is_never_trusted(form):
    value = damaged_forms(encode_entry(make_entry(), "int8"))[form]
    with pytest.raises(DamagedEntry):
        decode_entry(value, FINGERPRINT)


def test_a_foreign_fingerprint_is_refused():
    data = encode_entry(make_entry(fp=OTHER), "fp32")
    assert decode_entry(data).fingerprint == OTHER
    with pytest.raises(DamagedEntry, match="fingerprint"):
        decode_entry(data, FINGERPRINT)


def test_non_finite_embeddings_are_refused():
    entry = make_entry()
    broken = Entry(entry.spans, entry.counts, entry.document_tokens, torch.full_like(entry.embeddings, float("nan")),
                   entry.text_length, FINGERPRINT)
    with pytest.raises(DamagedEntry, match="finite"):
        decode_entry(encode_entry(broken, "fp32"), FINGERPRINT)


# ---------------------------------------------------------------------------------------------- keys
def test_the_key_depends_on_text_and_fingerprint_and_is_a_safe_name():
    one = fingerprint({"model": "a"}, splitter_identity(get_splitter("nupunkt")), "int8")
    assert len(one) == 16
    assert one != fingerprint({"model": "a"}, splitter_identity(get_splitter("regex")), "int8")
    assert one != fingerprint({"model": "a"}, splitter_identity(get_splitter("nupunkt")), "fp32")
    assert one != fingerprint({"model": "b"}, splitter_identity(get_splitter("nupunkt")), "int8")
    assert one != fingerprint({"model": "a"}, splitter_identity(get_splitter("nupunkt", max_sentence_chars=99)), "int8")
    # entries cut under older splitting rules are never reused (a splitter revision moves where chat markers are cut)
    import importlib

    fingerprint_module = importlib.import_module("tpc_core.cache.fingerprint")  # the package shadows it by a function

    current = splitter_identity(get_splitter("nupunkt"))
    fingerprint_module.SPLIT_RULES_REVISION -= 1
    try:
        assert splitter_identity(get_splitter("nupunkt")) != current
    finally:
        fingerprint_module.SPLIT_RULES_REVISION += 1
    key = entry_key(one, "Some text.")
    assert key.startswith("tpc-") and len(key) == 44 and key == entry_key(one, "Some text.")
    assert key != entry_key(one, "Some text!") and key != entry_key(OTHER, "Some text.")


def test_a_custom_splitter_is_cached_only_when_it_names_itself():
    class Lines:
        def spans(self, text):
            return []

    class Named(Lines):
        cache_identity = "lines-v1"

    assert splitter_identity(Lines()) is None
    assert "lines-v1" in splitter_identity(Named())


# ---------------------------------------------------------------------------------------------- stores
def real_stores(tmp_path):
    from langchain_classic.storage import LocalFileStore
    from langchain_core.stores import InMemoryByteStore
    from llama_index.core.storage.kvstore import SimpleKVStore

    return {"memory": MemoryCache(dtype="fp32"), "directory": DirectoryCache(tmp_path / "cache", dtype="fp32"),
            "InMemoryByteStore": ByteStoreCache(InMemoryByteStore(), dtype="fp32"),
            "LocalFileStore": ByteStoreCache(LocalFileStore(str(tmp_path / "lc")), dtype="fp32"),
            "SimpleKVStore": KeyValueCache(SimpleKVStore(), dtype="fp32")}


@pytest.mark.parametrize("name", ["memory", "directory", "InMemoryByteStore", "LocalFileStore", "SimpleKVStore"])
def test_every_store_keeps_entries_and_counts(tmp_path, name):
    cache = real_stores(tmp_path)[name]
    keys = [entry_key(FINGERPRINT, f"text {i}") for i in range(3)]
    assert cache.get_many(keys, fingerprint=FINGERPRINT) == [None] * 3
    assert cache.put_many([(keys[0], make_entry(seed=0)), (keys[2], make_entry(seed=2))]) == 2
    found = cache.get_many(keys, fingerprint=FINGERPRINT)
    assert found[1] is None
    assert torch.equal(found[0].embeddings, make_entry(seed=0).embeddings)
    assert torch.equal(found[2].embeddings, make_entry(seed=2).embeddings)
    info = cache.info()
    assert (info.hits, info.misses, info.entries, info.errors) == (2, 4, 2, 0)
    assert info.bytes == 2 * len(encode_entry(make_entry(), "fp32"))
    cache.clear()
    assert cache.get_many(keys, fingerprint=FINGERPRINT) == [None] * 3
    assert cache.info().hits == 0


@pytest.mark.parametrize("name", ["memory", "directory", "InMemoryByteStore", "LocalFileStore", "SimpleKVStore"])
def test_damaged_values_in_every_store_read_as_misses_and_are_logged(tmp_path, name, caplog):
    cache = real_stores(tmp_path)[name]
    key = entry_key(FINGERPRINT, "text")
    cache.put_many([(key, make_entry())])
    raw = encode_entry(make_entry(), "fp32")
    for form, value in damaged_forms(raw).items():
        if name in ("memory", "directory", "LocalFileStore") and not isinstance(value, bytes):
            continue  # these hold bytes only
        if name == "SimpleKVStore":
            cache.backend.put(key, value if isinstance(value, dict) else {"tpc_sentence_entry": value},
                              collection=cache.collection)
        elif name == "InMemoryByteStore":
            cache.backend.mset([(key, value)])
        else:
            cache.store([(key, value)])
        with caplog.at_level("WARNING", logger="tpc_core.cache.stores"):
            assert cache.get_many([key], fingerprint=FINGERPRINT) == [None], form
        assert "damaged" in caplog.text
        cache.put_many([(key, make_entry())])  # overwritten: sound again
        assert cache.get_many([key], fingerprint=FINGERPRINT)[0] is not None
    assert cache.info().errors >= 4


class FailingStore:
    """A LangChain-like store that is down."""

    def mget(self, keys):
        raise ConnectionError("store is down")

    def mset(self, items):
        raise ConnectionError("store is down")


def test_a_failing_store_reads_as_misses_and_is_logged_once(caplog):
    cache = resolve_cache(FailingStore())
    key = entry_key(FINGERPRINT, "text")
    with logged_only(caplog, "failed", count=1):
        assert cache.get_many([key]) == [None]
        assert cache.put_many([(key, make_entry())]) == 0
        assert cache.get_many([key, key]) == [None, None]
    assert cache.info() == CacheInfo(hits=0, misses=3, bytes=0, evictions=0, entries=0, errors=3)


# ---------------------------------------------------------------------------------------------- cache= values
def test_cache_values_resolve_to_their_kinds(tmp_path):
    from langchain_core.stores import InMemoryByteStore
    from llama_index.core.storage.kvstore import SimpleKVStore

    assert resolve_cache(None) is None
    assert isinstance(resolve_cache("memory"), MemoryCache)
    assert isinstance(resolve_cache(str(tmp_path / "a")), DirectoryCache)
    assert isinstance(resolve_cache(tmp_path / "b"), DirectoryCache)
    assert isinstance(resolve_cache(InMemoryByteStore()), ByteStoreCache)
    assert isinstance(resolve_cache(SimpleKVStore()), KeyValueCache)
    mine = MemoryCache(max_bytes=10)
    assert resolve_cache(mine) is mine


@pytest.mark.parametrize("value", [42, True, 1.5, b"memory", ["memory"], object()])
def test_an_unsupported_cache_is_a_type_error_naming_the_accepted_kinds(value):
    with pytest.raises(TypeError, match="'memory'.*directory path.*SentenceCache.*LangChain.*LlamaIndex"):
        resolve_cache(value)


@pytest.mark.parametrize("limit", [0, -1])
def test_a_byte_limit_of_zero_or_less_is_a_value_error(limit):
    with pytest.raises(ValueError, match="max_bytes"):
        MemoryCache(max_bytes=limit)


def test_an_unknown_storage_dtype_is_a_value_error():
    with pytest.raises(ValueError, match="dtype"):
        MemoryCache(dtype="bf16")


def test_a_directory_that_cannot_be_written_is_refused_with_its_path(tmp_path):
    blocked = tmp_path / "a_file"
    blocked.write_text("x")
    with pytest.raises(NotADirectoryError, match="a_file"):
        DirectoryCache(blocked)
    with pytest.raises(PermissionError, match="a_file/below"):
        DirectoryCache(blocked / "below")  # its parent is a file: it cannot be made
    with pytest.raises(PermissionError, match="/proc/tpc-cache"):
        DirectoryCache("/proc/tpc-cache")


@pytest.mark.parametrize("directory", ["/proc/x/", "/sys/nope/"])
def test_a_directory_whose_file_system_takes_no_files_is_refused_by_the_check(directory):
    with pytest.raises(PermissionError, match=directory.rstrip("/")):
        DirectoryCache.check_path(directory)


def test_the_check_makes_nothing_and_leaves_nothing_behind(tmp_path):
    DirectoryCache.check_path(tmp_path / "not" / "yet")
    DirectoryCache.check_path(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_directory_is_refused(tmp_path):
    import os

    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="locked"):
            DirectoryCache(locked)
    finally:
        locked.chmod(0o700)


def test_the_registry_shares_one_cache_per_value(tmp_path):
    from langchain_core.stores import InMemoryByteStore

    registry, store = CacheRegistry(), InMemoryByteStore()
    assert registry.resolve("memory") is registry.resolve("memory")
    assert registry.resolve(tmp_path / "d") is registry.resolve(str(tmp_path / "d") + "/")
    assert registry.resolve(store) is registry.resolve(store)
    assert registry.resolve(None) is None


# ---------------------------------------------------------------------------------------------- the memory bound
@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(limit=st.integers(1, 6000), operations=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 6)),
                                                       min_size=1, max_size=40))
def test_the_memory_cache_never_exceeds_its_byte_limit(limit, operations):
    cache = MemoryCache(max_bytes=limit, dtype="fp32")
    for key_index, sentences in operations:
        key = entry_key(FINGERPRINT, str(key_index))
        cache.put_many([(key, make_entry(sentences=sentences, dim=8, seed=key_index))])
        info = cache.info()
        assert info.bytes <= limit
        held = [entry for entry in cache.get_many([entry_key(FINGERPRINT, str(i)) for i in range(13)],
                                                   fingerprint=FINGERPRINT) if entry is not None]
        assert info.bytes == sum(len(encode_entry(entry, "fp32")) for entry in held)
        assert info.entries == len(held)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "int8"])
def test_the_memory_cache_hands_back_one_decoded_entry_the_stored_bytes_read_as(dtype, monkeypatch):
    import tpc_core.cache.stores as stores

    cache = MemoryCache(dtype=dtype)
    key = entry_key(FINGERPRINT, "a")
    cache.put_many([(key, make_entry(sentences=4, dim=16))])
    decoded = decode_entry(encode_entry(make_entry(sentences=4, dim=16), dtype), FINGERPRINT)
    monkeypatch.setattr(stores, "decode_entry", lambda *_: pytest.fail("a warm read decoded its entry"))
    first, second = cache.get_many([key, key], fingerprint=FINGERPRINT)
    assert first is second  # held decoded, not decoded again on each read
    assert (first.spans, first.counts, first.document_tokens, first.text_length) == \
        (decoded.spans, decoded.counts, decoded.document_tokens, decoded.text_length)
    assert torch.equal(first.embeddings, decoded.embeddings)
    assert cache.get_many([key], fingerprint=b"x" * 16) == [None]  # another fingerprint: damaged
    assert cache.info().errors == 1


def test_the_memory_cache_drops_the_least_recently_used_first():
    size = len(encode_entry(make_entry(), "fp32"))
    cache = MemoryCache(max_bytes=2 * size, dtype="fp32")
    a, b, c = (entry_key(FINGERPRINT, name) for name in "abc")
    cache.put_many([(a, make_entry()), (b, make_entry())])
    cache.get_many([a])  # a is now the most recent
    cache.put_many([(c, make_entry())])
    assert [entry is not None for entry in cache.get_many([a, b, c])] == [True, False, True]
    assert cache.info().evictions == 1


def test_warnings_are_not_raised_for_sound_reads(tmp_path):
    cache = DirectoryCache(tmp_path, dtype="int8")
    key = entry_key(FINGERPRINT, "x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache.put_many([(key, make_entry())])
        assert cache.get_many([key], fingerprint=FINGERPRINT)[0] is not None
