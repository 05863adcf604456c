"""Reading a batch of prompts: each split into sentences, counted, and its sentences embedded per document.

:func:`segment` splits and counts one prompt and resolves its budget. :func:`read_prompts` does it for a batch and
returns a :class:`ReadBatch`, whose :meth:`~ReadBatch.embed` gives the sentence embeddings of the prompts the
engine scores, read by the scorer's per-document step (``Scorer.embed_documents``). A sentence cache is a wrapper
around that step (a :class:`DocumentStore`, :mod:`tpc_core.cache.documents`): it gives back what it holds for a
document (its spans and counts at segmentation, its embeddings at the embedding step) and stores what the scorer
computes for the others, keyed by the scorer's identity. The engine never resolves a ``cache=`` value: the caller
hands it the store (:class:`DocumentStores`, one per splitter) it resolved.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import torch

from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.selection.budget import CountTokens, joined_count, resolve_budget
from tpc_core.engine.tokens import TokenCounter
from tpc_core.engine.values import DocumentSentences, KnownDocument, Segmented, Span
from tpc_core.segmentation import LineAwareSplitter, SentenceSplitter, split_sentences
from tpc_core.segmentation.length import cut_sentences

__all__ = ["DocumentStore", "DocumentStores", "EmbedDocuments", "EmbedPrompts", "LazyEmbeddings", "ReadBatch", "Stored",
           "embed_prompts", "read_prompts", "segment"]

EmbedDocuments = Callable[[Sequence[DocumentSentences]], Sequence[torch.Tensor]]
"""A scorer's per-document step: each document's sentence embeddings ``(n_sentences, d)``, each sentence read inside
its document (``Scorer.embed_documents``)."""

EmbedPrompts = Callable[[Sequence[Segmented]], list[torch.Tensor]]
"""A scorer's ``embed``: each prompt's sentence embeddings, flat ``(n_sentences, d)``."""


@dataclass(frozen=True)
class Stored:
    """What a store holds of one document, all under the engine's default counter (the CSE tokenizer).

    Attributes:
        spans: Its sentence spans.
        counts: Each sentence's count.
        document_tokens: The document's count.
        embeddings: Its sentence embeddings ``(n_sentences, d)``, as the scorer's per-document step gave them.
    """

    spans: tuple[Span, ...]
    counts: tuple[int, ...]
    document_tokens: int
    embeddings: torch.Tensor


class DocumentStore(Protocol):
    """A cache around the per-document step, keyed by document text (and, inside it, the scorer's identity).

    ``get_many`` returns, per text, what it holds (anything with :class:`Stored`'s attributes) or ``None``;
    ``put_many`` stores documents and returns how many it wrote. Neither raises for a failing backend (the
    store logs and counts it).
    """

    def get_many(self, texts: Sequence[str]) -> list[Any]: ...

    def put_many(self, items: Sequence[tuple[str, Stored]]) -> int: ...


class DocumentStores(Protocol):
    """A ``cache=`` value as the facade resolved it, for this engine's model: the :class:`DocumentStore` of the
    documents one splitter cuts (``None``: that splitter's documents are not cached)."""

    def for_splitter(self, splitter: SentenceSplitter) -> DocumentStore | None: ...


def embed_prompts(embed_documents: EmbedDocuments, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
    """Each prompt's sentence embeddings, flat ``(n_sentences, d)`` in sentence order: every document of every prompt
    in one ``embed_documents`` call."""
    matrices = list(embed_documents([document for prompt in prompts for document in prompt.per_document]))
    flat = []
    position = 0
    for prompt in prompts:
        documents = matrices[position: position + len(prompt.documents)]
        flat.append(torch.cat(documents) if documents else torch.zeros(0))
        position += len(prompt.documents)
    return flat


class LazyEmbeddings:
    """A batch's sentence embeddings, computed only for the prompts something reads them for.

    ``deferred()`` hands one callable per prompt (what the request head calls where it ranks); ``get(wanted)``
    embeds every wanted prompt not yet embedded in one ``embed`` call. A prompt is embedded at most once.

    Args:
        embed: The batch's ``embed`` (:meth:`ReadBatch.embed`, or the scorer's).
        prompts: The prompts, in order.
    """

    def __init__(self, embed: Callable[[list[Segmented]], list[torch.Tensor]], prompts: Sequence[Segmented]) -> None:
        self._embed = embed
        self._prompts = list(prompts)
        self._done: dict[int, torch.Tensor] = {}

    def deferred(self) -> list[Callable[[], torch.Tensor]]:
        """One callable per prompt, each giving that prompt's embeddings (computed on its first call)."""
        return [functools.partial(self._one, k) for k in range(len(self._prompts))]

    def _one(self, k: int) -> torch.Tensor:
        got = self.get([k])[k]
        assert got is not None
        return got

    def get(self, wanted: Sequence[int]) -> list[torch.Tensor | None]:
        """Every prompt's embeddings where ``wanted`` names it (the missing ones in one call), else ``None``."""
        missing = sorted({k for k in wanted if k not in self._done})
        if missing:
            self._done.update(zip(missing, self._embed([self._prompts[k] for k in missing])))
        chosen = set(wanted)
        return [self._done[k] if k in chosen else None for k in range(len(self._prompts))]


def read_prompts(documents: Sequence[tuple[str, ...]], splitter: SentenceSplitter, counter: TokenCounter,
                 options: CompressionOptions, embed: EmbedPrompts, store: DocumentStore | None = None,
                 embed_documents: EmbedDocuments | None = None,
                 default_counter: TokenCounter | None = None) -> ReadBatch:
    """Segment a batch of prompts (each a tuple of documents). Without a store they are embedded by ``embed`` (the
    scorer's). Through ``store`` (with ``embed_documents``, the scorer's per-document step): a document it holds is
    not split again, nor counted again where ``counter`` is ``default_counter`` (the store's counts are that
    counter's), and its embeddings are not computed again."""
    if store is None or embed_documents is None:
        return ReadBatch([segment(docs, splitter, counter, options) for docs in documents], embed)
    texts = list(dict.fromkeys(doc for docs in documents for doc in docs if doc.strip()))
    found = dict(zip(texts, store.get_many(texts)))
    own = counter is default_counter
    prompts = []
    entries = []
    for docs in documents:
        held = [found.get(doc) if doc.strip() else None for doc in docs]
        known = [None if entry is None else KnownDocument(
            tuple(entry.spans), tuple(entry.counts) if own else None, entry.document_tokens if own else None)
            for entry in held]
        prompts.append(segment(docs, splitter, counter, options, known if any(known) else None))
        entries.append(held)
    return ReadBatch(prompts, embed, store, embed_documents, entries, counter, default_counter)


@dataclass
class ReadBatch:
    """A batch of prompts read: segmented, and embedded on demand (only the prompts the engine scores).

    Attributes:
        prompts: The segmented prompts, in order.
        embed_prompts: The scorer's ``embed`` (what embeds them without a store).
        store: The store the batch reads through (``None``: no cache).
        embed_documents: The scorer's per-document step (with a store: what computes the documents it lacks).
        entries: Per prompt, per document, what the store held (``None`` for a document it lacked).
        counter: The caller's counter.
        default_counter: The counter whose counts a store holds.
        hits: Per prompt, its documents the store held (``None`` without a store).
        misses: Per prompt, its non-blank documents the store lacked (``None`` without a store).
        written: Documents this batch stored.
    """

    prompts: list[Segmented]
    embed_prompts: EmbedPrompts
    store: DocumentStore | None = None
    embed_documents: EmbedDocuments | None = None
    entries: list[list[Any]] | None = None
    counter: TokenCounter | None = None
    default_counter: TokenCounter | None = None
    hits: list[int] | None = field(default=None, init=False)
    misses: list[int] | None = field(default=None, init=False)
    written: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.entries is not None:
            self.hits = [sum(entry is not None for entry in held) for held in self.entries]
            self.misses = [sum(bool(doc.strip()) for doc in prompt.documents) - hits
                           for prompt, hits in zip(self.prompts, self.hits)]
        self._slots = {id(prompt): slot for slot, prompt in enumerate(self.prompts)}

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """Each prompt's sentence embeddings, flat: the store's where it holds the document, the scorer's for the
        rest (which are then stored)."""
        if self.store is None or self.entries is None or self.embed_documents is None:
            return self.embed_prompts(prompts)
        slots = [self._slots[id(prompt)] for prompt in prompts]
        missing = [(position, d) for position, slot in enumerate(slots)
                   for d, entry in enumerate(self.entries[slot]) if entry is None]
        computed = dict(zip(missing, self.embed_documents([prompts[k].per_document[d] for k, d in missing]))) \
            if missing else {}
        self._store(prompts, computed)
        flat = []
        for position, slot in enumerate(slots):
            parts = [entry.embeddings if entry is not None else computed[(position, d)]
                     for d, entry in enumerate(self.entries[slot])]
            flat.append(torch.cat(parts) if parts else torch.zeros(0))
        return flat

    def _store(self, prompts: Sequence[Segmented], computed: dict[tuple[int, int], torch.Tensor]) -> None:
        """Store every computed non-blank document once, with the default counter's counts."""
        assert self.store is not None
        default = self.default_counter
        items = []
        seen = set()
        for (position, d), matrix in computed.items():
            prompt = prompts[position]
            document = prompt.documents[d]
            spans = prompt.spans[d]
            if not document.strip() or document in seen:
                continue
            seen.add(document)
            counts = prompt.counts[d]
            tokens = prompt.document_tokens[d]
            if default is not None and self.counter is not default:
                # a store holds the default counter's counts, whatever the caller counts with
                counts = tuple(default.count_many([document[s:e] for s, e in spans]))
                exact = default.count_from_sentences(document, spans, counts)
                tokens = default(document) if exact is None else exact
            items.append((document, Stored(tuple(spans), tuple(counts), tokens, matrix)))
        self.written += self.store.put_many(items)


def segment(documents: tuple[str, ...], splitter: SentenceSplitter, counter: CountTokens,
            options: CompressionOptions, known: Sequence[KnownDocument | None] | None = None) -> Segmented:
    """Split documents into sentence spans, count sentences and documents, and resolve the budget.

    ``known`` gives, document by document, what a sentence cache already holds (``None`` for the others): a
    known document is not split again, and not counted again where its counts are the counter's. The CSE's token
    ids are kept only when every sentence was counted here.

    Raises:
        ValueError: A custom splitter returned spans that break the contract (unsorted, overlapping, padded
            with whitespace, out of range, or leaving text uncovered): checked here, where every splitter's
            spans enter the pipeline, so they can never reach selection or the output.
    """
    known = list(known) if known is not None else [None] * len(documents)
    spans = tuple(entry.spans if entry is not None else tuple(split_sentences(doc, splitter)) if doc.strip() else ()
                  for doc, entry in zip(documents, known))
    given_counts = [entry.counts if entry is not None else None for entry in known]
    given = [entry_counts is not None for entry_counts in given_counts]
    sentences = [doc[s:e] for doc, doc_spans, own in zip(documents, spans, given) if not own for s, e in doc_spans]
    # The default counter hands back the token ids its counts came from: the CSE reuses them (one tokenizer pass).
    encoded = getattr(counter, "encode_many", lambda _: None)(sentences) if sentences else None
    flat_counts = encoded.counts if encoded is not None else counter.count_many(sentences) if sentences else []
    counts: list[tuple[int, ...]] = []
    position = 0
    for doc_spans, entry_counts in zip(spans, given_counts):
        if entry_counts is not None:
            counts.append(entry_counts)
        else:
            counts.append(tuple(flat_counts[position: position + len(doc_spans)]))
            position += len(doc_spans)
    known_tokens = [entry.tokens if entry is not None and entry.counts is not None else None for entry in known]
    document_tokens = _document_tokens(counter, documents, spans, counts, known_tokens)
    origin = joined_count(counter, list(documents), document_tokens, options.document_separator)
    budget = resolve_budget(origin, target_tokens=options.target_tokens, rate=options.rate)
    whole = encoded if encoded is not None and not any(given) else None
    return Segmented(documents, spans, tuple(counts), document_tokens, origin, budget,
                     tuple(whole.ids) if whole is not None else None, whole.tokenizer if whole is not None else None,
                     _cut_sentences(documents, spans, splitter))


def _cut_sentences(documents: tuple[str, ...], spans: tuple[tuple[Span, ...], ...],
                   splitter: SentenceSplitter) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Each document's sentences a built-in splitter's length cap cut into pieces (a custom splitter's spans are its
    own: nothing is known of them)."""
    if not isinstance(splitter, LineAwareSplitter):
        return ()
    uncapped = replace(splitter, max_sentence_chars=sys.maxsize).spans
    cuts = tuple(cut_sentences(doc, doc_spans, splitter.max_sentence_chars, uncapped)
                 for doc, doc_spans in zip(documents, spans))
    return cuts if any(cuts) else ()


def _document_tokens(counter: CountTokens, documents: tuple[str, ...], spans: tuple[tuple[Span, ...], ...],
                     counts: list[tuple[int, ...]], given: Sequence[int | None]) -> tuple[int, ...]:
    """Each document's count: ``given`` (a cache entry's), else from its sentences' where the counter can tell it
    exactly (``TokenCounter.count_from_sentences``: the default counter), else one count of the rest."""
    from_sentences = getattr(counter, "count_from_sentences", lambda *_: None)
    known = [tokens if tokens is not None else from_sentences(doc, doc_spans, doc_counts)
             for doc, doc_spans, doc_counts, tokens in zip(documents, spans, counts, given)]
    missing = [doc for doc, count in zip(documents, known) if count is None]
    fresh = iter(counter.count_many(missing) if missing else [])
    return tuple(next(fresh) if count is None else count for count in known)
