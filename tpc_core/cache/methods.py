"""The query-time cache methods of :class:`tpc_core.TPCCompressor` (``warm_cache``, ``cache_info``, and
``cache_store``: a ``cache=`` value resolved into the store its engine reads through), as a mixin, so the compressor
itself holds only the compression calls."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tpc_core.cache.documents import ModelCache
from tpc_core.cache.resolve import CacheRegistry
from tpc_core.cache.stores import CacheInfo
from tpc_core.segmentation import SentenceSplitter

if TYPE_CHECKING:
    from tpc_core.engine.pipeline import Engine

__all__ = ["CacheMethods"]


class CacheMethods:
    """The cache methods of a class with ``_caches`` (a :class:`CacheRegistry`), ``cache_fingerprint`` (what its
    entries depend on), an ``engine`` and ``splitter(name)``."""

    _caches: CacheRegistry
    engine: Engine

    if TYPE_CHECKING:  # the class this is mixed into provides it (TPCCompressor: PretrainedMixin's cached property)
        @property
        def cache_fingerprint(self) -> Mapping[str, Any]:
            """What this class's cache entries depend on."""
            ...

    splitter: Callable[[str | SentenceSplitter | None], SentenceSplitter]

    def cache_store(self, spec: Any) -> ModelCache | None:
        """A ``cache=`` value resolved (once, here) into the store the engine receives (``stores=`` of
        :meth:`~tpc_core.engine.pipeline.Engine.compress`): this compressor's cache for that value (one per value,
        :class:`~tpc_core.cache.resolve.CacheRegistry`) under its model's fingerprint; ``None`` for no cache.

        Raises:
            TypeError, ValueError, PermissionError, ImportError: A value ``cache=`` refuses
                (:func:`~tpc_core.cache.resolve.resolve_cache`).
        """
        cache = self._caches.resolve(spec)
        return None if cache is None else ModelCache(cache, self.cache_fingerprint)

    def warm_cache(self, texts: Sequence[str], *, cache: Any, splitter: str | SentenceSplitter | None = None,
                   batch_size: int = 16) -> int:
        """Store each text's cache entry (sentences, counts, embeddings) without compressing it: what ingestion
        does so that query-time calls find every chunk. Texts already cached are not read again.

        Args:
            texts: The documents (chunks), as they will later be passed to :meth:`compress`.
            cache: Where to store them (any ``cache=`` value, see :class:`~tpc_core.engine.options.CompressKeywords`).
            splitter: The splitter the later calls will use (default: the checkpoint's).
            batch_size: Texts encoded together.

        Returns:
            How many entries were written.
        """
        split = self.splitter(splitter)
        stores = self.cache_store(cache)
        store = None if stores is None else stores.for_splitter(split)
        if store is None:
            raise ValueError("warm_cache needs a cache, a splitter it can name (a built-in one, or an object with a "
                             "cache_identity string) and a scorer with embed_documents and an identity.")
        return self.engine.warm(texts, store, split, batch_size)

    def cache_info(self, cache: Any = "memory") -> CacheInfo:
        """Hits, misses, bytes, evictions, entries and errors of a cache this compressor uses (``"memory"``: its
        in-process LRU; a directory or store: the one it resolved for that value)."""
        resolved = self._caches.resolve(cache)
        if resolved is None:
            raise ValueError("cache_info needs a cache, not None.")
        return resolved.info()
