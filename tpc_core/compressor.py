"""TPCCompressor: the public entry point (paper Algorithm 1), a facade over the engine.

It loads a checkpoint (``loading``), builds one :class:`~tpc_core.engine.pipeline.Engine` over its models, checks
every call's arguments and hands the work on: the batch loop, the cache behind the scorer and every stage live in
the engine. The route of one prompt is written once, in docs/ARCHITECTURE.md ("The route of one prompt").

A new keyword option of ``compress`` / ``compress_batch`` is one field of :class:`tpc_core.options.CompressOptions`
(type, default, documentation, check); the typed ``**options`` (``CompressKeywords``) are generated from it, and the
stage that uses it reads it from the options. Neither method's signature or docstring lists the options.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Union, overload

import torch

from tpc_core.cache import CacheInfo, CacheRegistry
from tpc_core.cache.documents import ModelCache
from tpc_core.config import TPCConfig
from tpc_core.conversation.compress import ConversationResult, compress_conversation
from tpc_core.engine.options import CompressionOptions, CompressKeywords, Unpack, as_documents, as_questions
from tpc_core.engine.output.result import CompressionResult
from tpc_core.engine.pipeline import Engine
from tpc_core.engine.scoring.cse import ContextSentenceEncoder
from tpc_core.engine.scoring.scorers import Scorer, build_scorer
from tpc_core.engine.selection.budget import BUDGET_SCOPES
from tpc_core.engine.task.ctd import TaskDescriptor
from tpc_core.engine.task.finder import FoundRequest, TaskFinder
from tpc_core.engine.tokens import TokenCounter, TokenCounterSpec, resolve_token_counter
from tpc_core.loading.checkpoint import HubOptions
from tpc_core.loading.copying import picklable_state, restore_state
from tpc_core.loading.heads import load_request_head, load_salience
from tpc_core.loading.identity import cse_identity
from tpc_core.loading.lazy_ctd import LazyDescriptor
from tpc_core.loading.pretrained import PretrainedMixin
from tpc_core.loading.registry import language_notice
from tpc_core.options import Emptied
from tpc_core.segmentation import SentenceSplitter

__all__ = ["TPCCompressor", "Context", "BUDGET_SCOPES", "model_fingerprint"]

Context = Union[str, Sequence[str]]


class TPCCompressor(PretrainedMixin):
    """Compresses prompts by keeping the sentences most relevant to a question or a generated task description.

    Build one with :meth:`from_pretrained`. The CTD (prompt-agnostic mode) is loaded on first use, so
    prompt-aware users never pay for it. One instance may be shared across threads: only the CTD (loaded
    lazily, its tokenizer's settings changed per call) is guarded, so a slow prompt-agnostic call never
    blocks prompt-aware calls.

    Example:
        >>> compressor = TPCCompressor.from_pretrained("tpc-mini")
        >>> result = compressor.compress(long_text, question="Who founded the company?", rate=0.2)
        >>> result.compressed_prompt, result.ratio
    """

    def __init__(self, config: TPCConfig, encoder: ContextSentenceEncoder, *, checkpoint_dir: Path,
                 hub_options: HubOptions, device: torch.device, dtype: torch.dtype,
                 descriptor: TaskDescriptor | None = None, load_ctd: bool = False) -> None:
        self.config = config
        self.encoder = encoder
        self.checkpoint_dir = Path(checkpoint_dir)
        self.hub_options = hub_options
        self.device = device
        self.dtype = dtype
        self._ctd = LazyDescriptor(config, self.checkpoint_dir, hub_options, device, dtype, descriptor)
        # The heads are a few hundred kB: loaded here, so a bad path in the config fails at load time.
        self._scorer: Scorer = build_scorer(config.scorer, encoder)
        self._request_head = load_request_head(config.agnostic, self.checkpoint_dir)
        self._salience = load_salience(config.agnostic, self.checkpoint_dir)
        self._default_counter = resolve_token_counter(None, encoder.tokenizer)
        self._caches = CacheRegistry()  # cache="memory" on two calls, or one directory, is one cache
        self.engine = self._new_engine()
        if load_ctd:
            self._ctd.get()

    # copy.deepcopy and pickle (Ray actors, multiprocessing) carry the models by value; the engine (its splitters,
    # and a task finder that holds this compressor's CTD) is rebuilt and caches start empty (loading.copying).
    _CACHES = {"engine": lambda: None, "_caches": CacheRegistry}

    def __getstate__(self) -> dict[str, Any]:
        return picklable_state(self.__dict__, self._CACHES)

    def __setstate__(self, state: dict[str, Any]) -> None:
        restore_state(self, state, self._CACHES)
        self.engine = self._new_engine()

    def _new_engine(self) -> Engine:
        """The engine over this checkpoint's models: its scorer, request head, CTD, salience head and splitter."""
        finder = TaskFinder(self.config.agnostic, self._request_head,
                            self._ctd.describe if self.config.ctd is not None else None, name=self.config.name)
        return Engine(self._scorer, finder, self.config.agnostic, self._default_counter, self.config.splitter,
                      self._salience, language_notice(self.config.name, self.config.languages),
                      cache_stores=self._cache_store)

    @functools.cached_property
    def _cache_fingerprint(self) -> dict[str, Any]:
        """What this compressor's cache entries depend on: the CSE's weights by content, its config, tokenizer and
        dtype, and what the scorer embeds (``Scorer.identity``); the splitter and the storage dtype are added per
        cache (:func:`tpc_core.cache.fingerprint`)."""
        return {**cse_identity(self.config, self.checkpoint_dir, None, self.dtype, source=self.encoder.source),
                "tokenizer": self.encoder.tokenizer_fingerprint, "embedding": self._scorer.identity}

    def _cache_store(self, spec: Any) -> ModelCache | None:
        """A ``cache=`` value resolved (once, here) into the store the engine receives: this compressor's cache for
        that value (one per value, :class:`~tpc_core.cache.resolve.CacheRegistry`) under its model's fingerprint;
        ``None`` for no cache.

        Raises:
            TypeError, ValueError, PermissionError, ImportError: A value ``cache=`` refuses
                (:func:`~tpc_core.cache.resolve.resolve_cache`).
        """
        cache = self._caches.resolve(spec)
        return None if cache is None else ModelCache(cache, self._cache_fingerprint)

    def _swap_scorer(self, scorer: Scorer) -> None:
        """Score with ``scorer`` from now on: the engine is rebuilt around it (the cache keys follow what it embeds).
        ``from_pretrained(scorer=...)`` is the public way to choose a scorer."""
        self._scorer = scorer
        self.__dict__.pop("_cache_fingerprint", None)  # entries are keyed by what the scorer embeds
        self.engine = self._new_engine()

    @property
    def token_counter(self) -> TokenCounter:
        """The default counter: the CSE tokenizer, no special tokens, no truncation; a word too long for
        WordPiece (which would be one ``[UNK]``) counts as its 100-character pieces (see ``tpc_core.engine.tokens``)."""
        return self._default_counter

    def compress(self, context: Context, question: str | None = None, target_tokens: int | None = None,
                 rate: float | None = None, token_counter: TokenCounterSpec = None,
                 **options: Unpack[CompressKeywords]) -> CompressionResult:
        """Compress one prompt.

        Args:
            context: The text, or a list of documents sharing one budget.
            question: The user's question (prompt-aware). ``None`` or blank: prompt-agnostic — the prompt's own
                request where the request head finds one, otherwise the CTD's task description, is used.
            target_tokens: Budget in tokens (exclusive with ``rate``).
            rate: Fraction of tokens to keep, in (0, 1]; default 0.2.
            token_counter: How budgets are counted: ``None`` (the CSE tokenizer), a tokenizer, a name/path or
                a ``Callable[[str], int]``.
            **options: The keyword options, each typed and documented in
                :class:`~tpc_core.options.CompressKeywords` (``show_progress`` excepted: one prompt shows
                no progress bar).

        Returns:
            A :class:`CompressionResult`; its text is made only of original sentences, verbatim, in order, and
            ``compressed_tokens == count(compressed_prompt) <= budget`` for the counter used.
        """
        if question is not None and not isinstance(question, str):
            raise TypeError(f"question must be a str or None, got {type(question).__name__}.")
        if "show_progress" in options:
            raise TypeError("compress takes one prompt and shows no progress bar: show_progress is an option of "
                            "compress_batch.")
        # show_progress stays None: one prompt is one batch, which draws no batch bar; one-time work of the call (a
        # model converted on first use) says so on a terminal (tpc_core.diagnostics.progress)
        return self.compress_batch([context], question=[question], target_tokens=target_tokens, rate=rate,
                                   token_counter=token_counter, **options)[0]

    def compress_batch(self, contexts: Sequence[Context], question: str | Sequence[str | None] | None = None,
                       target_tokens: int | None = None, rate: float | None = None,
                       token_counter: TokenCounterSpec = None,
                       **options: Unpack[CompressKeywords]) -> list[CompressionResult]:
        """Compress many prompts, batching the model calls across them. Thread-safe.

        Args:
            contexts: Prompts; each a string or a list of documents.
            question: One question for all, one per prompt, or ``None`` (prompt-agnostic).
            target_tokens: Budget in tokens for each prompt (exclusive with ``rate``).
            rate: Kept fraction for each prompt; default 0.2.
            token_counter: See :meth:`compress`.
            **options: The keyword options (``budget_scope``, ``top_n``, ``batch_size``, ...), each typed, documented
                and given its default in :class:`~tpc_core.options.CompressKeywords`.

        Warns:
            UserWarning: At the caller's line, when sentences larger than the whole budget were skipped
                (also counted in ``CompressionResult.oversized_sentences``).

        Raises:
            TypeError: A context that is not a string or a list of strings, an unknown keyword (the message names
                it and the accepted ones), or a wrongly typed option.
            ValueError: An impossible budget, an unknown ``budget_scope``, a bad regex or ``batch_size``, a
                mismatched question count, or a text with a lone surrogate (decode it with errors="replace").
        """
        settings = CompressionOptions.build(target_tokens=target_tokens, rate=rate, **options)
        if isinstance(contexts, str) or not isinstance(contexts, Sequence):
            raise TypeError("compress_batch takes a list of prompts; use compress() for a single string.")
        documents = [as_documents(context, position) for position, context in enumerate(contexts)]
        questions = as_questions(question, len(documents))
        counter = self._default_counter if token_counter is None else resolve_token_counter(token_counter)
        return self.engine.compress(documents, questions, counter, settings)

    @overload
    def compress_messages(self, messages: Sequence[Any], target_tokens: int | None = ..., rate: float | None = ...,
                          token_counter: TokenCounterSpec = ..., *, strict: bool = ..., emptied: Emptied = ...,
                          return_result: Literal[False] = ..., **options: Unpack[CompressKeywords]) -> list[Any]: ...

    @overload
    def compress_messages(self, messages: Sequence[Any], target_tokens: int | None = ..., rate: float | None = ...,
                          token_counter: TokenCounterSpec = ..., *, strict: bool = ..., emptied: Emptied = ...,
                          return_result: Literal[True], **options: Unpack[CompressKeywords]) -> ConversationResult: ...

    def compress_messages(self, messages: Sequence[Any], target_tokens: int | None = None, rate: float | None = None,
                          token_counter: TokenCounterSpec = None, *, strict: bool = False,
                          emptied: Emptied = "sentence", return_result: bool = False,
                          **options: Any) -> list[Any] | ConversationResult:
        """Compress a conversation (dicts, LangChain or LlamaIndex messages) under one budget; the same kind back.

        The latest user turn is the task (a long one is compressed around its request sentences, kept verbatim);
        the other texts are compressed for it, verbatim sentences in order; non-text parts, ids and tool calls are
        kept. ``strict`` and ``emptied`` are :class:`tpc_core.options.ConversationOptions` (the same defaults as the
        adapters'): by default what must be kept whole is kept over a budget too small for it (with a warning, and
        ``over_budget`` in the figures), and a message that loses every sentence keeps one. ``return_result=True``
        returns a :class:`~tpc_core.conversation.compress.ConversationResult`: the messages and the figures (tokens
        before and after, budget, what was kept whole, by how much it is over). Budget, bad input and guarantees:
        :mod:`tpc_core.conversation.compress`.
        """
        result = compress_conversation(self.engine, messages, target_tokens=target_tokens, rate=rate,
                                       token_counter=token_counter, strict=strict, emptied=emptied, **options)
        return result if return_result else result.messages

    # A str is itself a Sequence[str], so the two overloads overlap; the str one is listed first and wins, as in
    # typeshed's own str-or-sequence signatures (a str held in a Sequence[str] variable still gets a str back).
    @overload
    def describe_task(self, prompts: str) -> str: ...  # type: ignore[overload-overlap]

    @overload
    def describe_task(self, prompts: Sequence[str]) -> list[str]: ...

    def describe_task(self, prompts: str | Sequence[str]) -> str | list[str]:
        """The task description prompt-agnostic compression uses for each prompt.

        The prompt's own request sentences where the checkpoint's request head finds them (nothing is
        generated), otherwise the description the CTD writes (:meth:`TaskFinder.descriptions` decides).

        Args:
            prompts: One prompt, or a list of prompts (generated in batches).

        Returns:
            A string for a single prompt, a list (same order) for a list.

        Raises:
            TypeError: If a prompt is not a string.
            ValueError: If a prompt holds a lone surrogate, or a description must be generated and the checkpoint
                has no CTD.
        """
        descriptions = self.engine.describe([prompts] if isinstance(prompts, str) else list(prompts))
        return descriptions[0] if isinstance(prompts, str) else descriptions

    def find_request(self, prompt: str) -> FoundRequest | None:
        """The request ``prompt`` writes (its sentences' spans and words) as the request head alone finds it, or
        ``None`` (:meth:`TaskFinder.find_request`). Raises ``TypeError`` / ``ValueError`` as :meth:`describe_task`."""
        if not isinstance(prompt, str):
            raise TypeError(f"find_request takes a string, got {type(prompt).__name__}.")
        return self.engine.find_request(as_documents(prompt, 0)[0])

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
        split = self.engine.splitter(splitter)
        stores = self._cache_store(cache)
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


def model_fingerprint(compressor: TPCCompressor) -> dict[str, Any]:
    """What the sentence-cache entries ``compressor`` writes depend on (its CSE's weights by content or Hub commits,
    config, tokenizer, dtype, and what its scorer embeds), computed once per compressor: hashing the weights is the
    cost any ``cache=`` pays once per process."""
    return compressor._cache_fingerprint
