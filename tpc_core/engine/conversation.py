"""A conversation compressed under one budget: which messages are kept whole, what the budget is, and the fit.

:func:`compress_conversation` is what :meth:`tpc_core.TPCCompressor.compress_messages` runs:

1. :func:`tpc_core.engine.messages.read_messages` reads every message (kind, canonical role, text parts);
2. :func:`plan_conversation` (pure, given the counts) finds the task (the latest user turn's text), the protected
   messages (system / developer messages and that turn, kept whole), counts every text part with the caller's
   counter and turns ``target_tokens`` / ``rate`` into the budget of the whole conversation;
3. the text parts of every other message (earlier turns, assistant replies, tool and function results), cut at
   their blank lines into paragraphs (:func:`paragraph_cuts`: pasted documents), are the documents of one engine
   call, prompt-aware for the task, under what the protected messages leave (``budget - protected tokens``,
   ``budget_scope`` as the caller asks, "global" by default);
4. :func:`fit_parts` rebuilds each part from its paragraphs (:func:`assemble_part`: kept sentences verbatim, in
   order, a paragraph break between paragraphs), checks the sum of the parts' own counts (the engine's
   guarantee is on its documents' join) and drops the weakest kept sentence until it fits: the conversation's
   budget is exact for any counter;
5. :func:`tpc_core.engine.messages.rebuild_message` puts the texts back into copies of the messages.

What is counted: the sum of the counter over every text part of every message. Roles, names, tool calls'
arguments, non-text parts and the chat template's own tokens are not counted (they depend on the model's
template, which the compressor does not see): leave room for them in the budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from tpc_core.engine.messages import PROTECTED_ROLES, Message, read_messages, rebuild_message
from tpc_core.engine.options import CompressionOptions, as_documents
from tpc_core.engine.result import CompressionResult
from tpc_core.engine.selection import join_kept, resolve_budget
from tpc_core.engine.tokens import TokenCounter, TokenCounterSpec, resolve_token_counter

__all__ = ["ConversationPlan", "ConversationResult", "assemble_part", "compress_conversation", "fit_parts",
           "paragraph_cuts", "plan_conversation"]

Span = tuple[int, int]
# Whitespace that holds a blank line: where one paragraph (a pasted document) ends and the next begins.
BLANK_LINE = re.compile(r"[ \t\r\f\v]*\n(?:[ \t\r\f\v]*\n)+\s*")


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
                      target_tokens: int | None = None, rate: float | None = None,
                      empty_part_tokens: int = 0) -> ConversationPlan:
    """The plan of a read conversation whose text parts are counted (pure: no model, no counter).

    Args:
        messages: The read messages.
        counts: Each message's text parts' counts (0 for a part that is not text).
        target_tokens: The whole conversation's budget.
        rate: Instead: the share of the other messages' tokens to keep; the protected messages are kept whole on
            top of it (so a conversation with nothing to compress, a chat's first turn, comes back as it is).
        empty_part_tokens: What the caller's counter gives an empty text (``counter("")``): every compressible
            text part costs at least that, emptied.

    Raises:
        ValueError: A budget smaller than what the protected messages need (and the emptied parts, where the
            counter counts an empty text): the message says how many tokens.
    """
    users = [message.index for message in messages if message.role == "user"]
    task_index = users[-1] if users else None
    task = messages[task_index].text or None if task_index is not None else None
    protected = tuple(message.role in PROTECTED_ROLES or message.index == task_index for message in messages)
    plan = ConversationPlan(task, task_index, protected, tuple(tuple(c) for c in counts), 0)
    if target_tokens is not None:
        budget = resolve_budget(plan.origin_tokens, target_tokens=target_tokens)
    else:
        rest = plan.origin_tokens - plan.protected_tokens
        budget = plan.protected_tokens + (resolve_budget(rest, rate=rate) if rest > 0 else 0)
    plan = ConversationPlan(task, task_index, protected, plan.counts, budget)
    emptied = sum(part is not None for m, whole in zip(messages, protected) if not whole for part in m.parts)
    need = plan.protected_tokens + empty_part_tokens * emptied
    if budget < need:
        kept = ", ".join(str(message.index) for message, whole in zip(messages, protected) if whole)
        empties = (f", and {empty_part_tokens} for each of the {emptied} other text parts even emptied (the counter "
                   f"counts an empty text as {empty_part_tokens})") if empty_part_tokens and emptied else ""
        raise ValueError(f"The budget of {budget} tokens is smaller than the messages kept whole (system and developer "
                         f"messages and the latest user turn: messages {kept}) need {need} tokens (they count "
                         f"{plan.protected_tokens} of the conversation's {plan.origin_tokens}{empties}). Give a budget "
                         f"of at least {need} tokens.")
    return plan


def paragraph_cuts(text: str) -> list[Span]:
    """Where ``text``'s paragraphs are: the stretches between whitespace that holds a blank line (blank ones left
    out). Pasted documents are such paragraphs; each is read by the CSE as a document of its own, as the
    prompt-aware reference reads separate documents (on qa_dev train, evidence recall 0.825 against 0.792 for
    whole messages as documents: ``benchmarks/results/conversations``)."""
    cuts, start = [], 0
    for gap in BLANK_LINE.finditer(text):
        cuts.append((start, gap.start()))
        start = gap.end()
    cuts.append((start, len(text)))
    return [(begin, end) for begin, end in cuts if text[begin:end].strip()]


def assemble_part(text: str, cuts: Sequence[Span], segments: Sequence[str]) -> str:
    """A text part from its compressed paragraphs: the non-empty ones in order, each followed by the whitespace
    that originally followed it (a paragraph break) when another comes after it."""
    pieces: list[str] = []
    for k, ((_, end), segment) in enumerate(zip(cuts, segments)):
        if not segment:
            continue
        if pieces:
            pieces.append(gap)
        pieces.append(segment)
        gap = text[end:cuts[k + 1][0]] if k + 1 < len(cuts) else "\n\n"
    return "".join(pieces)


def fit_parts(parts: Sequence[str], cuts: Sequence[Sequence[Span]], spans: Sequence[Sequence[Span]],
              kept: Sequence[Sequence[int]], scores: Sequence[Sequence[float | None]], room: int,
              counter: Callable[[str], int]) -> list[str]:
    """The parts rebuilt from their paragraphs' kept sentences (verbatim), the weakest sentence dropped until the
    parts' own counts sum to at most ``room``.

    The engine guarantees the count of its documents joined by a separator; with a subword counter the sum of
    the parts' own counts can be larger. Each drop removes the lowest-scoring kept sentence (unscored: the
    earliest) and recounts its part alone.

    Args:
        parts: The text parts.
        cuts: Each part's paragraphs (:func:`paragraph_cuts`); the paragraphs, part by part, are the segments.
        spans: Each segment's sentence spans (offsets in the segment).
        kept: Each segment's kept sentence indices (ascending).
        scores: Each segment's sentence scores (``None`` when nothing was scored).
        room: The budget of all the parts together.
        counter: The caller's counter.
    """
    segments = [part[begin:end] for part, part_cuts in zip(parts, cuts) for begin, end in part_cuts]
    owner = [k for k, part_cuts in enumerate(cuts) for _ in part_cuts]
    first = [sum(len(c) for c in cuts[:k]) for k in range(len(parts))]
    kept_now = [list(segment_kept) for segment_kept in kept]
    texts = [join_kept(doc, doc_spans, segment_kept) for doc, doc_spans, segment_kept in zip(segments, spans, kept_now)]

    def part_text(k: int) -> str:
        return assemble_part(parts[k], cuts[k], texts[first[k]: first[k] + len(cuts[k])])

    rebuilt = [part_text(k) for k in range(len(parts))]
    counts = [counter(text) for text in rebuilt]
    while sum(counts) > room and any(kept_now):
        candidates = [(d, i) for d, segment_kept in enumerate(kept_now) for i in segment_kept]
        d, i = min(candidates, key=lambda c: (scores[c[0]][c[1]] is not None, scores[c[0]][c[1]] or 0.0, c))
        kept_now[d].remove(i)
        texts[d] = join_kept(segments[d], spans[d], kept_now[d])
        rebuilt[owner[d]] = part_text(owner[d])
        counts[owner[d]] = counter(rebuilt[owner[d]])
    return rebuilt


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
    plan = plan_conversation(read, counts, target_tokens=target_tokens, rate=rate, empty_part_tokens=counter(""))
    # The parts to compress: every text part of an unprotected message, blank ones included (they come back "").
    where = [(m.index, p) for m in read if not plan.protected[m.index] for p, part in enumerate(m.parts)
             if part is not None]
    texts: dict[tuple[int, int], str] = {}
    result = None
    if sum(counts[m][p] for m, p in where) > plan.room:
        parts = [read[m].parts[p] or "" for m, p in where]
        cuts = [paragraph_cuts(part) for part in parts]
        segments = [part[begin:end] for part, part_cuts in zip(parts, cuts) for begin, end in part_cuts]
        if plan.room == 0 or not segments:
            texts = {key: "" for key in where}
        else:
            result = compressor.compress(segments, question=plan.task, target_tokens=plan.room, token_counter=counter,
                                         **options)
            texts = dict(zip(where, _fitted(result, parts, cuts, plan.room, counter)))
    new_parts = [tuple(texts.get((m.index, p)) for p in range(len(m.parts))) for m in read]
    compressed = sum(counter(text) for text in texts.values()) + sum(
        counts[m][p] for m, parts in enumerate(new_parts) for p, text in enumerate(parts) if text is None)
    rebuilt = [rebuild_message(original, message, parts) for original, message, parts in zip(messages, read, new_parts)]
    return ConversationResult(rebuilt, plan.origin_tokens, compressed, plan.budget, plan.protected_tokens, plan.task,
                              result)


def _fitted(result: CompressionResult, parts: list[str], cuts: list[list[Span]], room: int,
            counter: TokenCounter) -> list[str]:
    """The parts rebuilt from the engine's compressed paragraphs, tightened by :func:`fit_parts`."""
    segments = len(result.documents)
    spans: list[list[Span]] = [[] for _ in range(segments)]
    kept: list[list[int]] = [[] for _ in range(segments)]
    scores: list[list[float | None]] = [[] for _ in range(segments)]
    for sentence in result.sentences:
        spans[sentence.doc_index].append((sentence.start, sentence.end))
        scores[sentence.doc_index].append(sentence.score)
        if sentence.kept:
            kept[sentence.doc_index].append(sentence.index)
    return fit_parts(parts, cuts, spans, kept, scores, room, counter)
