"""The stores users already run, as sentence caches: LangChain byte stores and LlamaIndex key-value stores.

Neither framework is imported: a store is recognised by its methods (duck typing), so ``tpc_core`` stays free of
both. Values are the same encoded entries as everywhere (:mod:`tpc_core.cache.entry`); whatever a store hands
back is checked like any other value, so a store that returns another type reads as a damaged entry.

* :class:`ByteStoreCache`: LangChain's ``BaseStore[str, bytes]`` (``mget`` / ``mset``): ``InMemoryByteStore``,
  ``LocalFileStore``, a Redis or any store ``CacheBackedEmbeddings`` takes.
* :class:`KeyValueCache`: LlamaIndex's ``BaseKVStore`` (``get`` / ``put`` of dicts in a collection):
  ``SimpleKVStore`` and the others; an entry is one dict holding it in base64.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from tpc_core.cache.entry import DEFAULT_DTYPE
from tpc_core.cache.fingerprint import KEY_PREFIX
from tpc_core.cache.stores import SentenceCache

__all__ = ["ByteStoreCache", "KeyValueCache", "is_byte_store", "is_key_value_store"]

_FIELD = "tpc_sentence_entry"


def is_byte_store(store: Any) -> bool:
    """Whether ``store`` reads and writes like LangChain's ``BaseStore`` (``mget`` and ``mset``)."""
    return callable(getattr(store, "mget", None)) and callable(getattr(store, "mset", None))


def is_key_value_store(store: Any) -> bool:
    """Whether ``store`` reads and writes like LlamaIndex's ``BaseKVStore`` (``get`` and ``put`` by collection)."""
    return callable(getattr(store, "get", None)) and callable(getattr(store, "put", None)) \
        and callable(getattr(store, "get_all", None))


class ByteStoreCache(SentenceCache):
    """A LangChain byte store (``BaseStore[str, bytes]``) as a sentence cache.

    Args:
        store: Any object with ``mget(keys) -> list[bytes | None]`` and ``mset([(key, bytes)])``; ``mdelete`` and
            ``yield_keys()`` are used by :meth:`clear` where the store has them.
        dtype: See :class:`~tpc_core.cache.stores.SentenceCache`.
    """

    def __init__(self, store: Any, *, dtype: str = DEFAULT_DTYPE) -> None:
        if not is_byte_store(store):
            raise TypeError(f"ByteStoreCache needs a store with mget and mset, got {type(store).__name__}.")
        super().__init__(dtype=dtype)
        self.backend = store

    def fetch(self, keys: Sequence[str]) -> list[object | None]:
        return list(self.backend.mget(list(keys)))

    def store(self, items: Sequence[tuple[str, bytes]]) -> None:
        self.backend.mset(list(items))

    def drop_all(self) -> None:
        yield_keys = getattr(self.backend, "yield_keys", None)
        mdelete = getattr(self.backend, "mdelete", None)
        if callable(yield_keys) and callable(mdelete):
            # Filtered here: LocalFileStore reads a prefix as a folder, not as the start of a name.
            mdelete([key for key in yield_keys() if str(key).startswith(KEY_PREFIX)])

    def __repr__(self) -> str:
        return f"ByteStoreCache({type(self.backend).__name__}, dtype={self.dtype!r})"


class KeyValueCache(SentenceCache):
    """A LlamaIndex key-value store (``BaseKVStore``) as a sentence cache: each entry is
    ``{"tpc_sentence_entry": <base64>}`` under its key in ``collection``.

    Args:
        store: Any object with ``get(key, collection=...) -> dict | None``, ``put(key, dict, collection=...)`` and
            ``get_all(collection=...)``; ``delete(key, collection=...)`` is used by :meth:`clear`.
        collection: The collection entries live in.
        dtype: See :class:`~tpc_core.cache.stores.SentenceCache`.
    """

    def __init__(self, store: Any, *, collection: str = "tpc_sentence_cache", dtype: str = DEFAULT_DTYPE) -> None:
        if not is_key_value_store(store):
            raise TypeError(f"KeyValueCache needs a store with get, put and get_all, got {type(store).__name__}.")
        super().__init__(dtype=dtype)
        self.backend = store
        self.collection = collection

    def fetch(self, keys: Sequence[str]) -> list[object | None]:
        return [_unwrap(self.backend.get(key, collection=self.collection)) for key in keys]

    def store(self, items: Sequence[tuple[str, bytes]]) -> None:
        for key, value in items:
            self.backend.put(key, {_FIELD: base64.b64encode(value).decode("ascii")}, collection=self.collection)

    def drop_all(self) -> None:
        delete = getattr(self.backend, "delete", None)
        if callable(delete):
            for key in list(self.backend.get_all(collection=self.collection)):
                if str(key).startswith(KEY_PREFIX):
                    delete(key, collection=self.collection)

    def __repr__(self) -> str:
        return f"KeyValueCache({type(self.backend).__name__}, collection={self.collection!r}, dtype={self.dtype!r})"


def _unwrap(value: Any) -> object | None:
    """The entry's bytes from a stored dict; anything else is handed on as it is (and read as damaged)."""
    if value is None:
        return None
    if isinstance(value, dict) and isinstance(value.get(_FIELD), str):
        try:
            return base64.b64decode(value[_FIELD], validate=True)
        except (binascii.Error, ValueError):
            return value
    return value
