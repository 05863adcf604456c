"""Context-aware Sentence Encoder (CSE): embeddings of sentences seen inside their context.

Every sentence is followed by ``<end_of_sent>`` and the question by ``<end_of_question>`` (paper §3.4), or,
with ``pooling="cpc"``, nothing at all: CPC's representation (``Workday/cpc`` ``util/preprocessing.py``) is the
mean of each sentence's own tokens in a window that holds no special token (no BOS), and the mean of the
question's tokens, encoded alone, again without special tokens.
A context is encoded in windows of ``max_window_tokens`` that overlap by ``window_overlap_tokens``; each
sentence takes its embedding from the window where it has the most context on both sides. Decoder bases
get bidirectional attention (LLM2Vec) through a 4-D attention mask; encoder bases work as they are.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from tpc_core.config import CSEConfig
from tpc_core.diagnostics.caller import warn_at_caller
from tpc_core.engine.cancellation import check_cancelled
from tpc_core.engine.fast_encoder import BatchEncoder, tokenizer_fingerprint
from tpc_core.engine.scoring.pooling import PoolPlan, plan_pooling, pool_question, pool_sentence, pool_spans
from tpc_core.engine.scoring.slim import SlimBert, slim_encoder
from tpc_core.engine.scoring.threads import run_pass

__all__ = ["POOL_GROUP_BYTES", "ContextSentenceEncoder", "DeferredModel", "PoolPlan", "Slot", "Window",
           "bidirectional_mask", "pad_batch", "plan_batches", "plan_pooling", "plan_windows", "pool_question",
           "pool_sentence", "pool_spans", "special_token_frame"]


class Slot(NamedTuple):
    """Where one sentence sits in a window (token positions within ``Window.input_ids``).

    Attributes:
        sentence: Index of the sentence in its context.
        start: Its first token.
        end: Its end token (exclusive; the marker excluded).
        marker: Position of its ``<end_of_sent>`` marker, or -1 without markers.
    """

    sentence: int
    start: int
    end: int
    marker: int


@dataclass(frozen=True)
class Window:
    """One encoder input.

    Attributes:
        input_ids: Token ids, special tokens included.
        slots: The sentences in the window, in order.
    """

    input_ids: list[int]
    slots: list[Slot]


def pad_batch(batch: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``(input_ids, attention_mask)`` of a batch of id lists (CPU tensors, ``long``)."""
    lengths = [len(ids) for ids in batch]
    width = max(lengths)
    # Each row copied into one numpy array: half the time of a tensor made from padded nested lists.
    table = np.full((len(batch), width), pad_id, dtype=np.int64)
    for row, ids in zip(table, batch):
        row[: len(ids)] = ids
    attention = (torch.arange(width) < torch.tensor(lengths)[:, None]).long()
    return torch.from_numpy(table), attention


def plan_batches(lengths: Sequence[int], max_rows: int, call_cost_tokens: int) -> list[list[int]]:
    """Group inputs into forward batches that waste little padding: the indices of each batch.

    Inputs are taken shortest first and cut into consecutive groups of at most ``max_rows``; the cuts minimise
    the padded positions read (rows x the group's longest input) plus ``call_cost_tokens`` for each forward call,
    so a few long windows (a passage's second window, a long document's last) are not padded up with many short
    ones, and short inputs are not split into many tiny calls. Exact dynamic programming, O(n x max_rows).

    Args:
        lengths: Token count of each input.
        max_rows: Most inputs in one batch (bounds memory).
        call_cost_tokens: What one more forward call is worth in padded positions.

    Returns:
        Batches of indices into ``lengths``, each sorted by length, batches in increasing length.
    """
    if max_rows < 1:
        raise ValueError(f"max_rows must be a positive int, got {max_rows!r}")
    order = sorted(range(len(lengths)), key=lambda index: lengths[index])
    sorted_lengths = [lengths[index] for index in order]
    count = len(order)
    cost = [0] + [0] * count
    cut = [0] * (count + 1)
    for end in range(1, count + 1):
        # A group ending at `end` is padded to sorted_lengths[end - 1], its longest input.
        best_cost = None
        best_start = end - 1
        for start in range(max(0, end - max_rows), end):
            candidate = cost[start] + (end - start) * sorted_lengths[end - 1] + call_cost_tokens
            if best_cost is None or candidate < best_cost:
                best_cost = candidate
                best_start = start
        cost[end] = best_cost or 0
        cut[end] = best_start
    batches: list[list[int]] = []
    end = count
    while end > 0:
        batches.append(order[cut[end]: end])
        end = cut[end]
    return batches[::-1]


def plan_windows(sentence_ids: Sequence[Sequence[int]], *, max_window_tokens: int, overlap_tokens: int,
                 prefix: Sequence[int], suffix: Sequence[int], marker_id: int | None) -> tuple[list[Window], list[int]]:
    """Pack a context's sentences into overlapping windows.

    Args:
        sentence_ids: Token ids of each sentence (no special tokens).
        max_window_tokens: Window size, special tokens and markers included.
        overlap_tokens: Tokens of sentences repeated from the end of one window at the start of the next.
        prefix: Special tokens that open every window (e.g. ``[CLS]``).
        suffix: Special tokens that close every window (e.g. ``[SEP]``).
        marker_id: ``<end_of_sent>`` id, or ``None`` to add no marker.

    Returns:
        The windows, and for each sentence the index of the window it should be read from. A sentence too
        long for a window is clipped to fit (for encoding only).
    """
    room = max_window_tokens - len(prefix) - len(suffix)
    marker = [] if marker_id is None else [marker_id]
    pieces = [list(ids[: max(room - len(marker), 1)]) + marker for ids in sentence_ids]
    lengths = [len(piece) for piece in pieces]
    windows: list[Window] = []
    spans: list[tuple[int, int]] = []
    start = 0
    count = len(pieces)
    while start < count:
        end = start
        used = 0
        while end < count and (end == start or used + lengths[end] <= room):
            used += lengths[end]
            end += 1
        spans.append((start, end))
        if end >= count:
            break
        next_start = end
        carried = 0
        while next_start - 1 > start and carried + lengths[next_start - 1] <= overlap_tokens:
            next_start -= 1
            carried += lengths[next_start]
        start = next_start
    best: list[tuple[int, int]] = [(-1, -1)] * count  # (context on the thinner side, window index)
    for window_index, (first, last) in enumerate(spans):
        ids: list[int] = list(prefix)
        slots = []
        for index in range(first, last):
            token_start = len(ids)
            ids.extend(pieces[index])
            marker_pos = len(ids) - 1 if marker else -1
            slots.append(Slot(index, token_start, len(ids) - len(marker), marker_pos))
        ids.extend(suffix)
        windows.append(Window(ids, slots))
        for index, token_start, token_end, _ in slots:
            margin = min(token_start - len(prefix), len(ids) - len(suffix) - token_end)
            if margin > best[index][0]:
                best[index] = (margin, window_index)
    return windows, [window_index for _, window_index in best]


POOL_GROUP_BYTES = 64 << 20
"""Hidden states :meth:`ContextSentenceEncoder.encode_contexts` keeps before it pools them (float32 bytes)."""


def bidirectional_mask(attention_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A (B, 1, L, L) boolean mask letting every token attend to every non-padding token (LLM2Vec)."""
    valid = attention_mask.bool()
    return valid[:, None, None, :].expand(-1, 1, valid.shape[1], -1).contiguous()


def _out_of_memory(error: BaseException) -> bool:
    """CUDA's ``torch.OutOfMemoryError``, or MPS's ``RuntimeError`` that says it ran out of memory."""
    return isinstance(error, torch.OutOfMemoryError) or "out of memory" in str(error).lower()


def _stack_padded(parts: Sequence[torch.Tensor]) -> torch.Tensor:
    """Hidden states ``(rows, L_i, d)`` of consecutive row groups as one ``(rows, max L_i, d)`` batch (the extra
    positions are padding no span reads)."""
    width = max(part.shape[1] for part in parts)
    return torch.cat([F.pad(part, (0, 0, 0, width - part.shape[1])) for part in parts])


def special_token_frame(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after a text (e.g. ``[CLS]`` / ``[SEP]``)."""
    probe = "hello"
    bare = tokenizer(probe, add_special_tokens=False)["input_ids"]
    framed = tokenizer(probe)["input_ids"]
    for cut in range(len(framed) - len(bare) + 1):
        if framed[cut: cut + len(bare)] == bare:
            return framed[:cut], framed[cut + len(bare):]
    return [], []


@dataclass(frozen=True)
class DeferredModel:
    """A backbone loaded on the encoder's first forward pass (a prompt that needs no embeddings never loads it).

    Attributes:
        load: Loads the backbone, on the encoder's device, in eval mode.
        source: Where its weights load from (what the loaded model's ``config.name_or_path`` will say).
    """

    load: Callable[[], Any]
    source: str


class ContextSentenceEncoder:
    """Scores sentences against a question with context-aware embeddings.

    Args:
        model: A transformers backbone (``AutoModel``) already on ``device``, or a :class:`DeferredModel` (loaded,
            once and thread-safely, by the first access to :attr:`model`: the first forward pass).
        tokenizer: Its fast tokenizer, with the CSE special tokens added.
        config: CSE settings.
        architecture: "encoder" or "decoder" (decoders are run bidirectionally).
        device: Where the model lives.
    """

    def __init__(self, model: Any, tokenizer: Any, config: CSEConfig, architecture: str, device: torch.device):
        self._deferred = model if isinstance(model, DeferredModel) else None
        self._model = None if self._deferred is not None else model
        self._model_lock = threading.Lock()
        self.tokenizer = tokenizer
        self.config = config
        self.architecture = architecture
        self.device = device
        # CPC encodes bare token ids: no BOS/EOS/CLS frame around a window or a question.
        self.prefix, self.suffix = ([], []) if config.pooling == "cpc" else special_token_frame(tokenizer)
        self.sentence_marker = tokenizer.convert_tokens_to_ids(config.end_of_sentence_token) \
            if config.use_special_tokens else None
        self.question_marker = tokenizer.convert_tokens_to_ids(config.end_of_question_token) \
            if config.use_special_tokens else None
        self._encoder = BatchEncoder(tokenizer.backend_tokenizer)  # truncation and padding off
        self._backend = self._encoder.backend
        # Ids a counter made with this very tokenizer (the default counter) are read as they are.
        self.tokenizer_fingerprint = tokenizer_fingerprint(self._backend)
        # Most rows per forward pass once a batch did not fit in the device's memory (None: no limit met yet).
        self.max_rows: int | None = None
        # The layers called as tensor operations where that computes exactly the model's forward pass.
        self._slim: SlimBert | None = None
        if self._model is not None:
            self._slim = slim_encoder(model) if architecture == "encoder" else None

    @property
    def model(self) -> Any:
        """The backbone (a deferred one is loaded here, on first access)."""
        if self._model is None:
            with self._model_lock:
                if self._model is None:
                    assert self._deferred is not None
                    model = self._deferred.load()
                    self._slim = slim_encoder(model) if self.architecture == "encoder" else None
                    self._model = model
        return self._model

    @property
    def model_loaded(self) -> bool:
        """Whether the backbone is loaded (a deferred one loads on the first forward pass)."""
        return self._model is not None

    @property
    def source(self) -> str:
        """Where the backbone's weights come from (its ``config.name_or_path``), without loading it."""
        if self._model is None and self._deferred is not None:
            return self._deferred.source
        return str(getattr(getattr(self.model, "config", None), "name_or_path", "") or "")

    @property
    def slim(self) -> SlimBert | None:
        """The backbone's forward pass as tensor operations (:func:`~tpc_core.engine.scoring.slim.slim_encoder`),
        where that computes exactly the model's; ``None`` elsewhere. Loads a deferred backbone."""
        self.model  # noqa: B018 (loads a deferred backbone, which sets the slim forward)
        return self._slim

    @slim.setter
    def slim(self, slim: SlimBert | None) -> None:
        self.model  # noqa: B018
        self._slim = slim

    def __getstate__(self) -> dict[str, Any]:
        """The loaded backbone travels by value (a deferred one is loaded first); the lock is rebuilt."""
        self.model  # noqa: B018
        state = dict(self.__dict__)
        state.pop("_model_lock")
        state["_deferred"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._model_lock = threading.Lock()

    @property
    def forward_module(self) -> torch.nn.Module:
        """The module every forward pass calls (:attr:`slim` where there is one, else :attr:`model`): a forward hook
        on it sees each pass."""
        return self.slim if self.slim is not None else self.model

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, without special tokens or truncation."""
        if not texts:
            return []
        return self._encoder.ids(texts)

    def forward(self, batch: list[list[int]], *, padded: tuple[torch.Tensor, torch.Tensor] | None = None
                ) -> torch.Tensor:
        """Last hidden states (float32, on the model's device) of a batch of token-id rows, padded together.

        A batch too large for the device's memory is split in halves and retried, and from then on no forward pass
        of this encoder takes more rows than the largest that fitted (:attr:`max_rows`); the first split warns,
        once. A single row that does not fit raises the device's out-of-memory error. ``padded``: the batch as
        :func:`pad_batch` gives it with this encoder's pad id, made beforehand (used while it is not split).
        """
        rows = self.max_rows or len(batch)
        if len(batch) > rows:
            return _stack_padded([self.forward(batch[first: first + rows]) for first in range(0, len(batch), rows)])
        positions = len(batch) * max((len(ids) for ids in batch), default=0)
        try:
            # A small pass runs on a worker with few intra-op threads (see tpc_core.engine.scoring.threads).
            return run_pass(lambda: self._forward(batch, padded), positions, self.device)
        except (torch.OutOfMemoryError, RuntimeError) as error:
            if len(batch) == 1 or not _out_of_memory(error):
                raise
        # Out of the except block: the error, and the failed pass's activations its traceback holds, are freed.
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        half = (len(batch) + 1) // 2
        if self.max_rows is None:
            warn_at_caller(f"A forward pass of {len(batch)} windows did not fit in the memory of {self.device}; the "
                           f"context encoder now runs at most {half} per pass (config.cse.batch_size is "
                           f"{self.config.batch_size}).")
        self.max_rows = min(half, self.max_rows or half)
        return self.forward(batch)

    def pad(self, batch: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """:func:`pad_batch` with this encoder's pad id."""
        return pad_batch(batch, self.tokenizer.pad_token_id or 0)

    def _forward(self, batch: list[list[int]], padded: tuple[torch.Tensor, torch.Tensor] | None = None
                 ) -> torch.Tensor:
        check_cancelled()  # abandoned work stops between passes, never inside one
        input_ids, attention = padded if padded is not None else self.pad(batch)
        if self.slim is not None:
            # Whether any row is padded is known here, on the host: the pass needs no mask otherwise.
            mask = None if all(len(ids) == len(batch[0]) for ids in batch) else attention.to(self.device)
            with torch.inference_mode():
                return self.slim(input_ids.to(self.device), mask).float()
        input_ids = input_ids.to(self.device)
        attention = attention.to(self.device)
        model_mask: torch.Tensor = attention
        if self.architecture == "decoder":
            model_mask = bidirectional_mask(attention, self.model.dtype)
        with torch.inference_mode():
            hidden = self.model(input_ids=input_ids, attention_mask=model_mask).last_hidden_state
        return hidden.float()

    def question_inputs(self, questions: Sequence[str]) -> list[list[int]]:
        """Encoder input ids of each question's first window: frame prefix, question tokens that fit one
        window, ``<end_of_question>`` when special tokens are on, frame suffix. Training builds its inputs
        here too; :meth:`encode_questions` reads a longer question through all of :meth:`question_windows`."""
        return [windows[0] for windows in self.question_windows(questions)]

    def question_windows(self, questions: Sequence[str]) -> list[list[list[int]]]:
        """Every question as one or more encoder inputs, each framed like :meth:`question_inputs`.

        A question longer than one window is cut into consecutive windows (none of its tokens is dropped);
        an empty question is one window with no content tokens.
        """
        room = self.config.max_window_tokens - len(self.prefix) - len(self.suffix) - 1
        marker = [] if self.question_marker is None else [self.question_marker]
        frame_empty = not (self.prefix or self.suffix or marker)
        return [[self.prefix + (ids[start: start + room] or self._empty_question(frame_empty)) + marker + self.suffix
                 for start in range(0, max(len(ids), 1), room)] for ids in self.tokenize(questions)]

    def _empty_question(self, frame_empty: bool) -> list[int]:
        """Tokens standing for an empty question: none when a frame or marker is there to encode, else one EOS
        (a bare encoder input cannot be empty)."""
        if not frame_empty:
            return []
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id
        return [eos if eos is not None else (pad or 0)]

    def encode_questions(self, questions: Sequence[str]) -> torch.Tensor:
        """L2-normalised embeddings (n, d) of questions.

        A question longer than one window is encoded window by window; its embedding is the token-weighted
        mean of its windows' embeddings, so a long query or task description is never cut. A text repeated in
        ``questions`` (one task description for a whole batch of corpus rows) is encoded once.
        """
        if not questions:
            return torch.zeros((0, self.model.config.hidden_size))
        unique = list(dict.fromkeys(questions))
        if len(unique) < len(questions):
            rows = {text: row for row, text in enumerate(unique)}
            return self._encode_unique_questions(unique)[[rows[text] for text in questions]]
        return self._encode_unique_questions(questions)

    def _encode_unique_questions(self, questions: Sequence[str]) -> torch.Tensor:
        windows = self.question_windows(questions)
        flat = [ids for question in windows for ids in question]
        pooled: list[torch.Tensor] = []
        for first in range(0, len(flat), self.config.batch_size):
            batch = flat[first: first + self.config.batch_size]
            spans = [(row, 0, len(ids), len(ids) - len(self.suffix) - 1) for row, ids in enumerate(batch)]
            pooled.append(pool_spans(self.forward(batch), spans, self.config.pooling))
        stacked = torch.cat(pooled)
        # A long question is the token-weighted mean of its windows: one (questions, windows) weight matrix,
        # made where the pooled vectors are (a host tensor here fails on CUDA and MPS).
        owner = [row for row, question in enumerate(windows) for _ in question]
        weights = torch.zeros((len(windows), len(flat)), dtype=torch.float32, device=stacked.device)
        weights[torch.tensor(owner, device=stacked.device), torch.arange(len(flat), device=stacked.device)] = \
            torch.tensor([float(len(ids)) for ids in flat], dtype=torch.float32, device=stacked.device)
        embeddings = (weights @ stacked) / weights.sum(dim=1, keepdim=True)
        return F.normalize(embeddings, dim=-1).cpu()  # the one copy to the host

    def context_windows(self, contexts: Sequence[Sequence[Sequence[int]]]) -> list[tuple[int, Window, list[int]]]:
        """The windows that read every context: ``(context index, window, sentences read from it)``, each sentence
        read from its owner window only (see :func:`plan_windows`); windows that own no sentence are left out."""
        jobs: list[tuple[int, Window, list[int]]] = []
        for context_index, sentence_ids in enumerate(contexts):
            windows, owner = plan_windows(sentence_ids, max_window_tokens=self.config.max_window_tokens,
                                          overlap_tokens=self.config.window_overlap_tokens, prefix=self.prefix,
                                          suffix=self.suffix, marker_id=self.sentence_marker)
            for window_index, window in enumerate(windows):
                wanted = [slot.sentence for slot in window.slots if owner[slot.sentence] == window_index]
                if wanted:
                    jobs.append((context_index, window, wanted))
        return jobs

    def encode_contexts(self, contexts: Sequence[Sequence[Sequence[int]]]) -> list[torch.Tensor]:
        """Embeddings of every sentence of every context, each sentence read inside its context.

        Args:
            contexts: For each context, the token ids of its sentences (from :meth:`tokenize`).

        Returns:
            One L2-normalised (n_sentences, d) tensor per context (empty contexts give (0, d)).
        """
        jobs = self.context_windows(contexts)
        size = self.model.config.hidden_size
        counts = [len(ids) for ids in contexts]
        if not jobs:
            return [torch.zeros((count, size)) for count in counts]
        first_sentence = [0, *itertools.accumulate(counts)]  # flat index of each context's first sentence
        order: list[int] = []  # the flat sentence index of each pooled row
        # Similar lengths in one batch waste less padding; a call is worth about one window of padding.
        lengths = [len(window.input_ids) for _, window, _ in jobs]
        prepared = []  # (rows, padded rows, spans to pool) of each forward pass, all made before the first pass
        for indices in plan_batches(lengths, self.config.batch_size, self.config.max_window_tokens):
            rows = [jobs[index][1].input_ids for index in indices]
            spans = []
            for row, index in enumerate(indices):
                context_index, window, wanted = jobs[index]
                wanted_set = set(wanted)
                for slot in window.slots:
                    if slot.sentence in wanted_set:
                        spans.append((row, slot.start, slot.end, slot.marker))
                        order.append(first_sentence[context_index] + slot.sentence)
            padded = self.pad(rows)
            prepared.append((rows, padded, plan_pooling(spans, len(rows), padded[0].shape[1], self.config.pooling)))
        # The passes run back to back and their states are pooled together (in groups of POOL_GROUP_BYTES): host
        # work between two passes finds its caches emptied by the model and costs about twice as much.
        pooled: list[torch.Tensor] = []
        waiting: list[tuple[torch.Tensor, PoolPlan]] = []
        for number, (rows, padded, plan) in enumerate(prepared):
            waiting.append((self.forward(rows, padded=padded), plan))
            if number == len(prepared) - 1 or sum(hidden.numel() * 4 for hidden, _ in waiting) >= POOL_GROUP_BYTES:
                pooled += [pool_spans(hidden, group_plan, self.config.pooling) for hidden, group_plan in waiting]
                waiting = []
        vectors = F.normalize(torch.cat(pooled), dim=-1)
        ordered = torch.empty_like(vectors)
        ordered[torch.tensor(order, dtype=torch.long, device=vectors.device)] = vectors
        return list(ordered.cpu().split(counts))  # the one copy to the host
