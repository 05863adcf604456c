"""The query-time sentence cache: read each document once, reuse it for every question.

What the engine knows of a document before any question (its sentence spans, their counts under the CSE
tokenizer, the sentence embeddings the CSE reads inside it) is the same for every question. A cache stores it
once per document, as an :class:`Entry` in a checked binary format (:mod:`.entry`: no pickle, a checksum, the
fingerprint of the model, config, splitter, tokenizer and storage dtype), so a later call that finds the
document skips splitting, counting and encoding, and runs only what depends on the question.

Modules, bottom up:

* :mod:`.entry`: :class:`Entry`, its binary format, :class:`DamagedEntry`;
* :mod:`.fingerprint`: the fingerprint and the key of a document's entry;
* :mod:`.stores`: :class:`SentenceCache` (the contract, the counts, damaged entries and failing stores handled
  once), :class:`MemoryCache` (an LRU bounded in bytes), :class:`DirectoryCache` (files, safe across processes);
* :mod:`.external`: LangChain byte stores and LlamaIndex key-value stores, by duck typing (neither is imported);
* :mod:`.secret`: :class:`SecretURL`, a cache URL that holds a password, shown redacted everywhere;
* :mod:`.kinds`: the kinds of ``cache=`` value, one row each (:data:`CACHE_KINDS`; :func:`register_cache_kind`
  adds one);
* :mod:`.resolve`: ``cache=`` values -> caches, read from that table (:func:`resolve_cache`, :class:`CacheRegistry`);
* :mod:`.documents`: a cache as the engine's document store (what ``TPCCompressor.compress(..., cache=...)`` reads
  through; the engine reads, splits and embeds: :mod:`tpc_core.engine.reading`).

Example:
    >>> compressor = TPCCompressor.from_pretrained("tpc-mini")
    >>> compressor.warm_cache(chunks, cache="memory")       # at ingestion, or let the first call fill it
    >>> compressor.compress(chunks, question="Who founded it?", cache="memory").cache_hits
    >>> compressor.cache_info("memory")
"""

from __future__ import annotations

from tpc_core.cache.entry import DEFAULT_DTYPE, STORAGE_DTYPES, DamagedEntry, Entry, decode_entry, encode_entry
from tpc_core.cache.external import ByteStoreCache, KeyValueCache
from tpc_core.cache.fingerprint import entry_key, fingerprint, splitter_identity
from tpc_core.cache.kinds import CACHE_KINDS, CacheKind, register_cache_kind
from tpc_core.cache.redis_store import CacheUnavailable, RedisCache, is_redis_url, shared_redis_cache
from tpc_core.cache.resolve import CacheRegistry, check_cache_spec, resolve_cache
from tpc_core.cache.secret import SecretURL, is_secret, redacted_url, reveal
from tpc_core.cache.stores import DEFAULT_MAX_BYTES, CacheInfo, DirectoryCache, MemoryCache, SentenceCache

__all__ = ["CACHE_KINDS", "DEFAULT_DTYPE", "DEFAULT_MAX_BYTES", "STORAGE_DTYPES", "ByteStoreCache", "CacheInfo",
           "CacheKind", "CacheRegistry", "CacheUnavailable", "DamagedEntry", "DirectoryCache", "Entry",
           "KeyValueCache", "MemoryCache", "RedisCache", "SecretURL", "SentenceCache", "check_cache_spec",
           "decode_entry", "encode_entry", "entry_key", "fingerprint", "is_redis_url", "is_secret", "redacted_url",
           "register_cache_kind", "resolve_cache", "reveal", "shared_redis_cache", "splitter_identity"]
