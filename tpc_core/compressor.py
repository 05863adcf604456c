"""TPCCompressor: the public entry point (paper Algorithm 1). It orchestrates; the stages do the work.

The route of one prompt through the stages is written once, in docs/ARCHITECTURE.md ("The route of one
prompt"). Loading and saving live in ``loading``.

A new keyword option of ``compress`` / ``compress_batch`` touches ``engine/options.py`` only: its type and
documentation in ``CompressKeywords``, its default and check in ``CompressionOptions``; then the stage that uses
it reads it from the options. Neither method's signature or docstring lists the options.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Union, overload

import torch

from tpc_core.cache import CacheInfo, CacheRegistry
from tpc_core.cache.reading import CacheReader, cache_reader
from tpc_core.config import ScorerConfig, TPCConfig
from tpc_core.engine.scoring.cse import ContextSentenceEncoder
from tpc_core.diagnostics.caller import warn_at_caller
from tpc_core.conversation.compress import compress_conversation
from tpc_core.engine.task.ctd import TaskDescriptor
from tpc_core.loading.devices import resolve_device, resolve_dtype
from tpc_core.loading.copying import picklable_state, restore_state
from tpc_core.loading.hub_cse import pin_hub_revisions
from tpc_core.loading.identity import cse_identity
from tpc_core.loading.checkpoint import (
    HubOptions,
    check_config_paths,
    load_cse_parts,
    load_ctd_parts,
    push_checkpoint,
    resolve_checkpoint_dir,
    save_checkpoint,
)
from tpc_core.engine.options import CompressionOptions, CompressKeywords, Unpack, as_documents, as_questions
from tpc_core.loading.registry import DEFAULT_MODEL
from tpc_core.engine.output.result import CompressionResult
from tpc_core.loading.heads import load_request_head, load_salience_head
from tpc_core.engine.scoring.scorers import Scorer, build_scorer, score_prompts, scorer_class
from tpc_core.segmentation import SentenceSplitter, get_splitter
from tpc_core.engine.selection.budget import BUDGET_SCOPES
from tpc_core.engine.values import Scored, Segmented
from tpc_core.engine.selection.assembly import compress_scored
from tpc_core.engine.reading import segment
from tpc_core.engine.output.result import to_result
from tpc_core.engine.task.finder import FoundRequest, TaskFinder
from tpc_core.engine.tokens import TokenCounter, TokenCounterSpec, resolve_token_counter
from tpc_core.version import __version__

__all__ = ["TPCCompressor", "Context", "BUDGET_SCOPES"]

Context = Union[str, Sequence[str]]


class TPCCompressor:
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
                 descriptor: TaskDescriptor | None = None) -> None:
        self.config = config
        self.encoder = encoder
        self.checkpoint_dir = Path(checkpoint_dir)
        self.hub_options = hub_options
        self.device = device
        self.dtype = dtype
        self._descriptor = descriptor
        # The request head is a few hundred kB: loaded here, so a bad path in the config fails at load time.
        self.scorer: Scorer = build_scorer(config.scorer, encoder)
        self._request_head = load_request_head(config.agnostic, self.checkpoint_dir)
        self._salience_head = load_salience_head(config.agnostic, self.checkpoint_dir)
        self.task_finder = self._new_task_finder()
        self._default_counter = resolve_token_counter(None, encoder.tokenizer)
        self._splitters: dict[str, SentenceSplitter] = {}
        self._splitters_lock = threading.Lock()
        self._caches = CacheRegistry()  # cache="memory" on two calls, or one directory, is one cache
        # The model state that needs a guard: the lazily loaded CTD and its tokenizer (padding settings are set
        # on every call). CSE forward passes and the Rust tokenizers' encode calls are safe to run concurrently.
        self._ctd_lock = threading.Lock()

    # ------------------------------------------------------------------ copying and pickling
    # copy.deepcopy and pickle (Ray actors, multiprocessing) carry the models by value; locks are rebuilt and
    # caches start empty (see tpc_core.loading.copying).
    # The task finder holds this compressor's CTD call, so a copy builds its own.
    _CACHES = {"_splitters": dict, "task_finder": lambda: None, "_caches": CacheRegistry}

    def __getstate__(self) -> dict[str, Any]:
        return picklable_state(self.__dict__, self._CACHES)

    def __setstate__(self, state: dict[str, Any]) -> None:
        restore_state(self, state, self._CACHES)
        self.task_finder = self._new_task_finder()

    def _new_task_finder(self) -> TaskFinder:
        """The prompt-agnostic task finder: the checkpoint's settings, request head and CTD."""
        return TaskFinder(self.config.agnostic, self._request_head,
                          self._generate if self.config.ctd is not None else None, name=self.config.name)

    # ------------------------------------------------------------------ loading and saving (see loading.py)
    @classmethod
    def from_pretrained(cls, name_or_path: str | Path = DEFAULT_MODEL, *, revision: str | None = None,
                        token: str | bool | None = None, cache_dir: str | None = None,
                        local_files_only: bool = False, device: str | torch.device | None = None,
                        dtype: str | torch.dtype | None = None, trust_remote_code: bool = False,
                        load_ctd: bool = False, ctd: str | Path | None = None,
                        trust_config_paths: bool = False,
                        scorer: str | ScorerConfig | None = None) -> TPCCompressor:
        """Load a TPC checkpoint.

        Args:
            name_or_path: ``"tpc-mini"`` (offline default), ``"cpc-llama-1b"``/``"cpc-mistral-7b"`` (the authors'
                published CPC encoders, assembled from Hub parts), a local checkpoint directory, or a Hub repo
                id. ``"tpc-base"``/``"tpc-large"``/``"tpc-huge"`` are not published and raise.
            revision: Hub revision of the checkpoint (for ``cpc-*``: of the adapter repo).
            token: Hub token for private repos.
            cache_dir: Hub cache directory.
            local_files_only: Never touch the network; use cached files only.
            device: "cpu", "cuda", "mps", a torch.device, or ``None`` to pick the best available.
            dtype: "fp32", "bf16", "fp16", a torch.dtype, or ``None`` (bf16 on CUDA, fp32 elsewhere).
            trust_remote_code: Allow model code from the Hub (off unless you ask).
            load_ctd: Load the task descriptor now instead of on first prompt-agnostic use.
            ctd: For ``cpc-*``: the checkpoint (registered name or directory) whose CTD serves prompt-agnostic
                mode; default ``"tpc-mini"``.
            trust_config_paths: Let the config's ``base_model`` name a local directory outside the checkpoint
                (only for checkpoints you wrote yourself, e.g. ``training/``'s runs); off: every path in the
                config stays inside the checkpoint (see ``tpc_core.loading.checkpoint``).
            scorer: Override the checkpoint's scoring function: a name from ``tpc_core.engine.scoring.scorers.SCORERS``
                (``"pooled_cosine"``: the paper's cosine; ``"cosine_bm25"``: cosine fused with BM25, with the
                checkpoint's ``lexical_weight``) or a full ``ScorerConfig``; ``None``: the checkpoint's own.
        """
        options = HubOptions(revision=revision, token=token, cache_dir=cache_dir,
                             local_files_only=local_files_only, trust_remote_code=trust_remote_code,
                             confine_paths=not trust_config_paths)
        checkpoint_dir = resolve_checkpoint_dir(name_or_path, options, ctd=ctd)
        # Hub parts (cpc-*) resolve to commits first: the loaded weights, info() and save_pretrained agree.
        config = pin_hub_revisions(TPCConfig.load(checkpoint_dir), options)
        if scorer is not None:
            config = dataclasses.replace(config, scorer=config.scorer.overridden(scorer))
        check_config_paths(config, checkpoint_dir, options)  # the CTD's too, though it loads on first use
        scorer_class(config.scorer)  # an unknown scorer name fails before any weights load
        resolved_device = resolve_device(device)
        resolved_dtype = resolve_dtype(dtype, resolved_device)
        model, tokenizer, architecture = load_cse_parts(config.cse, checkpoint_dir, options, resolved_device,
                                                        resolved_dtype)
        encoder = ContextSentenceEncoder(model, tokenizer, config.cse, architecture, resolved_device)
        compressor = cls(config, encoder, checkpoint_dir=checkpoint_dir, hub_options=options,
                         device=resolved_device, dtype=resolved_dtype)
        if load_ctd:
            _ = compressor.task_descriptor
        return compressor

    def save_pretrained(self, directory: str | Path) -> Path:
        """Write this checkpoint (config and trained parts; base models stay references) to ``directory``."""
        return save_checkpoint(self.config, self.checkpoint_dir, directory)

    def push_to_hub(self, repo_id: str, *, token: str | None = None, private: bool | None = None,
                    commit_message: str = "Upload TPC checkpoint", revision: str | None = None) -> str:
        """Upload this checkpoint to the Hub; returns the commit URL."""
        return push_checkpoint(self.config, self.checkpoint_dir, repo_id, token=token, private=private,
                               commit_message=commit_message, revision=revision)

    @property
    def token_counter(self) -> TokenCounter:
        """The default counter: the CSE tokenizer, no special tokens, no truncation; a word too long for
        WordPiece (which would be one ``[UNK]``) counts as its 100-character pieces (see ``tpc_core.engine.tokens``)."""
        return self._default_counter

    @property
    def task_descriptor_loaded(self) -> bool:
        """Whether the CTD is loaded (it loads on the first prompt-agnostic call that needs a description)."""
        return self._descriptor is not None

    @property
    def task_descriptor(self) -> TaskDescriptor:
        """The CTD, loaded on first access (thread-safe)."""
        with self._ctd_lock:
            return self._load_descriptor()

    def _load_descriptor(self) -> TaskDescriptor:
        if self._descriptor is None:
            if self.config.ctd is None:
                raise ValueError(f"Checkpoint {self.config.name!r} has no task descriptor (ctd); pass a question.")
            model, tokenizer = load_ctd_parts(self.config.ctd, self.checkpoint_dir, self.hub_options, self.device,
                                              self.dtype)
            self._descriptor = TaskDescriptor(model, tokenizer, self.config.ctd, self.device)
        return self._descriptor

    def _generate(self, prompts: list[str]) -> list[str]:
        """CTD descriptions of whole prompts (the generative path; one generation at a time per engine)."""
        with self._ctd_lock:
            return self._load_descriptor().describe(prompts)

    # ------------------------------------------------------------------ public compression API
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
                :class:`~tpc_core.engine.options.CompressKeywords` (``show_progress`` excepted: one prompt shows
                no progress bar).

        Returns:
            A :class:`CompressionResult`; its text is made only of original sentences, verbatim, in order, and
            ``compressed_tokens == count(compressed_prompt) <= budget`` for the counter used.
        """
        if question is not None and not isinstance(question, str):
            raise TypeError(f"question must be a str or None, got {type(question).__name__}.")
        return self.compress_batch([context], question=[question], target_tokens=target_tokens, rate=rate,
                                   token_counter=token_counter, show_progress=False, **options)[0]

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
                and given its default in :class:`~tpc_core.engine.options.CompressKeywords`.

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
        split = self.splitter(settings.splitter)
        results = self._run(documents, questions, counter, split, settings, self._cache_reader(settings.cache, split))
        for result in results:
            if result.oversized_sentences:
                warn_at_caller(f"{result.oversized_sentences} sentence(s) are larger than the whole budget of "
                               f"{result.budget} tokens and were skipped (sentences are never truncated).")
        return results

    def compress_messages(self, messages: Sequence[Any], target_tokens: int | None = None, rate: float | None = None,
                          token_counter: TokenCounterSpec = None, **options: Unpack[CompressKeywords]) -> list[Any]:
        """Compress a conversation (dicts, LangChain or LlamaIndex messages) under one budget; the same kind back.

        The latest user turn is the task (a long one is compressed around its request sentences, kept verbatim);
        the other texts are compressed for it, verbatim sentences in order; non-text parts, ids and tool calls are
        kept. Budget, bad input and guarantees: :mod:`tpc_core.conversation.compress` (``compress_conversation``
        returns the counts too).
        """
        return compress_conversation(self, messages, target_tokens=target_tokens, rate=rate,
                                     token_counter=token_counter, **options).messages

    def _run(self, documents: list[tuple[str, ...]], questions: list[str | None], counter: TokenCounter,
             split: SentenceSplitter, options: CompressionOptions,
             reader: CacheReader | None = None) -> list[CompressionResult]:
        """The pipeline, one batch of prompts at a time: segment → score → budget and assemble → result. With a
        cache ``reader``, documents found skip segmentation and the CSE (:mod:`tpc_core.cache.reading`)."""
        from tqdm.auto import tqdm

        chunks, show = range(0, len(documents), options.batch_size), options.show_progress
        progress = tqdm(chunks, desc="tpc compress", unit="batch",
                        disable=(not show) if show is not None else (len(chunks) <= 1 or None))
        separator, results = options.document_separator, []
        for first in progress:
            batch = slice(first, first + options.batch_size)
            cached = reader.read(documents[batch], split, counter, options) if reader is not None else None
            segmented = cached.prompts if cached is not None else [segment(docs, split, counter, options)
                                                                   for docs in documents[batch]]
            embed = cached.embed if cached is not None else self.scorer.embed
            for k, prompt in enumerate(self._score(segmented, questions[batch], separator, options.describe_bare,
                                                   embed)):
                result = to_result(compress_scored(prompt, options, counter, self.config.agnostic.redundancy),
                                   separator)
                results.append(result if cached is None else dataclasses.replace(
                    result, cache_hits=cached.hits[k], cache_misses=cached.misses[k]))
        return results

    def _score(self, prompts: list[Segmented], questions: list[str | None], separator: str,
               describe_bare: bool = True, embed: Any = None) -> list[Scored]:
        """Embeddings (``embed``, default the scorer's), tasks and scores of the prompts that are over budget; the
        others pass through unscored."""
        over_budget = [k for k, prompt in enumerate(prompts) if prompt.needs_scoring]
        scored = [Scored(prompt) for prompt in prompts]
        if not over_budget:
            return scored
        to_score = [prompts[k] for k in over_budget]
        embeddings = (embed or self.scorer.embed)(to_score)
        tasks = self.task_finder.find(to_score, embeddings, [questions[k] for k in over_budget], separator=separator,
                                      describe_bare=describe_bare)
        for k, prompt in zip(over_budget, score_prompts(self.scorer, to_score, embeddings, tasks,
                                                        self.config.agnostic, salience=self._salience_head)):
            scored[k] = prompt
        return scored

    # ------------------------------------------------------------------ the sentence cache (tpc_core.cache)
    @functools.cached_property
    def cache_fingerprint(self) -> dict[str, Any]:
        """What this compressor's cache entries depend on (the CSE's weights by content, its config, tokenizer and
        dtype); the splitter and the storage dtype are added per cache (:func:`tpc_core.cache.fingerprint`)."""
        return {**cse_identity(self.config, self.checkpoint_dir, self.encoder.model, self.dtype),
                "tokenizer": self.encoder.tokenizer_fingerprint}

    def _cache_reader(self, spec: Any, split: SentenceSplitter) -> CacheReader | None:
        cache = self._caches.resolve(spec)
        return None if cache is None else cache_reader(cache, self.cache_fingerprint, split, self.encoder,
                                                       self._default_counter)

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
        reader = self._cache_reader(cache, self.splitter(splitter))
        if reader is None:
            raise ValueError("warm_cache needs a cache and a splitter it can name (a built-in one, or an object with "
                             "a cache_identity string).")
        return reader.warm(texts, self.splitter(splitter), batch_size)

    def cache_info(self, cache: Any = "memory") -> CacheInfo:
        """Hits, misses, bytes, evictions, entries and errors of a cache this compressor uses (``"memory"``: its
        in-process LRU; a directory or store: the one it resolved for that value)."""
        resolved = self._caches.resolve(cache)
        if resolved is None:
            raise ValueError("cache_info needs a cache, not None.")
        return resolved.info()

    @overload
    def describe_task(self, prompts: str) -> str: ...

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
        single = isinstance(prompts, str)
        batch = [prompts] if single else list(prompts)
        for position, prompt in enumerate(batch):
            if not isinstance(prompt, str):
                raise TypeError(f"describe_task takes strings; prompt {position} is {type(prompt).__name__}.")
            as_documents(prompt, position)  # a lone surrogate: a clear ValueError before a tokenizer sees it
        descriptions = self.task_finder.descriptions(batch, self._read_prompts,
                                                     separator=CompressionOptions().document_separator)
        return descriptions[0] if single else descriptions

    def find_request(self, prompt: str) -> FoundRequest | None:
        """The request ``prompt`` writes (its sentences' spans and words) as the request head alone finds it, or
        ``None`` (:meth:`TaskFinder.find_request`). Raises ``TypeError`` / ``ValueError`` as :meth:`describe_task`."""
        if not isinstance(prompt, str):
            raise TypeError(f"find_request takes a string, got {type(prompt).__name__}.")
        return self.task_finder.find_request(as_documents(prompt, 0)[0], self._read_prompts)

    def _read_prompts(self, prompts: list[str]) -> tuple[list[Segmented], list[torch.Tensor]]:
        """Whole prompts segmented with the default splitter and counter, and their sentence embeddings."""
        options = CompressionOptions()
        segmented = [segment((prompt,), self.splitter(), self._default_counter, options) for prompt in prompts]
        return segmented, self.scorer.embed(segmented)

    def info(self) -> dict[str, Any]:
        """Model, device and version facts (what ``tpc info`` prints)."""
        import transformers

        return {"tpc_langchain": __version__, "torch": torch.__version__, "transformers": transformers.__version__,
                "checkpoint": self.config.name, "checkpoint_dir": str(self.checkpoint_dir),
                "trained": self.config.trained, "device": str(self.device), "dtype": str(self.dtype).replace("torch.", ""),
                "cse_base": self.config.cse.base_model, "cse_architecture": self.encoder.architecture,
                "cse_pooling": self.config.cse.pooling, "ctd_base": self.config.ctd.base_model if self.config.ctd else None,
                "splitter": self.config.splitter, "hub_parts": self.config.extra.get("hub_parts")}

    def splitter(self, splitter: str | SentenceSplitter | None = None) -> SentenceSplitter:
        """The sentence splitter for ``splitter`` (a name, an object with ``spans(text)``, or ``None``: the
        checkpoint's own); named splitters are built once and shared."""
        if splitter is None:
            splitter = self.config.splitter
        if not isinstance(splitter, str):
            if not callable(getattr(splitter, "spans", None)):
                raise TypeError(f"splitter must be a name or an object with a spans(text) method, got "
                                f"{type(splitter).__name__}.")
            return splitter
        with self._splitters_lock:
            if splitter not in self._splitters:
                self._splitters[splitter] = get_splitter(splitter)
            return self._splitters[splitter]

