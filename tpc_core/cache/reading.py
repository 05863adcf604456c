"""Prompts read through a sentence cache: what the compressor runs instead of ``segment`` + ``Scorer.embed``.

For a batch of prompts, :meth:`CacheReader.read` looks every document up once (one ``get_many``), segments the
prompts with the entries it found (:func:`tpc_core.engine.reading.segment` with ``known``: a found document is
not split, and not counted where the caller counts with the CSE tokenizer), and returns a :class:`CachedBatch`
whose :meth:`~CachedBatch.embed` the compressor uses in place of the scorer's: found documents give their stored
embeddings, the others are read by the CSE in one ``encode_contexts`` call, exactly as without a cache, and
their entries are stored. The question, BM25, the heads and selection run as always, on the same values.

When no document is found the CSE reads the very contexts it reads without a cache, so the call's results are
the uncached call's, bit for bit; with ``fp32`` storage a later call that finds them gives those results again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from tpc_core.cache.entry import Entry
from tpc_core.cache.fingerprint import entry_key, fingerprint, splitter_identity
from tpc_core.cache.stores import SentenceCache
from tpc_core.engine.scoring.cse import ContextSentenceEncoder
from tpc_core.engine.options import CompressionOptions, as_documents
from tpc_core.engine.values import KnownDocument, Segmented
from tpc_core.engine.reading import segment
from tpc_core.engine.tokens import TokenCounter
from tpc_core.segmentation import SentenceSplitter

__all__ = ["CacheReader", "CachedBatch", "cache_reader"]

logger = logging.getLogger(__name__)
_unnamed_splitters: set[str] = set()


def cache_reader(cache: SentenceCache, model: Mapping[str, Any], splitter: SentenceSplitter,
                 encoder: ContextSentenceEncoder, default_counter: TokenCounter) -> CacheReader | None:
    """The reader of ``cache`` for this model and splitter, or ``None`` (logged once per splitter type) when the
    splitter cannot say what it cuts (:func:`~tpc_core.cache.fingerprint.splitter_identity`): then no cache."""
    identity = splitter_identity(splitter)
    if identity is None:
        name = type(splitter).__qualname__
        if name not in _unnamed_splitters:
            _unnamed_splitters.add(name)
            logger.warning("The splitter %s has no cache_identity string attribute, so its documents are not cached "
                           "(give it one that changes whenever its cuts change).", name)
        return None
    return CacheReader(cache, fingerprint(model, identity, cache.dtype), encoder, default_counter)


class CacheReader:
    """Reads prompts through one cache, for one model and splitter (thread-safe: each call gets its own batch).

    Args:
        cache: The cache.
        fingerprint: What entries must have been made by (:func:`~tpc_core.cache.fingerprint.fingerprint`).
        encoder: The compressor's CSE.
        default_counter: The compressor's default counter (the CSE tokenizer): an entry's counts are its.
    """

    def __init__(self, cache: SentenceCache, fingerprint: bytes, encoder: ContextSentenceEncoder,
                 default_counter: TokenCounter) -> None:
        self.cache = cache
        self.fingerprint = fingerprint
        self.encoder = encoder
        self.default_counter = default_counter

    def key(self, text: str) -> str:
        """The key of ``text``'s entry."""
        return entry_key(self.fingerprint, text)

    def read(self, documents: Sequence[tuple[str, ...]], splitter: SentenceSplitter, counter: TokenCounter,
             options: CompressionOptions) -> CachedBatch:
        """Look up and segment a batch of prompts (each a tuple of documents)."""
        keys = [tuple(self.key(doc) if doc.strip() else None for doc in docs) for docs in documents]
        unique = list(dict.fromkeys(key for prompt_keys in keys for key in prompt_keys if key is not None))
        found = dict(zip(unique, self.cache.get_many(unique, fingerprint=self.fingerprint)))
        own_counts = counter is self.default_counter
        prompts, entries = [], []
        for docs, prompt_keys in zip(documents, keys):
            prompt_entries = [self._sound(found.get(key), key, doc) if key is not None else None
                              for doc, key in zip(docs, prompt_keys)]
            known = [None if entry is None else KnownDocument(
                entry.spans, entry.counts if own_counts else None, entry.document_tokens if own_counts else None)
                for entry in prompt_entries]
            prompts.append(segment(docs, splitter, counter, options, known if any(known) else None))
            entries.append(prompt_entries)
        return CachedBatch(self, prompts, keys, entries, counter)

    def _sound(self, entry: Entry | None, key: str, text: str) -> Entry | None:
        if entry is not None and entry.text_length != len(text):  # a sound entry, but not of this text
            self.cache.report_damaged(key, f"made for a text of {entry.text_length} characters, not {len(text)}")
            return None
        return entry

    def warm(self, texts: Sequence[str], splitter: SentenceSplitter, batch_size: int) -> int:
        """Store the entry of every text the cache lacks, without compressing; returns the entries written.

        Raises:
            TypeError: A text that is not a string.
            ValueError: A text with a lone surrogate, or a ``batch_size`` below 1.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}.")
        if isinstance(texts, str):
            raise TypeError("warm_cache takes a list of texts, not a single string.")
        unique = list(dict.fromkeys(as_documents(text, position)[0] for position, text in enumerate(texts)))
        unique = [text for text in unique if text.strip()]
        present = self.cache.get_many([self.key(text) for text in unique], fingerprint=self.fingerprint)
        missing = [text for text, entry in zip(unique, present) if entry is None]
        written, options = 0, CompressionOptions()
        for first in range(0, len(missing), batch_size):
            chunk = [(text,) for text in missing[first: first + batch_size]]
            batch = CachedBatch(self, [segment(docs, splitter, self.default_counter, options) for docs in chunk],
                                [(self.key(docs[0]),) for docs in chunk], [[None] for _ in chunk],
                                self.default_counter)
            batch.embed(batch.prompts)
            written += batch.written
        return written


class CachedBatch:
    """A batch of prompts read through the cache: the segmented prompts, and the embedding step that uses the
    entries found and stores the ones it computes.

    Attributes:
        prompts: The segmented prompts, in order.
        hits: Per prompt, its documents found in the cache.
        misses: Per prompt, its (non-blank) documents not found.
        written: Entries this batch stored.
    """

    def __init__(self, reader: CacheReader, prompts: list[Segmented], keys: list[tuple[str | None, ...]],
                 entries: list[list[Entry | None]], counter: TokenCounter) -> None:
        self.reader = reader
        self.prompts = prompts
        self.keys = keys
        self.entries = entries
        self.counter = counter
        self.slots = {id(prompt): slot for slot, prompt in enumerate(prompts)}
        self.hits = [sum(entry is not None for entry in prompt_entries) for prompt_entries in entries]
        self.misses = [sum(key is not None for key in prompt_keys) - hits for prompt_keys, hits in zip(keys, self.hits)]
        self.written = 0

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """Each prompt's sentence embeddings, flat (what ``Scorer.embed`` gives): stored ones where found, the CSE's
        for the rest (which are then stored)."""
        slots = [self.slots[id(prompt)] for prompt in prompts]
        missing = [(position, d) for position, slot in enumerate(slots)
                   for d, entry in enumerate(self.entries[slot]) if entry is None]
        contexts = self._contexts(prompts, missing)
        computed = dict(zip(missing, self.reader.encoder.encode_contexts(contexts))) if missing else {}
        self._store(prompts, slots, computed)
        flat = []
        for position, (prompt, slot) in enumerate(zip(prompts, slots)):
            parts = [entry.embeddings if entry is not None else computed[(position, d)]
                     for d, entry in enumerate(self.entries[slot])]
            flat.append(torch.cat(parts) if parts else torch.zeros(0))
        return flat

    def _contexts(self, prompts: Sequence[Segmented], missing: list[tuple[int, int]]) -> list[list[list[int]]]:
        """The token ids of each missing document's sentences: the counter's where they are the CSE's, else read."""
        encoder, contexts, unread = self.reader.encoder, [], []
        for position, d in missing:
            prompt = prompts[position]
            first = sum(len(spans) for spans in prompt.spans[:d])
            if prompt.sentence_ids is not None and prompt.ids_tokenizer == encoder.tokenizer_fingerprint:
                contexts.append(list(prompt.sentence_ids[first: first + len(prompt.spans[d])]))
            else:
                contexts.append(None)
                unread.append((len(contexts) - 1, prompt.sentences[first: first + len(prompt.spans[d])]))
        fresh = iter(encoder.tokenize([sentence for _, sentences in unread for sentence in sentences]))
        for index, sentences in unread:
            contexts[index] = [next(fresh) for _ in sentences]
        return contexts

    def _store(self, prompts: Sequence[Segmented], slots: list[int],
               computed: dict[tuple[int, int], torch.Tensor]) -> None:
        reader, own_counts, items, seen = self.reader, self.counter is self.reader.default_counter, [], set()
        for (position, d), matrix in computed.items():
            key, prompt = self.keys[slots[position]][d], prompts[position]
            if key is None or key in seen:
                continue
            seen.add(key)
            document, spans = prompt.documents[d], prompt.spans[d]
            counts, tokens = prompt.counts[d], prompt.document_tokens[d]
            if not own_counts:  # the entry holds the CSE tokenizer's counts, whatever the caller counts with
                default = reader.default_counter
                counts = tuple(default.count_many([document[s:e] for s, e in spans]))
                tokens = default.count_from_sentences(document, spans, counts)
                tokens = default(document) if tokens is None else tokens
            items.append((key, Entry(tuple(spans), tuple(counts), tokens, matrix, len(document), reader.fingerprint)))
        self.written += reader.cache.put_many(items)
