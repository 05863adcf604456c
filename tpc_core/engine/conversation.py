"""A conversation compressed under one budget: which messages are kept whole, what the budget is, and the fit.

:func:`compress_conversation` is what :meth:`tpc_core.TPCCompressor.compress_messages` runs:

1. :func:`tpc_core.engine.messages.read_messages` reads every message (kind, canonical role, text parts);
2. :func:`plan_conversation` (pure, given the counts) finds the task (the latest user turn's text), the protected
   messages (system / developer messages and that turn, kept whole), counts every text part with the caller's
   counter and turns ``target_tokens`` / ``rate`` into the budget of the whole conversation;
3. the text parts of every other message (earlier turns, assistant replies, tool and function results) are the
   documents of one engine call, prompt-aware for the task, under what the protected messages leave
   (``budget - protected tokens``, ``budget_scope`` as the caller asks, "global" by default);
4. :func:`fit_parts` checks the sum of the compressed parts' own counts (the engine's guarantee is on their
   join) and drops the weakest kept sentence until it fits: the conversation's budget is exact for any counter;
5. :func:`tpc_core.engine.messages.rebuild_message` puts the texts back into copies of the messages.

What is counted: the sum of the counter over every text part of every message. Roles, names, tool calls'
arguments, non-text parts and the chat template's own tokens are not counted (they depend on the model's
template, which the compressor does not see): leave room for them in the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tpc_core.engine.messages import PROTECTED_ROLES, Message, read_messages, rebuild_message
from tpc_core.engine.options import CompressionOptions, as_documents
from tpc_core.engine.result import CompressionResult
from tpc_core.engine.selection import join_kept, resolve_budget, validate_budget_args
from tpc_core.engine.tokens import TokenCounter, TokenCounterSpec, resolve_token_counter

__all__ = ["ConversationPlan", "ConversationResult", "compress_conversation", "fit_parts", "plan_conversation"]


class DocumentCompressor(Protocol):
    """What :func:`compress_conversation` needs of a compressor (:class:`tpc_core.TPCCompressor` is one)."""

    @property
    def token_counter(self) -> TokenCounter: ...

    def compress(self, context: Any, question: str | None = None, target_tokens: int | None = None,
                 rate: float | None = None, token_counter: TokenCounterSpec = None,
                 **options: Any) -> CompressionResult: ...


@dataclass(frozen=True)
class ConversationPlan:
    """What is kept whole, what is compressed, and within how much.

    Attributes:
        task: The latest user turn's text (the question of prompt-aware scoring); ``None`` when the conversation
            has no user turn, or that turn has no text (then the rest is compressed prompt-agnostically).
        task_index: The latest user turn's position, ``None`` without one.
        protected: Per message, whether it is kept whole (system, developer, the latest user turn).
        counts: Per message, the count of each content part (0 for a part that is not text).
        budget: The whole conversation's budget.
    """

    task: str | None
    task_index: int | None
    protected: tuple[bool, ...]
    counts: tuple[tuple[int, ...], ...]
    budget: int

    @property
    def origin_tokens(self) -> int:
        """The conversation's count: every text part of every message."""
        return sum(map(sum, self.counts))

    @property
    def protected_tokens(self) -> int:
        """What the protected messages count."""
        return sum(sum(counts) for counts, kept in zip(self.counts, self.protected) if kept)

    @property
    def room(self) -> int:
        """What the protected messages leave to the others."""
        return self.budget - self.protected_tokens


def plan_conversation(messages: Sequence[Message], counts: Sequence[Sequence[int]], *,
                      target_tokens: int | None = None, rate: float | None = None) -> ConversationPlan:
    """The plan of a read conversation whose text parts are counted (pure: no model, no counter).

    Raises:
        ValueError: A budget smaller than the protected messages: the message says how many tokens they need.
    """
    users = [message.index for message in messages if message.role == "user"]
    task_index = users[-1] if users else None
    task = messages[task_index].text or None if task_index is not None else None
    protected = tuple(message.role in PROTECTED_ROLES or message.index == task_index for message in messages)
    plan = ConversationPlan(task, task_index, protected, tuple(tuple(c) for c in counts), 0)
    budget = resolve_budget(plan.origin_tokens, target_tokens=target_tokens, rate=rate)
    plan = ConversationPlan(task, task_index, protected, plan.counts, budget)
    if plan.room < 0:
        kept = ", ".join(str(message.index) for message, whole in zip(messages, protected) if whole)
        raise ValueError(f"The budget of {budget} tokens is smaller than the messages kept whole (system and developer "
                         f"messages and the latest user turn: messages {kept}), which need {plan.protected_tokens} "
                         f"tokens of the conversation's {plan.origin_tokens}. Give a budget of at least "
                         f"{plan.protected_tokens} tokens.")
    return plan


def fit_parts(documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
              kept: Sequence[Sequence[int]], scores: Sequence[Sequence[float | None]], counts: Sequence[int],
              room: int, counter: Callable[[str], int]) -> list[str]:
    """The parts' kept sentences joined verbatim, the weakest dropped until the parts' own counts sum to ``room``.

    The engine guarantees the count of the parts joined by a separator; with a subword counter the sum of their
    own counts can be larger. Each drop removes the lowest-scoring kept sentence (unscored: the earliest) and
    recounts that part alone.

    Args:
        documents: The parts' texts.
        spans: Each part's sentence spans.
        kept: Each part's kept sentence indices (ascending).
        scores: Each part's sentence scores (``None`` when nothing was scored).
        counts: Each part's count as joined from ``kept``.
        room: The budget of all the parts together.
        counter: The caller's counter.
    """
    kept_now = [list(part) for part in kept]
    counts_now = list(counts)
    texts = [join_kept(doc, doc_spans, part) for doc, doc_spans, part in zip(documents, spans, kept_now)]
    while sum(counts_now) > room and any(kept_now):
        candidates = [(d, i) for d, part in enumerate(kept_now) for i in part]
        d, i = min(candidates, key=lambda k: (scores[k[0]][k[1]] is not None, scores[k[0]][k[1]] or 0.0, k))
        kept_now[d].remove(i)
        texts[d] = join_kept(documents[d], spans[d], kept_now[d])
        counts_now[d] = counter(texts[d]) if texts[d] else 0
    return texts


@dataclass(frozen=True)
class ConversationResult:
    """A compressed conversation.

    Attributes:
        messages: The messages, each a new object of its input's kind, same order.
        origin_tokens: The input's count (every text part of every message).
        compressed_tokens: The output's count, at most ``budget``.
        budget: The conversation's budget.
        protected_tokens: What the messages kept whole count.
        task: The latest user turn's text the rest was compressed for (``None``: prompt-agnostic).
        result: The engine's result over the compressed parts (``None`` when no part needed compressing).
    """

    messages: list[Any]
    origin_tokens: int
    compressed_tokens: int
    budget: int
    protected_tokens: int
    task: str | None
    result: CompressionResult | None = field(default=None, repr=False)


def compress_conversation(compressor: DocumentCompressor, messages: Sequence[Any], *,
                          target_tokens: int | None = None, rate: float | None = None,
                          token_counter: TokenCounterSpec = None, **options: Any) -> ConversationResult:
    """Compress a conversation under one budget (see the module's docstring and
    :meth:`tpc_core.TPCCompressor.compress_messages`, which documents the arguments)."""
    if "question" in options:
        raise TypeError("compress_messages takes no question: the latest user turn is the task (add the question as "
                        "the last user message).")
    CompressionOptions.build(target_tokens=target_tokens, rate=rate, **options)  # every option checked up front
    read = read_messages(messages)
    for message in read:
        texts = tuple(part for part in message.parts if part is not None)
        try:
            as_documents(texts, message.index)
        except ValueError as error:
            raise ValueError(str(error).replace(f"Prompt {message.index}: document", f"Message {message.index}: text "
                                                "part", 1)) from error
    counter = compressor.token_counter if token_counter is None else resolve_token_counter(token_counter)
    flat = [part for message in read for part in message.parts if part is not None]
    flat_counts = iter(counter.count_many(flat) if flat else [])
    counts = [tuple(next(flat_counts) if part is not None else 0 for part in message.parts) for message in read]
    plan = plan_conversation(read, counts, target_tokens=target_tokens, rate=rate)
    # The parts to compress: every text part of an unprotected message, blank ones included (they come back "").
    where = [(m.index, p) for m in read if not plan.protected[m.index] for p, part in enumerate(m.parts)
             if part is not None]
    texts: dict[tuple[int, int], str] = {}
    result = None
    if sum(counts[m][p] for m, p in where) > plan.room:
        documents = [read[m].parts[p] or "" for m, p in where]
        if plan.room == 0:
            texts = {key: "" for key in where}
        else:
            result = compressor.compress(documents, question=plan.task, target_tokens=plan.room, token_counter=counter,
                                         **options)
            texts = dict(zip(where, _fitted(result, documents, plan.room, counter)))
    new_parts = [tuple(texts.get((m.index, p)) for p in range(len(m.parts))) for m in read]
    compressed = sum(counter(text) if text else 0 for text in texts.values()) + sum(
        counts[m][p] for m, parts in enumerate(new_parts) for p, text in enumerate(parts) if text is None)
    rebuilt = [rebuild_message(original, message, parts) for original, message, parts in zip(messages, read, new_parts)]
    return ConversationResult(rebuilt, plan.origin_tokens, compressed, plan.budget, plan.protected_tokens, plan.task,
                              result)


def _fitted(result: CompressionResult, documents: list[str], room: int, counter: TokenCounter) -> list[str]:
    """The engine's compressed parts, tightened by :func:`fit_parts` where their own counts sum over ``room``."""
    if sum(result.document_compressed_tokens) <= room:
        return list(result.compressed_documents)
    spans: list[list[tuple[int, int]]] = [[] for _ in documents]
    kept: list[list[int]] = [[] for _ in documents]
    scores: list[list[float | None]] = [[] for _ in documents]
    for sentence in result.sentences:
        spans[sentence.doc_index].append((sentence.start, sentence.end))
        scores[sentence.doc_index].append(sentence.score)
        if sentence.kept:
            kept[sentence.doc_index].append(sentence.index)
    return fit_parts(documents, spans, kept, scores, result.document_compressed_tokens, room, counter)
