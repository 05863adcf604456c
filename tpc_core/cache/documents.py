"""A sentence cache as the engine's document store: what ``compress(..., cache=...)`` reads through.

The engine's reader (:mod:`tpc_core.engine.reading`) asks a :class:`CachedDocuments` for the documents of a batch
(one ``get_many``) and gives it what the scorer's per-document step computed for the others (one ``put_many``).
This module only turns texts into keys and stored values into checked :class:`~tpc_core.cache.entry.Entry`
values: it never splits, tokenizes or embeds, so the cache holds whatever the active scorer embeds, under a
fingerprint that names the scorer's identity (``Scorer.identity``) with the model's.

When no document is found the scorer reads the very contexts it reads without a cache, so the call's results are
the uncached call's, bit for bit; with ``fp32`` storage a later call that finds them gives those results again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from tpc_core.cache.entry import Entry
from tpc_core.cache.fingerprint import entry_key, fingerprint, splitter_identity
from tpc_core.cache.stores import SentenceCache
from tpc_core.engine.reading import Stored
from tpc_core.segmentation import SentenceSplitter

__all__ = ["CachedDocuments", "ModelCache", "cached_documents"]

logger = logging.getLogger(__name__)
_unnamed_splitters: set[str] = set()


def cached_documents(cache: SentenceCache, model: Mapping[str, Any],
                     splitter: SentenceSplitter) -> CachedDocuments | None:
    """The store of ``cache`` for this model (and scorer) and splitter, or ``None`` (logged once per splitter type)
    when the splitter cannot say what it cuts (:func:`~tpc_core.cache.fingerprint.splitter_identity`): then no
    cache."""
    identity = splitter_identity(splitter)
    if identity is None:
        name = type(splitter).__qualname__
        if name not in _unnamed_splitters:
            _unnamed_splitters.add(name)
            logger.warning("The splitter %s has no cache_identity string attribute, so its documents are not cached "
                           "(give it one that changes whenever its cuts change).", name)
        return None
    return CachedDocuments(cache, fingerprint(model, identity, cache.dtype))


class ModelCache:
    """One cache for one model (and scorer): what the compressor resolves a ``cache=`` value into and hands the
    engine, which asks it for the store of the splitter a call uses (the engine's
    :class:`~tpc_core.engine.reading.DocumentStores`).

    Args:
        cache: The cache.
        model: What its entries depend on beside the splitter (the compressor's ``cache_fingerprint``).
    """

    def __init__(self, cache: SentenceCache, model: Mapping[str, Any]) -> None:
        self.cache = cache
        self.model = model

    def for_splitter(self, splitter: SentenceSplitter) -> CachedDocuments | None:
        """The store of the documents ``splitter`` cuts (:func:`cached_documents`)."""
        return cached_documents(self.cache, self.model, splitter)


class CachedDocuments:
    """One cache, for one model, scorer and splitter: the engine's :class:`~tpc_core.engine.reading.DocumentStore`.

    Args:
        cache: The cache.
        fingerprint: What entries must have been made by (:func:`~tpc_core.cache.fingerprint.fingerprint`).
    """

    def __init__(self, cache: SentenceCache, fingerprint: bytes) -> None:
        self.cache = cache
        self.fingerprint = fingerprint

    def key(self, text: str) -> str:
        """The key of ``text``'s entry."""
        return entry_key(self.fingerprint, text)

    def get_many(self, texts: Sequence[str]) -> list[Entry | None]:
        """Each text's entry, or ``None``; an entry made for a text of another length is reported damaged."""
        keys = [self.key(text) for text in texts]
        found = self.cache.get_many(keys, fingerprint=self.fingerprint)
        return [self._sound(entry, key, text) for entry, key, text in zip(found, keys, texts)]

    def _sound(self, entry: Entry | None, key: str, text: str) -> Entry | None:
        if entry is not None and entry.text_length != len(text):  # a sound entry, but not of this text
            self.cache.report_damaged(key, f"made for a text of {entry.text_length} characters, not {len(text)}")
            return None
        return entry

    def put_many(self, items: Sequence[tuple[str, Stored]]) -> int:
        """Store each document's entry; returns how many were written."""
        return self.cache.put_many([(self.key(text), Entry(tuple(stored.spans), tuple(stored.counts),
                                                           stored.document_tokens, stored.embeddings, len(text),
                                                           self.fingerprint)) for text, stored in items])
