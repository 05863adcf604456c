"""``cache=``: what a caller may pass, and the one cache object each value stands for.

:func:`resolve_cache` turns a value into a :class:`~tpc_core.cache.stores.SentenceCache`; :class:`CacheRegistry`
(one per compressor) does the same but hands back the same object for the same value, so ``cache="memory"`` on
two calls shares one LRU, a directory path shares one object, and a store passed twice keeps one set of counts.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Union

from tpc_core.cache.external import ByteStoreCache, KeyValueCache, is_byte_store, is_key_value_store
from tpc_core.cache.redis_store import as_redis_cache, is_redis_url
from tpc_core.cache.secret import is_redacted, is_secret, redacted_url, reveal
from tpc_core.cache.stores import DirectoryCache, MemoryCache, SentenceCache

__all__ = ["ACCEPTED", "CacheRegistry", "CacheSpec", "check_cache_spec", "resolve_cache"]

CacheSpec = Union[None, str, "os.PathLike[str]", SentenceCache, Any]
ACCEPTED = ("None, 'memory' (an LRU in this process), a directory path (str or pathlib.Path), a "
            "tpc_core.cache.SentenceCache, a LangChain byte store (mget/mset: InMemoryByteStore, LocalFileStore, "
            "...), a LlamaIndex key-value store (get/put/get_all: SimpleKVStore, ...), a redis:// URL (or a "
            "tpc_core.cache.SecretURL / pydantic SecretStr holding one) or a redis-py client")


def resolve_cache(spec: CacheSpec) -> SentenceCache | None:
    """The cache ``spec`` stands for (a new one each call; see :class:`CacheRegistry` to share them).

    Args:
        spec: ``None`` (no cache), ``"memory"`` (a :class:`MemoryCache` of 256 MiB), a directory (``str`` or
            ``Path``: a :class:`DirectoryCache`), a :class:`SentenceCache` (used as it is), a LangChain byte store
            or a LlamaIndex key-value store (wrapped); a ``redis://`` URL (or a
            :class:`~tpc_core.cache.secret.SecretURL` or pydantic ``SecretStr`` holding one), a redis-py client,
            LangChain's ``RedisStore`` or LlamaIndex's ``RedisKVStore`` (a
            :class:`~tpc_core.cache.redis_store.RedisCache`).

    Raises:
        ValueError: A string that is neither "memory" nor a path (:func:`directory_string`), a secret that holds
            no Redis URL, or a Redis URL whose password was redacted.
        TypeError: Any other value (the message names the accepted kinds).
        PermissionError: A directory that cannot be written (named).
    """
    if spec is None or isinstance(spec, SentenceCache):
        return spec
    _check_url(spec)
    redis = as_redis_cache(spec)  # before the path and store checks: a URL is a str, a Redis client has mget
    if redis is not None:
        return redis
    if isinstance(spec, str) and spec == "memory":
        return MemoryCache()
    if isinstance(spec, (str, os.PathLike)):
        return DirectoryCache(directory_string(spec) if isinstance(spec, str) else spec)
    if is_byte_store(spec):
        return ByteStoreCache(spec)
    if is_key_value_store(spec):
        return KeyValueCache(spec)
    raise TypeError(f"cache must be {ACCEPTED}; got {type(spec).__name__}.")


def directory_string(spec: str) -> str:
    """``spec`` when it reads as a directory: it holds a path separator (``"./cache"``, ``"tpc_cache/"``, ``"~/c"``)
    or names an existing directory. Any other string is a mistyped name, not a new directory in the working
    directory (``"Memory"``, ``"mem"`` and ``"memory "`` would each create one).

    Raises:
        ValueError: Another string, with a did-you-mean.
    """
    separators = {"/", os.sep, *([os.altsep] if os.altsep else [])}
    if any(mark in spec for mark in separators) or spec.startswith("~") or os.path.isdir(spec):
        return spec
    close = difflib.get_close_matches(spec.strip().lower(), ["memory"], n=1, cutoff=0.5)
    hint = "did you mean 'memory'? " if close or spec.strip().lower().startswith("mem") else ""
    raise ValueError(f"cache={spec!r} is neither 'memory' nor a directory path: {hint}A string is read as a directory "
                     f"only when it looks like one (a separator, e.g. './{spec.strip() or 'cache'}/', or an existing "
                     "directory); pass a pathlib.Path for a new directory without a separator.")


def _check_url(spec: CacheSpec) -> None:
    """A secret (``SecretURL``, ``SecretStr``) must hold a Redis URL, the only ``cache=`` value with a credential; and
    a Redis URL must not hold the ``***`` of a redacted one.

    Raises:
        ValueError: A secret holding another string (not shown: it may be the credential itself), or a redacted URL.
    """
    if is_secret(spec) and not is_redis_url(spec):
        raise ValueError(f"cache= got a {type(spec).__name__} that holds no Redis URL (its value is not shown): a "
                         "secret cache value must be a redis://, rediss:// or unix:// URL (a path or 'memory' needs "
                         "no secret).")
    if is_redis_url(spec) and is_redacted(reveal(spec)):
        raise ValueError(f"cache={redacted_url(reveal(spec))!r} is a URL with its password redacted (copied from a "
                         "message, a repr or a dump, which never hold it): pass the real URL, or "
                         "tpc_core.cache.SecretURL.from_env() to read it from TPC_CACHE_URL.")


def check_cache_spec(spec: CacheSpec) -> None:
    """What :func:`resolve_cache` would refuse, found without creating anything (no directory is made).

    Raises:
        ValueError: A string that is neither "memory" nor a path, a secret that holds no Redis URL, or a Redis URL
            whose password was redacted.
        TypeError: A value of another kind.
        PermissionError: A directory that cannot be created or written (named).
        NotADirectoryError: A path that is a file.
        ImportError: A Redis URL without the redis package (the message says how to install it).
    """
    if spec is None or isinstance(spec, SentenceCache) or (isinstance(spec, str) and spec == "memory"):
        return
    _check_url(spec)
    if is_redis_url(spec):  # a URL is not a directory; nothing connects before the first call
        if importlib.util.find_spec("redis") is None:
            raise ImportError(f"cache={redacted_url(reveal(spec))!r} needs the redis package: pip install redis")
        return
    if isinstance(spec, (str, os.PathLike)):
        DirectoryCache.check_path(directory_string(spec) if isinstance(spec, str) else spec)
    elif not (is_byte_store(spec) or is_key_value_store(spec)):
        raise TypeError(f"cache must be {ACCEPTED}; got {type(spec).__name__}.")


class CacheRegistry:
    """The caches one compressor has resolved, one object per value (thread-safe)."""

    def __init__(self) -> None:
        self._caches: dict[Any, tuple[Any, SentenceCache | None]] = {}
        self._lock = threading.Lock()

    def resolve(self, spec: CacheSpec) -> SentenceCache | None:
        """:func:`resolve_cache`, the same object again for the same ``"memory"``, directory or store."""
        if spec is None or isinstance(spec, SentenceCache):
            return spec
        if isinstance(spec, str) and spec == "memory":
            key: Any = "memory"
        elif is_redis_url(spec):
            key = ("redis", reveal(spec))  # a secret and its URL are one server, one cache
        elif isinstance(spec, (str, os.PathLike)) and str(spec):
            key = ("directory", os.path.realpath(Path(spec).expanduser()))
        else:
            key = ("store", id(spec))  # the store is kept below, so its id is not reused while it is here
        with self._lock:
            if key not in self._caches:
                self._caches[key] = (spec, resolve_cache(spec))
            return self._caches[key][1]
