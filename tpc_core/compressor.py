"""TPCCompressor: the public entry point (paper Algorithm 1).

Flow of one prompt: split each document into sentences (``segmentation``) → count tokens (``tokens``) →
budget (``selection.resolve_budget``) → question: the user's, or the CTD's task description (``ctd``) →
context-aware sentence scores (``cse``) → TopK under the budget in original order (``selection``) →
verified re-assembly of the kept sentences, verbatim, with their original separators.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, overload

import torch

from tpc_core.config import CONFIG_NAME, TPCConfig
from tpc_core.cse import ContextSentenceEncoder
from tpc_core.ctd import TaskDescriptor
from tpc_core.devices import resolve_device, resolve_dtype
from tpc_core.copying import picklable_state, restore_state
from tpc_core.coverage import coverage_scores, section_ranks, select_diverse
from tpc_core.hub_cse import pin_hub_revisions
from tpc_core.loading import HubOptions, load_cse_parts, load_ctd_parts, load_request_head, resolve_checkpoint_dir
from tpc_core.registry import DEFAULT_MODEL
from tpc_core.request import RequestHead, is_grounded, pick_request, request_text
from tpc_core.result import CompressionResult, SentenceRecord
from tpc_core.segmentation import SentenceSplitter, get_splitter
from tpc_core.selection import resolve_budget, select_sentences, validate_budget_args
from tpc_core.tokens import TokenCounter, TokenCounterSpec, resolve_token_counter

__all__ = ["TPCCompressor", "Context"]

logger = logging.getLogger(__name__)
Context = Union[str, Sequence[str]]
BUDGET_SCOPES = ("global", "per_document")


@dataclass
class _Prompt:
    """Working state of one prompt inside ``compress_batch``."""

    documents: list[str]
    spans: list[list[tuple[int, int]]]
    sentence_ids: list[list[list[int]]]
    counts: list[list[int]]
    doc_tokens: list[int]
    budget: int = 0
    question: str | None = None
    scores: list[list[float]] = field(default_factory=list)
    task_source: str | None = None  # "question", "extracted" or "generated" once scored
    embeddings: torch.Tensor | None = None  # (sentences, d): only where selection needs them (coverage mode)
    origin_tokens: int = 0  # the whole prompt as sent: documents joined by the separator


class TPCCompressor:
    """Compresses prompts by keeping the sentences most relevant to a question or a generated task description.

    Build one with :meth:`from_pretrained`. The CTD (prompt-agnostic mode) is loaded on first use, so
    prompt-aware users never pay for it.

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
        self._head: RequestHead | None = load_request_head(config.agnostic, self.checkpoint_dir)
        self._default_counter = resolve_token_counter(None, encoder.tokenizer)
        self._splitters: dict[str, SentenceSplitter] = {}
        # Calls are serialised: the CTD loads lazily and the models are shared; on CPU one call already uses
        # every core. Callers may share one compressor across threads.
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ copying and pickling
    # copy.deepcopy and pickle (Ray actors, multiprocessing) carry the models by value; locks are rebuilt and
    # caches start empty (see tpc_core.copying).
    _CACHES = {"_splitters": dict}

    def __getstate__(self) -> dict[str, Any]:
        return picklable_state(self.__dict__, self._CACHES)

    def __setstate__(self, state: dict[str, Any]) -> None:
        restore_state(self, state, self._CACHES)

    # ------------------------------------------------------------------ loading and saving
    @classmethod
    def from_pretrained(cls, name_or_path: str | Path = DEFAULT_MODEL, *, revision: str | None = None,
                        token: str | bool | None = None, cache_dir: str | None = None,
                        local_files_only: bool = False, device: str | torch.device | None = None,
                        dtype: str | torch.dtype | None = None, trust_remote_code: bool = False,
                        load_ctd: bool = False, ctd: str | Path | None = None) -> TPCCompressor:
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
        """
        options = HubOptions(revision=revision, token=token, cache_dir=cache_dir,
                             local_files_only=local_files_only, trust_remote_code=trust_remote_code)
        checkpoint_dir = resolve_checkpoint_dir(name_or_path, options, ctd=ctd)
        # Hub parts (cpc-*) resolve to commits first: the loaded weights, info() and save_pretrained agree.
        config = pin_hub_revisions(TPCConfig.load(checkpoint_dir), options)
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

    @property
    def token_counter(self) -> TokenCounter:
        """The default token counter (the CSE tokenizer, no special tokens, no truncation)."""
        return self._default_counter

    @property
    def task_descriptor(self) -> TaskDescriptor:
        """The CTD, loaded on first access (thread-safe)."""
        with self._lock:
            return self._load_descriptor()

    def _load_descriptor(self) -> TaskDescriptor:
        if self._descriptor is None:
            if self.config.ctd is None:
                raise ValueError(f"Checkpoint {self.config.name!r} has no task descriptor (ctd); pass a question.")
            model, tokenizer = load_ctd_parts(self.config.ctd, self.checkpoint_dir, self.hub_options, self.device,
                                              self.dtype)
            self._descriptor = TaskDescriptor(model, tokenizer, self.config.ctd, self.device)
        return self._descriptor

    def save_pretrained(self, directory: str | Path) -> Path:
        """Write this checkpoint (config and trained parts; base models stay references) to ``directory``."""
        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        if self.checkpoint_dir.resolve() != target.resolve():
            for item in self.checkpoint_dir.iterdir():
                if item.name == CONFIG_NAME or item.name.startswith("."):
                    continue
                destination = target / item.name
                if item.is_dir():
                    shutil.copytree(item, destination, dirs_exist_ok=True)
                else:
                    shutil.copy2(item, destination)
        self.config.save(target)
        return target

    def push_to_hub(self, repo_id: str, *, token: str | None = None, private: bool | None = None,
                    commit_message: str = "Upload TPC checkpoint", revision: str | None = None) -> str:
        """Upload this checkpoint to the Hub; returns the commit URL."""
        from huggingface_hub import HfApi

        api = HfApi(token=token)
        api.create_repo(repo_id, private=private, exist_ok=True)
        with tempfile.TemporaryDirectory() as staging:
            self.save_pretrained(staging)
            info = api.upload_folder(repo_id=repo_id, folder_path=staging, commit_message=commit_message,
                                     revision=revision)
        return str(info)

    # ------------------------------------------------------------------ public compression API
    def compress(self, context: Context, question: str | None = None, target_tokens: int | None = None,
                 rate: float | None = None, token_counter: TokenCounterSpec = None, **options: Any) -> CompressionResult:
        """Compress one prompt.

        Args:
            context: The text, or a list of documents sharing one budget.
            question: The user's question (prompt-aware). ``None`` or blank: prompt-agnostic — the CTD writes
                a task description from the whole prompt and that is used instead.
            target_tokens: Budget in tokens (exclusive with ``rate``).
            rate: Fraction of tokens to keep, in (0, 1]; default 0.2.
            token_counter: How budgets are counted: ``None`` (the CSE tokenizer), a tokenizer, a name/path or
                a ``Callable[[str], int]``.
            **options: See :meth:`compress_batch` (``budget_scope``, ``force_keep_patterns``,
                ``keep_first_sentence``, ``document_separator``, ``splitter``).

        Returns:
            A :class:`CompressionResult`; its text is made only of original sentences, verbatim, in order.
        """
        if question is not None and not isinstance(question, str):
            raise TypeError(f"question must be a str or None, got {type(question).__name__}.")
        return self.compress_batch([context], question=[question], target_tokens=target_tokens, rate=rate,
                                   token_counter=token_counter, show_progress=False, **options)[0]

    def compress_batch(self, contexts: Sequence[Context], question: str | Sequence[str | None] | None = None,
                       target_tokens: int | None = None, rate: float | None = None,
                       token_counter: TokenCounterSpec = None, *, budget_scope: str = "global",
                       force_keep_patterns: str | Iterable[str] = (), keep_first_sentence: bool = False,
                       document_separator: str = "\n\n", splitter: str | SentenceSplitter | None = None,
                       batch_size: int = 16, show_progress: bool | None = None) -> list[CompressionResult]:
        """Compress many prompts, batching the model calls across them. Thread-safe (calls are serialised).

        Args:
            contexts: Prompts; each a string or a list of documents.
            question: One question for all, one per prompt, or ``None`` (prompt-agnostic).
            target_tokens: Budget in tokens for each prompt (exclusive with ``rate``).
            rate: Kept fraction for each prompt; default 0.2.
            token_counter: See :meth:`compress`.
            budget_scope: "global" (one budget across a prompt's documents) or "per_document" (each document
                gets the budget's share proportional to its size).
            force_keep_patterns: Regexes; sentences matching any are taken first (still within budget).
            keep_first_sentence: Take each document's first sentence first (still within budget).
            document_separator: Joins compressed documents in ``compressed_prompt``.
            splitter: Sentence splitter name or object (default: the checkpoint's, "nupunkt").
            batch_size: Prompts processed together (bounds memory).
            show_progress: Show a progress bar (default: only for more than one batch on a terminal).

        Raises:
            TypeError: A context that is not a string or a list of strings, or a wrongly typed option.
            ValueError: An impossible budget, an unknown ``budget_scope``, or mismatched question count.
        """
        validate_budget_args(target_tokens, rate)
        if isinstance(contexts, str) or not isinstance(contexts, Sequence):
            raise TypeError("compress_batch takes a list of prompts; use compress() for a single string.")
        documents = [_as_documents(context, position) for position, context in enumerate(contexts)]
        questions = _as_questions(question, len(documents))
        if budget_scope not in BUDGET_SCOPES:
            raise ValueError(f"budget_scope must be one of {BUDGET_SCOPES}, got {budget_scope!r}.")
        patterns = _compile_patterns(force_keep_patterns)
        if not isinstance(document_separator, str):
            raise TypeError(f"document_separator must be a str, got {type(document_separator).__name__}.")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}.")
        counter = self._default_counter if token_counter is None else resolve_token_counter(token_counter)
        split = self._splitter(splitter)
        with self._lock:
            return self._compress_all(documents, questions, target_tokens, rate, counter, token_counter is None,
                                      budget_scope, patterns, keep_first_sentence, document_separator, split,
                                      batch_size, show_progress)

    def _compress_all(self, documents: list[list[str]], questions: list[str | None], target_tokens: int | None,
                      rate: float | None, counter: TokenCounter, default_counter: bool, budget_scope: str,
                      patterns: list[re.Pattern[str]], keep_first_sentence: bool, document_separator: str,
                      split: SentenceSplitter, batch_size: int, show_progress: bool | None) -> list[CompressionResult]:
        from tqdm.auto import tqdm

        results: list[CompressionResult] = []
        chunks = range(0, len(documents), batch_size)
        progress = tqdm(chunks, desc="tpc compress", unit="batch",
                        disable=(not show_progress) if show_progress is not None else (len(chunks) <= 1 or None))
        for first in progress:
            chunk = slice(first, first + batch_size)
            prompts = [self._prepare(docs, split, counter, default_counter, document_separator)
                       for docs in documents[chunk]]
            for prompt, q in zip(prompts, questions[chunk]):
                prompt.budget = resolve_budget(prompt.origin_tokens, target_tokens=target_tokens, rate=rate)
                prompt.question = q
            self._score(prompts, document_separator)
            results.extend(self._assemble(p, counter, budget_scope, patterns, keep_first_sentence,
                                          document_separator) for p in prompts)
        return results

    @overload
    def describe_task(self, prompts: str) -> str: ...

    @overload
    def describe_task(self, prompts: Sequence[str]) -> list[str]: ...

    def describe_task(self, prompts: str | Sequence[str]) -> str | list[str]:
        """The task description prompt-agnostic compression uses for each prompt.

        The prompt's own request sentences where the checkpoint's request head finds them (nothing is
        generated), otherwise the description the CTD writes.

        Args:
            prompts: One prompt, or a list of prompts (generated in batches).

        Returns:
            A string for a single prompt, a list (same order) for a list.

        Raises:
            TypeError: If a prompt is not a string.
            ValueError: If a description must be generated and the checkpoint has no CTD.
        """
        single = isinstance(prompts, str)
        batch = [prompts] if single else list(prompts)
        for position, prompt in enumerate(batch):
            if not isinstance(prompt, str):
                raise TypeError(f"describe_task takes strings; prompt {position} is {type(prompt).__name__}.")
        with self._lock:
            if self._head is None or not batch:  # no extractive path: the CTD describes every prompt
                descriptions = self._generate(batch) if batch else []
            else:
                split = self._splitter(None)
                prepared = [self._prepare([p], split, self._default_counter, True) for p in batch]
                matrices = self.encoder.encode_contexts([p.sentence_ids[0] for p in prepared])
                self._describe([(p, [m]) for p, m in zip(prepared, matrices)], "\n\n", require_ctd=True)
                descriptions = [p.question or "" for p in prepared]
        return descriptions[0] if single else descriptions

    def _generate(self, prompts: list[str]) -> list[str]:
        """CTD descriptions of whole prompts (the generative path)."""
        return self._load_descriptor().describe(prompts)

    def info(self) -> dict[str, Any]:
        """Model, device and version facts (what ``tpc info`` prints)."""
        import transformers

        from tpc_core import __version__

        return {"tpc_langchain": __version__, "torch": torch.__version__, "transformers": transformers.__version__,
                "checkpoint": self.config.name, "checkpoint_dir": str(self.checkpoint_dir),
                "trained": self.config.trained, "device": str(self.device), "dtype": str(self.dtype).replace("torch.", ""),
                "cse_base": self.config.cse.base_model, "cse_architecture": self.encoder.architecture,
                "cse_pooling": self.config.cse.pooling, "ctd_base": self.config.ctd.base_model if self.config.ctd else None,
                "splitter": self.config.splitter, "hub_parts": self.config.extra.get("hub_parts")}

    # ------------------------------------------------------------------ internals
    def _splitter(self, splitter: str | SentenceSplitter | None) -> SentenceSplitter:
        if splitter is None:
            splitter = self.config.splitter
        if not isinstance(splitter, str):
            if not callable(getattr(splitter, "spans", None)):
                raise TypeError(f"splitter must be a name or an object with a spans(text) method, got "
                                f"{type(splitter).__name__}.")
            return splitter
        if splitter not in self._splitters:
            self._splitters[splitter] = get_splitter(splitter)
        return self._splitters[splitter]

    def _prepare(self, documents: list[str], split: SentenceSplitter, counter: TokenCounter,
                 default_counter: bool, document_separator: str = "\n\n") -> _Prompt:
        spans = [split.spans(doc) if doc.strip() else [] for doc in documents]
        texts = [[doc[s:e] for s, e in doc_spans] for doc, doc_spans in zip(documents, spans)]
        flat = [t for doc_texts in texts for t in doc_texts]
        flat_ids = self.encoder.tokenize(flat)
        flat_counts = [len(ids) for ids in flat_ids] if default_counter else counter.count_many(flat)
        sentence_ids, counts, position = [], [], 0
        for doc_texts in texts:
            sentence_ids.append(flat_ids[position: position + len(doc_texts)])
            counts.append(flat_counts[position: position + len(doc_texts)])
            position += len(doc_texts)
        doc_tokens = counter.count_many(documents) if documents else []
        origin = _joined_count(counter, documents, doc_tokens, document_separator)
        return _Prompt(documents, spans, sentence_ids, counts, doc_tokens, origin_tokens=origin)

    def _needs_scoring(self, prompt: _Prompt) -> bool:
        return any(prompt.spans) and prompt.budget < prompt.origin_tokens

    def _score(self, prompts: list[_Prompt], document_separator: str) -> None:
        todo = [p for p in prompts if self._needs_scoring(p)]
        if not todo:
            return
        matrices = self.encoder.encode_contexts([ids for p in todo for ids in p.sentence_ids])
        per_prompt, position = [], 0
        for prompt in todo:
            per_prompt.append(matrices[position: position + len(prompt.documents)])
            position += len(prompt.documents)
        for prompt in todo:
            if prompt.question is not None:
                prompt.task_source = "question"
        agnostic = [(p, m) for p, m in zip(todo, per_prompt) if p.question is None]
        if agnostic:
            self._describe(agnostic, document_separator)
        question_vectors = self.encoder.encode_questions([p.question or "" for p in todo])
        settings = self.config.agnostic
        for row, (prompt, documents) in enumerate(zip(todo, per_prompt)):
            flat = torch.cat(list(documents)) if documents else torch.zeros(0)
            relevance = flat @ question_vectors[row] if len(flat) else torch.zeros(0)
            if prompt.task_source in ("generated", "fallback", "coverage") and settings.uses_coverage:
                ranks = [r for doc, spans in zip(prompt.documents, prompt.spans) for r in section_ranks(doc, spans)]
                relevance = coverage_scores(relevance, flat, ranks, relevance_weight=settings.relevance_weight if
                                            prompt.question else 0.0, centrality_weight=settings.centrality_weight,
                                            position_weight=settings.position_weight)
                prompt.embeddings = flat if settings.redundancy else None
            values, prompt.scores, start = relevance.tolist(), [], 0
            for spans in prompt.spans:
                prompt.scores.append(values[start: start + len(spans)])
                start += len(spans)

    def _describe(self, agnostic: list[tuple[_Prompt, list[torch.Tensor]]], document_separator: str, *,
                  require_ctd: bool = False) -> None:
        """Set each question-less prompt's task description: its written request where the request head finds
        one (no generation), otherwise the CTD's (and coverage-aware selection follows)."""
        head = self._head
        settings = self.config.agnostic
        to_generate = []
        for prompt, documents in agnostic:
            texts = [doc[s:e] for doc, spans in zip(prompt.documents, prompt.spans) for s, e in spans]
            picked: list[int] = []
            if head is not None and texts:
                probabilities = head.probabilities(torch.cat(list(documents)), texts)
                picked = pick_request(probabilities, settings.request_threshold, settings.max_request_sentences)
            if picked:
                prompt.question, prompt.task_source = request_text(texts, picked), "extracted"
            else:
                prompt.task_source = "generated"
                to_generate.append(prompt)
        if not to_generate:
            return
        if self.config.ctd is None and head is not None and not require_ctd:  # coverage alone ranks these
            for prompt in to_generate:
                prompt.task_source = "coverage"
            return
        texts = [document_separator.join(p.documents) for p in to_generate]
        for prompt, text, description in zip(to_generate, texts, self._generate(texts)):
            if head is None or is_grounded(description, text):
                prompt.question = description
            else:  # the prompt writes no request and the CTD's text is not in it: never use invented text
                prompt.question, prompt.task_source = settings.fallback_description, "fallback"

    def _assemble(self, prompt: _Prompt, counter: TokenCounter, budget_scope: str, patterns: list[re.Pattern[str]],
                  keep_first_sentence: bool, document_separator: str) -> CompressionResult:
        scored = bool(prompt.scores)
        if not any(prompt.spans) or not scored:  # empty input, or the budget covers everything
            kept = [list(range(len(spans))) for spans in prompt.spans]
            texts = [doc if spans else "" for doc, spans in zip(prompt.documents, prompt.spans)]
            tokens = [count if spans else 0 for count, spans in zip(prompt.doc_tokens, prompt.spans)]
            total = _joined_count(counter, [t for t in texts if t], [t for t, x in zip(tokens, texts) if x],
                                  document_separator)
            return self._result(prompt, kept, texts, tokens, total, document_separator)
        flat = [(d, i) for d, spans in enumerate(prompt.spans) for i in range(len(spans))]
        scores = [prompt.scores[d][i] for d, i in flat]
        counts = [prompt.counts[d][i] for d, i in flat]
        forced = [(keep_first_sentence and i == 0) or any(
            p.search(prompt.documents[d][prompt.spans[d][i][0]:prompt.spans[d][i][1]]) for p in patterns)
            for d, i in flat]
        oversized = sum(1 for c in counts if c > prompt.budget)
        if oversized:
            warnings.warn(f"{oversized} sentence(s) are larger than the whole budget of {prompt.budget} tokens "
                          "and were skipped (sentences are never truncated).", stacklevel=4)
        def pick(members: list[int], budget: int) -> list[int]:
            member_scores, member_counts = [scores[k] for k in members], [counts[k] for k in members]
            member_forced = [forced[k] for k in members]
            if prompt.embeddings is None:
                picked = select_sentences(member_scores, member_counts, budget, force_keep=member_forced)
            else:
                picked = select_diverse(member_scores, prompt.embeddings[members], member_counts, budget,
                                        redundancy=self.config.agnostic.redundancy, force_keep=member_forced)
            return [members[j] for j in picked]

        if budget_scope == "global":
            chosen = set(pick(list(range(len(flat))), prompt.budget))
        else:
            chosen = set()
            total = max(prompt.origin_tokens, 1)
            for d in range(len(prompt.documents)):
                members = [k for k, (doc, _) in enumerate(flat) if doc == d]
                chosen.update(pick(members, prompt.budget * prompt.doc_tokens[d] // total))
        # Re-count the assembled prompt with the real counter, document separators included: joins can change
        # token counts at boundaries, and a separator may cost tokens of its own.
        while True:
            kept = _kept_per_document(flat, chosen, len(prompt.documents))
            texts = [_join_kept(doc, spans, doc_kept) for doc, spans, doc_kept in
                     zip(prompt.documents, prompt.spans, kept)]
            nonempty = [t for t in texts if t]
            counted = iter(counter.count_many(nonempty))
            tokens = [next(counted) if t else 0 for t in texts]
            total = _joined_count(counter, nonempty, [n for n, t in zip(tokens, texts) if t], document_separator)
            if total <= prompt.budget or not chosen:
                break
            chosen.discard(min(chosen, key=lambda k: (forced[k], scores[k], -k)))
        return self._result(prompt, kept, texts, tokens, total, document_separator)

    def _result(self, prompt: _Prompt, kept: list[list[int]], texts: list[str], compressed_tokens: list[int],
                total_tokens: int, document_separator: str) -> CompressionResult:
        records = []
        for d, (doc, spans) in enumerate(zip(prompt.documents, prompt.spans)):
            kept_set = set(kept[d])
            for i, (start, end) in enumerate(spans):
                score = prompt.scores[d][i] if prompt.scores else None
                records.append(SentenceRecord(d, i, start, end, doc[start:end], score, prompt.counts[d][i],
                                              i in kept_set))
        return CompressionResult(
            compressed_prompt=document_separator.join(t for t in texts if t), compressed_documents=texts,
            origin_tokens=prompt.origin_tokens if any(prompt.spans) else 0, compressed_tokens=total_tokens,
            budget=prompt.budget, task_description=prompt.question if prompt.scores else None,
            task_source=prompt.task_source if prompt.scores else None, sentences=records,
            document_origin_tokens=list(prompt.doc_tokens), document_compressed_tokens=compressed_tokens)


def _joined_count(counter: TokenCounter, texts: list[str], counts: list[int], separator: str) -> int:
    """Tokens of ``separator.join(texts)``: the counts' sum for one text, a real count of the join otherwise."""
    if len(texts) <= 1:
        return sum(counts)
    return counter(separator.join(texts))


def _kept_per_document(flat: list[tuple[int, int]], chosen: set[int], documents: int) -> list[list[int]]:
    kept: list[list[int]] = [[] for _ in range(documents)]
    for k in sorted(chosen):
        d, i = flat[k]
        kept[d].append(i)
    return kept


def _join_kept(document: str, spans: list[tuple[int, int]], kept: list[int]) -> str:
    """Kept sentences verbatim; between two kept sentences the whitespace that originally followed the first."""
    pieces: list[str] = []
    for position, index in enumerate(kept):
        start, end = spans[index]
        pieces.append(document[start:end])
        if position + 1 < len(kept):
            gap_end = spans[index + 1][0]
            gap = document[end:gap_end]
            pieces.append(gap if gap.strip() == "" else " ")
    return "".join(pieces)


def _compile_patterns(patterns: Any) -> list[re.Pattern[str]]:
    """``force_keep_patterns`` as compiled regexes; a single string is one pattern, not its characters."""
    if isinstance(patterns, (str, re.Pattern)):
        patterns = [patterns]
    compiled = []
    for pattern in patterns:
        if isinstance(pattern, re.Pattern):
            compiled.append(pattern)
            continue
        if not isinstance(pattern, str):
            raise TypeError(f"force_keep_patterns must hold regex strings, got {type(pattern).__name__}.")
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            raise ValueError(f"force_keep_patterns: {pattern!r} is not a valid regular expression ({error}).") \
                from error
    return compiled


def _as_documents(context: Any, position: int) -> list[str]:
    if isinstance(context, str):
        return [context]
    if isinstance(context, Sequence) and not isinstance(context, (bytes, bytearray)):
        for index, document in enumerate(context):
            if not isinstance(document, str):
                raise TypeError(f"Prompt {position}: document {index} is a {type(document).__name__}, not a str.")
        return list(context)
    raise TypeError(f"Prompt {position}: context must be a str or a list of str, got {type(context).__name__}.")


def _as_questions(question: Any, count: int) -> list[str | None]:
    if question is None or isinstance(question, str):
        questions: list[Any] = [question] * count
    elif isinstance(question, Sequence):
        questions = list(question)
        if len(questions) != count:
            raise ValueError(f"Got {len(questions)} questions for {count} prompts.")
    else:
        raise TypeError(f"question must be a str, a list of str or None, got {type(question).__name__}.")
    for q in questions:
        if q is not None and not isinstance(q, str):
            raise TypeError(f"question must be a str or None, got {type(q).__name__}.")
    # A blank question means "no question": prompt-agnostic mode.
    return [q if q is not None and q.strip() else None for q in questions]

