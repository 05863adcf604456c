"""The kinds of ``cache=`` value, one row each: how a value is recognised, checked, built, shared and shown.

:data:`CACHE_KINDS` is the one table. :func:`tpc_core.cache.resolve.resolve_cache`, ``check_cache_spec`` and the key
of :class:`~tpc_core.cache.resolve.CacheRegistry` all read it, so a value is judged the same way everywhere:

* ``recognises``: whether a value is of this kind (the first row that recognises it wins);
* ``check``: what the kind refuses, found without side effects (no directory is made, nothing connects);
* ``build``: the :class:`~tpc_core.cache.stores.SentenceCache` it stands for (a new one each call);
* ``key``: what makes two values one shared cache in a registry (``None``: the value is used as it is, not kept);
* ``shown``: the value as messages name it (a URL without its password).

A new kind of store is its :class:`~tpc_core.cache.stores.SentenceCache` subclass and one :class:`CacheKind`
passed to :func:`register_cache_kind`; nothing else changes (``TPCCompressor.compress``, ``warm_cache``,
``cache_info`` and the adapters accept it at once).
"""

from __future__ import annotations

import difflib
import importlib.util
import os
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpc_core.cache.external import ByteStoreCache, KeyValueCache, is_byte_store, is_key_value_store
from tpc_core.cache.redis_store import RedisCache, is_redis_url, redis_settings
from tpc_core.cache.secret import is_redacted, is_secret, redacted_url, reveal
from tpc_core.cache.stores import DirectoryCache, MemoryCache, SentenceCache

__all__ = ["CACHE_KINDS", "CacheKind", "accepted", "cache_kind", "directory_string", "register_cache_kind"]


def _nothing(spec: Any) -> None:
    """The check of a kind that refuses nothing."""


def _by_identity(spec: Any) -> Hashable:
    """The sharing key of a store object: itself (a registry keeps it, so its id is not reused meanwhile)."""
    return ("store", id(spec))


def _type_name(spec: Any) -> str:
    return f"a {type(spec).__name__}"


@dataclass(frozen=True)
class CacheKind:
    """One kind of ``cache=`` value (a row of :data:`CACHE_KINDS`).

    Attributes:
        name: What the kind is called (unique in the table).
        accepts: How an error message and the README describe the values of this kind.
        recognises: Whether a value is of this kind.
        build: The cache a value stands for (called after ``check``; a new object each call).
        check: Raises for a value of this kind that ``build`` would refuse, with no side effect.
        key: The key under which a registry shares the cache of a value (``None``: no sharing, ``build`` is called
            each time). Default: the value's identity.
        shown: The value as a message names it (never a password).
    """

    name: str
    accepts: str
    recognises: Callable[[Any], bool]
    build: Callable[[Any], SentenceCache | None]
    check: Callable[[Any], None] = _nothing
    key: Callable[[Any], Hashable] | None = _by_identity
    shown: Callable[[Any], str] = _type_name


# ------------------------------------------------------------------------------------------------ strings and paths
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


def _directory(spec: str | os.PathLike[str]) -> str | os.PathLike[str]:
    return directory_string(spec) if isinstance(spec, str) else spec


def _directory_key(spec: str | os.PathLike[str]) -> Hashable:
    return ("directory", os.path.realpath(Path(spec).expanduser())) if str(spec) else ("store", id(spec))


# ------------------------------------------------------------------------------------------------ Redis URLs
def _check_redis_url(spec: Any) -> None:
    """A secret (``SecretURL``, ``SecretStr``) must hold a Redis URL, the only ``cache=`` value with a credential; a
    Redis URL must not hold the ``***`` of a redacted one; and the redis package must be there to reach it.

    Raises:
        ValueError: A secret holding another string (not shown: it may be the credential itself), or a redacted URL.
        ImportError: No redis package (the message says how to install it).
    """
    if not is_redis_url(spec):
        raise ValueError(f"cache= got a {type(spec).__name__} that holds no Redis URL (its value is not shown): a "
                         "secret cache value must be a redis://, rediss:// or unix:// URL (a path or 'memory' needs "
                         "no secret).")
    if is_redacted(reveal(spec)):
        raise ValueError(f"cache={_shown_url(spec)!r} is a URL with its password redacted (copied from a "
                         "message, a repr or a dump, which never hold it): pass the real URL, or "
                         "tpc_core.cache.SecretURL.from_env() to read it from TPC_CACHE_URL.")
    if importlib.util.find_spec("redis") is None:  # a URL is not a directory; nothing connects before the first call
        raise ImportError(f"cache={_shown_url(spec)!r} needs the redis package: pip install redis")


def _shown_url(spec: Any) -> str:
    """A URL without its password; a secret that holds no Redis URL is not shown at all."""
    return redacted_url(reveal(spec)) if is_redis_url(spec) else f"a {type(spec).__name__} (not shown)"


def _build_redis_store(spec: Any) -> RedisCache:
    settings = redis_settings(spec)
    assert settings is not None  # recognised by this row
    return RedisCache(**settings)


# ------------------------------------------------------------------------------------------------ the table
CACHE_KINDS: list[CacheKind] = [
    CacheKind("none", "None", lambda spec: spec is None, lambda spec: None, key=None, shown=repr),
    CacheKind("memory", "'memory' (an LRU in this process)",
              lambda spec: isinstance(spec, str) and spec == "memory", lambda spec: MemoryCache(),
              key=lambda spec: "memory", shown=repr),
    # Before the directory: a URL is a str. Every secret is here: the only cache= value with a credential.
    CacheKind("redis URL", "a redis:// URL (or a tpc_core.cache.SecretURL / pydantic SecretStr holding one)",
              lambda spec: is_secret(spec) or is_redis_url(spec), lambda spec: RedisCache.from_url(reveal(spec)),
              check=_check_redis_url, key=lambda spec: ("redis", reveal(spec)), shown=_shown_url),
    CacheKind("directory", "a directory path (str or pathlib.Path)", lambda spec: isinstance(spec, (str, os.PathLike)),
              lambda spec: DirectoryCache(_directory(spec)),
              check=lambda spec: DirectoryCache.check_path(_directory(spec)), key=_directory_key, shown=repr),
    CacheKind("sentence cache", "a tpc_core.cache.SentenceCache", lambda spec: isinstance(spec, SentenceCache),
              lambda spec: spec, key=None),
    # Before the byte and key-value stores: LangChain's RedisStore has mget and mset.
    CacheKind("redis store", "a redis-py client (or LangChain's RedisStore, LlamaIndex's RedisKVStore)",
              lambda spec: redis_settings(spec) is not None, _build_redis_store),
    CacheKind("byte store", "a LangChain byte store (mget/mset: InMemoryByteStore, LocalFileStore, ...)",
              is_byte_store, ByteStoreCache),
    CacheKind("key-value store", "a LlamaIndex key-value store (get/put/get_all: SimpleKVStore, ...)",
              is_key_value_store, KeyValueCache),
]
"""Every kind of ``cache=`` value, in the order they are tried (the first that recognises a value is its kind)."""


def register_cache_kind(kind: CacheKind, *, before: str = "directory") -> CacheKind:
    """Add a kind of ``cache=`` value to :data:`CACHE_KINDS`, tried just before the row named ``before`` (default:
    before the directory row, so that a string of a new scheme is not read as a path).

    Raises:
        ValueError: A kind of that name is in the table already, or no row is named ``before``.
    """
    names = [row.name for row in CACHE_KINDS]
    if kind.name in names:
        raise ValueError(f"A cache kind named {kind.name!r} is registered already.")
    if before not in names:
        raise ValueError(f"No cache kind is named {before!r}; the table holds {names}.")
    CACHE_KINDS.insert(names.index(before), kind)
    return kind


def accepted() -> str:
    """The accepted kinds, as an error message lists them."""
    described = [row.accepts for row in CACHE_KINDS]
    return ", ".join(described[:-1]) + " or " + described[-1]


def cache_kind(spec: Any) -> CacheKind:
    """The row of :data:`CACHE_KINDS` that ``spec`` is of.

    Raises:
        TypeError: No row recognises it (the message names the accepted kinds).
    """
    for row in CACHE_KINDS:
        if row.recognises(spec):
            return row
    raise TypeError(f"cache must be {accepted()}; got {type(spec).__name__}.")
