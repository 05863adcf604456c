"""``cache=``: what a caller may pass, and the one cache object each value stands for.

Every kind of value is one row of :data:`tpc_core.cache.kinds.CACHE_KINDS`; the three readers here ask the row.
:func:`resolve_cache` turns a value into a :class:`~tpc_core.cache.stores.SentenceCache`; :func:`check_cache_spec`
finds what it would refuse without creating anything; :class:`CacheRegistry` (one per compressor) resolves like
:func:`resolve_cache` but hands back the same object for the same value (the row's ``key``), so ``cache="memory"``
on two calls shares one LRU, a directory path shares one object, and a store passed twice keeps one set of counts.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable
from typing import Any, Union

from tpc_core.cache.kinds import cache_kind, directory_string
from tpc_core.cache.stores import SentenceCache

__all__ = ["CacheRegistry", "CacheSpec", "check_cache_spec", "directory_string", "resolve_cache"]

CacheSpec = Union[None, str, "os.PathLike[str]", SentenceCache, Any]


def resolve_cache(spec: CacheSpec) -> SentenceCache | None:
    """The cache ``spec`` stands for (a new one each call; see :class:`CacheRegistry` to share them): its row's
    check, then its row's build (:data:`~tpc_core.cache.kinds.CACHE_KINDS`).

    Args:
        spec: ``None`` (no cache), ``"memory"`` (a :class:`MemoryCache` of 256 MiB), a directory (``str`` or
            ``Path``: a :class:`DirectoryCache`), a :class:`SentenceCache` (used as it is), a LangChain byte store
            or a LlamaIndex key-value store (wrapped); a ``redis://`` URL (or a
            :class:`~tpc_core.cache.secret.SecretURL` or pydantic ``SecretStr`` holding one), a redis-py client,
            LangChain's ``RedisStore`` or LlamaIndex's ``RedisKVStore`` (a
            :class:`~tpc_core.cache.redis_store.RedisCache`); or a value of a kind added by
            :func:`~tpc_core.cache.kinds.register_cache_kind`.

    Raises:
        ValueError: A string that is neither "memory" nor a path (:func:`directory_string`), a secret that holds
            no Redis URL, or a Redis URL whose password was redacted.
        TypeError: Any other value (the message names the accepted kinds).
        PermissionError: A directory that cannot be written (named).
        ImportError: A Redis URL without the redis package (the message says how to install it).
    """
    kind = cache_kind(spec)
    kind.check(spec)
    return kind.build(spec)


def check_cache_spec(spec: CacheSpec) -> None:
    """What :func:`resolve_cache` would refuse, found without creating anything (no directory is made, nothing
    connects): the check of ``spec``'s row.

    Raises:
        ValueError: A string that is neither "memory" nor a path, a secret that holds no Redis URL, or a Redis URL
            whose password was redacted.
        TypeError: A value of another kind.
        PermissionError: A directory that cannot be created or written (named).
        NotADirectoryError: A path that is a file.
        ImportError: A Redis URL without the redis package (the message says how to install it).
    """
    cache_kind(spec).check(spec)


class CacheRegistry:
    """The caches one compressor has resolved, one object per value (thread-safe)."""

    def __init__(self) -> None:
        self._caches: dict[Hashable, tuple[Any, SentenceCache | None]] = {}
        self._lock = threading.Lock()

    def resolve(self, spec: CacheSpec) -> SentenceCache | None:
        """:func:`resolve_cache`, the same object again for a value of the same key (its row's ``key``: one
        ``"memory"``, one directory, one server, one store object)."""
        kind = cache_kind(spec)
        if kind.key is None:
            kind.check(spec)
            return kind.build(spec)
        key = (kind.name, kind.key(spec))
        with self._lock:
            if key not in self._caches:
                kind.check(spec)
                self._caches[key] = (spec, kind.build(spec))  # the value is kept: its id is not reused meanwhile
            return self._caches[key][1]
