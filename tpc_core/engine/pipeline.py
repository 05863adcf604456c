"""The batch loop: prompts read, their tasks found, their sentences scored and selected, results built.

:class:`Engine` is one checkpoint's algorithm with its models loaded (the CSE behind its scorer, the task finder
with its request head and CTD, the salience head): :class:`tpc_core.TPCCompressor` builds one and is a facade over
it, and a conversation (:mod:`tpc_core.conversation`) runs one engine call through it. The route of one prompt is
written once, in docs/ARCHITECTURE.md ("The route of one prompt").
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from tpc_core.config import AgnosticConfig
from tpc_core.diagnostics.caller import warn_at_caller
from tpc_core.diagnostics.language import LanguageNotice
from tpc_core.diagnostics.notices import operator_notice
from tpc_core.diagnostics.progress import progress_preference
from tpc_core.engine.cancellation import check_cancelled
from tpc_core.engine.options import CompressionOptions, as_documents
from tpc_core.engine.output.result import CompressionResult, to_result
from tpc_core.engine.reading import (
    DocumentStore,
    DocumentStores,
    EmbedDocuments,
    LazyEmbeddings,
    ReadBatch,
    read_prompts,
    segment,
)
from tpc_core.engine.scoring.salience import Salience
from tpc_core.engine.scoring.scorers import Scorer, needs_embeddings, score_prompts
from tpc_core.engine.scoring.threads import small_pass_threads
from tpc_core.engine.selection.assembly import compress_scored
from tpc_core.engine.task.finder import FoundRequest, TaskFinder
from tpc_core.engine.task.missed import MissedRequestWarning, missed_message, warns_missed
from tpc_core.engine.tokens import TokenCounter
from tpc_core.engine.values import Scored, Segmented
from tpc_core.options.checks import check_splitter
from tpc_core.segmentation import SentenceSplitter, get_splitter

__all__ = ["BudgetLabel", "Engine"]

logger = logging.getLogger(__name__)

BudgetLabel = Callable[[int], str]
"""A prompt's budget (tokens) as a warning names it, e.g. ``"the 7 tokens your budget of 20 leaves ..."``."""


@dataclass
class Engine:
    """One checkpoint's algorithm, its models loaded. Thread-safe: every call reads its own batch.

    Attributes:
        scorer: The checkpoint's scorer (its ``embed_documents`` is the per-document step a cache wraps).
        task_finder: The prompt-agnostic task finder (request head, CTD).
        agnostic: The checkpoint's prompt-agnostic settings (coverage weights, redundancy).
        default_counter: The CSE tokenizer's counter (what ``token_counter=None`` means; a store's counts are its).
        default_splitter: The checkpoint's splitter name (what ``splitter=None`` means).
        salience: The checkpoint's salience models, if it has any.
        language: Notices prompts in a script the checkpoint's languages are not written in (``None``: the
            checkpoint declares no languages).
        cache_stores: Resolves a call's ``cache`` option into the stores it reads through (the compressor's: one
            cache per value, keyed by its model); ``None``: an engine that takes no ``cache``.
    """

    scorer: Scorer
    task_finder: TaskFinder
    agnostic: AgnosticConfig
    default_counter: TokenCounter
    default_splitter: str
    salience: Salience | None = None
    language: LanguageNotice | None = None
    cache_stores: Callable[[Any], DocumentStores | None] | None = field(default=None, repr=False)
    _splitters: dict[str, SentenceSplitter] = field(default_factory=dict, repr=False)
    _splitters_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def embed_documents(self) -> EmbedDocuments:
        """The scorer's per-document step (``Scorer.embed_documents``): what a sentence cache wraps."""
        return self.scorer.embed_documents

    def splitter(self, splitter: str | SentenceSplitter | None = None) -> SentenceSplitter:
        """The sentence splitter for ``splitter`` (a name, an object with ``spans(text)``, or ``None``: the
        checkpoint's own); named splitters are built once and shared."""
        if splitter is None:
            splitter = self.default_splitter
        if not isinstance(splitter, str):
            checked: SentenceSplitter = check_splitter(splitter)  # the options' own check: it has spans(text)
            return checked
        check_splitter(splitter)  # a name of a built-in splitter
        with self._splitters_lock:
            if splitter not in self._splitters:
                self._splitters[splitter] = get_splitter(splitter)
            return self._splitters[splitter]

    def compress(self, documents: Sequence[tuple[str, ...]], questions: Sequence[str | None], counter: TokenCounter,
                 options: CompressionOptions, *, budget_label: BudgetLabel | None = None) -> list[CompressionResult]:
        """Compress checked prompts (each a tuple of documents), ``options.batch_size`` at a time: read (through
        the store ``options.cache`` resolves to, :attr:`cache_stores`) → tasks → scores → budget and assembly →
        result.

        ``budget_label`` names a prompt's budget in the warnings (default ``"the whole budget of N tokens"``): a
        caller whose budget here is a share of the user's (a conversation, a tool result) says whose and what took
        the rest.

        Raises:
            ValueError: ``options.cache`` names a cache and this engine has no ``cache_stores`` (it would run
                uncached).

        Warns:
            UserWarning: At the caller's line, when sentences larger than the whole budget were skipped (also
                counted in ``CompressionResult.oversized_sentences``).
            TPCRuntimeWarning: Once per script and engine, for a prompt mostly in a script the checkpoint's
                languages are not written in (:mod:`tpc_core.diagnostics.language`).

        Logs:
            WARNING: Once per call, when the output keeps only part of a sentence the splitter cut for its length
                (also counted in ``CompressionResult.truncated_sentences``).
            MissedRequestWarning: Once per call, at the caller's line, when a prompt with no question fell back (or
                only points at a request) although a sentence outside its material asks the reader; not inside
                :func:`tpc_core.engine.task.missed.index_time` (:mod:`tpc_core.engine.task.missed`).
        """
        from tqdm.auto import tqdm

        stores = None
        if options.cache is not None:
            if self.cache_stores is None:
                raise ValueError("This engine has no cache_stores to resolve cache= with (it would run uncached): "
                                 "compress through TPCCompressor, whose engine has one.")
            stores = self.cache_stores(options.cache)
        if self.language is not None:
            self.language.check(documents)
        split = self.splitter(options.splitter)
        store = None if stores is None else stores.for_splitter(split)
        chunks = range(0, len(documents), options.batch_size)
        show = options.show_progress
        progress = tqdm(chunks, desc="tpc compress", unit="batch",
                        disable=(not show) if show is not None else (len(chunks) <= 1 or None))
        results: list[CompressionResult] = []
        missed: list[tuple[int, tuple[int, int, int]]] = []
        # The preference covers one-time work in the call too (a model converted on first use).
        with progress_preference(show), small_pass_threads(options.small_pass_threads):
            self._compress_batches(documents, questions, counter, options, progress, split, store, results, missed)
        self._warn(results, split, budget_label)
        if missed and warns_missed():  # one warning per call, however many prompts
            warn_at_caller(missed_message(missed), MissedRequestWarning)
        return results

    def _compress_batches(self, documents: Sequence[tuple[str, ...]], questions: Sequence[str | None],
                          counter: TokenCounter, options: CompressionOptions, progress: Any, split: SentenceSplitter,
                          store: DocumentStore | None, results: list[CompressionResult],
                          missed: list[tuple[int, tuple[int, int, int]]]) -> None:
        separator = options.document_separator
        for first in progress:
            check_cancelled()
            batch = slice(first, first + options.batch_size)
            read = read_prompts(documents[batch], split, counter, options, self.scorer.embed, store,
                                self.embed_documents, self.default_counter)
            for k, prompt in enumerate(self.score(read.prompts, list(questions[batch]), separator,
                                                  options.describe_bare, read.embed)):
                if prompt.task is not None and prompt.task.missed is not None:
                    missed.append((len(results), prompt.task.missed))
                result = to_result(compress_scored(prompt, options, counter, self.agnostic.redundancy), separator)
                if read.hits is not None and read.misses is not None:
                    result = dataclasses.replace(result, cache_hits=read.hits[k], cache_misses=read.misses[k])
                results.append(result)

    @staticmethod
    def _warn(results: list[CompressionResult], split: SentenceSplitter, budget_label: BudgetLabel | None) -> None:
        """The call's warnings: a request over its budget, sentences larger than it, sentences cut for length."""
        for result in results:
            if result.over_budget:
                warn_at_caller(f"The request this prompt writes ({result.request_sentences} sentence(s)) is larger "
                               f"than the budget of {result.budget} tokens: it is kept whole, {result.over_budget} "
                               f"token(s) over (the request is never dropped; raise the budget or pass the question "
                               f"as question=).")
            if result.oversized_sentences:
                label = budget_label(result.budget) if budget_label is not None else \
                    f"the whole budget of {result.budget} tokens"
                warn_at_caller(f"{result.oversized_sentences} sentence(s) are larger than {label} and were skipped (a "
                               "sentence is not shortened to fit).")
        truncated = sum(result.truncated_sentences for result in results)
        if truncated:  # one warning per call, however many prompts
            # the length cap of the built-in splitters (get_splitter); a caller's own splitter may state none
            limit = getattr(split, "max_sentence_chars", "the splitter's limit of")
            operator_notice(logger, f"{truncated} sentence(s) longer than {limit} characters were "
                                    "cut at word boundaries into pieces, and the output keeps only some pieces of "
                                    "them, so it holds part of a sentence (CompressionResult.truncated_sentences "
                                    "counts them; get_splitter(name, max_sentence_chars=...) sets the limit).")

    def score(self, prompts: list[Segmented], questions: list[str | None], separator: str,
              describe_bare: bool = True, embed: Callable[[list[Segmented]], list[torch.Tensor]] | None = None,
              ) -> list[Scored]:
        """Tasks and scores of the prompts that are over budget, and their embeddings (``embed``, default the
        scorer's) where finding the task or scoring it reads them; the others pass through unscored.

        A prompt whose task needs no embeddings (:func:`~tpc_core.engine.scoring.scorers.needs_embeddings`: a bare
        document scored by the lead correction) is never encoded: no CSE pass, and through a cache, no entry
        written."""
        over_budget = [k for k, prompt in enumerate(prompts) if prompt.needs_scoring]
        scored = [Scored(prompt) for prompt in prompts]
        if not over_budget:
            return scored
        to_score = [prompts[k] for k in over_budget]
        lazy = LazyEmbeddings(embed or self.scorer.embed, to_score)
        tasks = self.task_finder.find(to_score, lazy.deferred(), [questions[k] for k in over_budget],
                                      separator=separator, describe_bare=describe_bare)
        check_cancelled()
        embeddings = lazy.get([k for k, task in enumerate(tasks)
                               if needs_embeddings(task, self.agnostic, self.salience)])
        check_cancelled()
        for k, prompt in zip(over_budget, score_prompts(self.scorer, to_score, embeddings, tasks, self.agnostic,
                                                        salience=self.salience)):
            scored[k] = prompt
        return scored

    def read_whole(self, prompts: list[str]) -> tuple[list[Segmented], list[torch.Tensor]]:
        """Whole prompts segmented with the default splitter and counter, and their sentence embeddings."""
        segmented = self.segment_whole(prompts)
        return segmented, self.scorer.embed(segmented)

    def segment_whole(self, prompts: list[str]) -> list[Segmented]:
        """Whole prompts segmented with the default splitter and counter (not embedded)."""
        options = CompressionOptions()
        return [segment((prompt,), self.splitter(), self.default_counter, options) for prompt in prompts]

    def read_whole_lazily(self, prompts: list[str]) -> tuple[list[Segmented], list[Callable[[], torch.Tensor]]]:
        """Whole prompts segmented, each with what embeds it (called only by a reader that needs the embeddings)."""
        segmented = self.segment_whole(prompts)
        return segmented, [functools.partial(self._embed_one, prompt) for prompt in segmented]

    def _embed_one(self, prompt: Segmented) -> torch.Tensor:
        return self.scorer.embed([prompt])[0]

    def describe(self, prompts: list[str]) -> list[str]:
        """The task description of each whole prompt (:meth:`TaskFinder.descriptions`).

        Raises:
            TypeError: A prompt that is not a string.
            ValueError: A prompt with a lone surrogate (before a tokenizer sees it).
        """
        for position, prompt in enumerate(prompts):
            if not isinstance(prompt, str):
                raise TypeError(f"describe_task takes strings; prompt {position} is {type(prompt).__name__}.")
            as_documents(prompt, position)
        return self.task_finder.descriptions(prompts, self.read_whole,
                                             separator=CompressionOptions().document_separator)

    def find_request(self, prompt: str) -> FoundRequest | None:
        """The request ``prompt`` writes, as the request head alone finds it (:meth:`TaskFinder.find_request`).

        The prompt is embedded only where the head has a choice to make (structure placing one request needs none):
        a conversation's latest user turn is then read once, by the engine call that compresses it."""
        return self.task_finder.find_request(prompt, self.read_whole_lazily)

    def warm(self, texts: Sequence[str], store: DocumentStore, splitter: SentenceSplitter, batch_size: int) -> int:
        """Store every text ``store`` lacks (its spans, counts and embeddings), without compressing; returns the
        entries written.

        Raises:
            TypeError: A single string, or a text that is not a string.
            ValueError: A text with a lone surrogate, or a ``batch_size`` that is not a positive int.
        """
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}.")
        if isinstance(texts, str):
            raise TypeError("warm_cache takes a list of texts, not a single string.")
        unique = list(dict.fromkeys(as_documents(text, position)[0] for position, text in enumerate(texts)))
        unique = [text for text in unique if text.strip()]
        missing = [text for text, held in zip(unique, store.get_many(unique)) if held is None]
        written = 0
        options = CompressionOptions()
        counter = self.default_counter
        for first in range(0, len(missing), batch_size):
            chunk = missing[first: first + batch_size]
            batch = ReadBatch([segment((text,), splitter, counter, options) for text in chunk], self.scorer.embed,
                              store, self.embed_documents, [[None] for _ in chunk], counter, counter)
            batch.embed(batch.prompts)
            written += batch.written
        return written
