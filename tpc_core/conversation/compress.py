"""A conversation compressed under one budget: which messages are kept whole, what the budget is, and the fit.

:func:`compress_conversation` is what :meth:`tpc_core.TPCCompressor.compress_messages` runs:

1. :func:`tpc_core.conversation.messages.read_messages` reads every message (kind, canonical role, text parts);
2. :func:`plan_conversation` (pure, given the counts) finds the task (the latest user turn's text), the protected
   messages (system / developer messages and that turn, kept whole), counts every text part with the caller's
   counter and turns ``target_tokens`` / ``rate`` into the budget of the whole conversation. A latest user turn
   that carries material (a pasted document: :data:`MATERIAL_TOKENS` besides its request) is compressed around
   its request instead: the checkpoint's request head finds the request sentences (``find_request``), they are the
   task and are kept verbatim (forced, never dropped, counted in what the budget must hold), and the rest of that
   turn is compressed with the other messages;
3. the text parts of every other message (earlier turns, assistant replies, tool and function results), cut at
   their blank lines into paragraphs (:func:`paragraph_cuts`: pasted documents), are the documents of one engine
   call, prompt-aware for the task, under what the protected messages leave (``budget - protected tokens``,
   ``budget_scope`` as the caller asks, "global" by default);
4. :func:`fit_parts` rebuilds each part from its paragraphs (:func:`assemble_part`: kept sentences verbatim, in
   order, a paragraph break between paragraphs), checks the sum of the parts' own counts (the engine's
   guarantee is on its documents' join) and drops the weakest kept sentence until it fits: the conversation's
   budget is exact for any counter;
5. :func:`tpc_core.conversation.messages.rebuild_message` puts the texts back into copies of the messages.

What is counted: the sum of the counter over every text part of every message. Roles, names, tool calls'
arguments, non-text parts and the chat template's own tokens are not counted (they depend on the model's
template, which the compressor does not see): leave room for them in the budget.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from tpc_core.conversation.messages import PROTECTED_ROLES, Message, read_messages, rebuild_message
from tpc_core.conversation.user_turn import MATERIAL_TOKENS, around_request, caller_patterns, material_parts
from tpc_core.diagnostics.notices import runtime_warning
from tpc_core.engine.options import CompressionOptions, as_documents
from tpc_core.engine.output.result import CompressionResult
from tpc_core.engine.pipeline import Engine
from tpc_core.engine.selection.budget import join_kept, resolve_budget
from tpc_core.engine.tokens import TokenCounter, TokenCounterSpec, resolve_token_counter
from tpc_core.segmentation import Span

__all__ = ["EMPTIED", "MATERIAL_TOKENS", "ConversationPlan", "ConversationResult", "assemble_part", "compress_conversation", "fit_parts",
           "fixed_parts", "paragraph_cuts", "plan_conversation", "shortfall_message", "task_turn"]

logger = logging.getLogger(__name__)

# Whitespace that holds a blank line: where one paragraph (a pasted document) ends and the next begins.
BLANK_LINE = re.compile(r"[ \t\r\f\v]*\n(?:[ \t\r\f\v]*\n)+\s*")


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
        fixed: Per message, per part, whether the part is kept as it is (the parts of protected messages, but the
            tool results a latest user turn carries); empty: every part of a protected message.
        need: What the conversation needs at least: the fixed parts, and each emptied part's count where the
            counter counts an empty text.
    """

    task: str | None
    task_index: int | None
    protected: tuple[bool, ...]
    counts: tuple[tuple[int, ...], ...]
    budget: int
    fixed: tuple[tuple[bool, ...], ...] = ()
    need: int = 0

    def is_fixed(self, message: int, part: int) -> bool:
        """Whether part ``part`` of message ``message`` is kept as it is."""
        row = self.fixed[message] if self.fixed else ()
        return row[part] if part < len(row) else self.protected[message]

    @property
    def origin_tokens(self) -> int:
        """The conversation's count: every text part of every message."""
        return sum(map(sum, self.counts))

    @property
    def protected_tokens(self) -> int:
        """What the parts kept as they are count."""
        return sum(count for m, counts in enumerate(self.counts) for p, count in enumerate(counts)
                   if self.is_fixed(m, p))

    @property
    def room(self) -> int:
        """What the kept parts leave to the others (negative when they alone exceed the budget)."""
        return self.budget - self.protected_tokens

    @property
    def shortfall(self) -> int:
        """How many tokens the budget lacks for what must be kept (0 when it suffices)."""
        return max(self.need - self.budget, 0)


def task_turn(messages: Sequence[Message]) -> int | None:
    """The latest user turn the user wrote: the latest message of role "user" (a user message made only of tool
    results reads as role "tool", :mod:`tpc_core.conversation.messages`)."""
    users = [message.index for message in messages if message.role == "user"]
    return users[-1] if users else None


def fixed_parts(messages: Sequence[Message], task_index: int | None,
                open_parts: Collection[tuple[int, int]] = ()) -> tuple[tuple[bool, ...], ...]:
    """Per message, per part, what is kept as it is: every part of a system or developer message; the latest user
    turn's own parts (the tool results it carries are compressed like any tool message's), but the ``open_parts``
    (``(message, part)``: a long turn compressed around its request, :func:`compress_conversation`)."""
    return tuple(tuple(message.role in PROTECTED_ROLES or (message.index == task_index and not message.is_tool_part(p)
                                                           and (message.index, p) not in open_parts)
                       for p in range(len(message.parts))) for message in messages)


def plan_conversation(messages: Sequence[Message], counts: Sequence[Sequence[int]], *,
                      target_tokens: int | None = None, rate: float | None = None,
                      empty_part_tokens: int = 0, strict: bool = True,
                      open_parts: Collection[tuple[int, int]] = (), request: str | None = None,
                      pinned_tokens: int = 0) -> ConversationPlan:
    """The plan of a read conversation whose text parts are counted (pure: no model, no counter).

    Args:
        messages: The read messages.
        counts: Each message's text parts' counts (0 for a part that is not text).
        target_tokens: The whole conversation's budget.
        rate: Instead: the share of the other messages' tokens to keep; the protected messages are kept whole on
            top of it (so a conversation with nothing to compress, a chat's first turn, comes back as it is).
        empty_part_tokens: What the caller's counter gives an empty text (``counter("")``): every compressible
            text part costs at least that, emptied.
        strict: Raise when the budget is smaller than what must be kept; ``False`` returns the plan with its
            :attr:`ConversationPlan.shortfall` (the caller keeps what must be kept and says so).
        open_parts: Text parts of the latest user turn compressed around its request (not kept whole).
        request: The request found in them: the task instead of the whole turn's text.
        pinned_tokens: What the request sentences count: they must be kept (part of what the budget must hold).

    Raises:
        ValueError: With ``strict``, a budget smaller than what the protected messages need (and the emptied parts,
            where the counter counts an empty text): the message says how many tokens.
    """
    task_index = task_turn(messages)
    task = request or (messages[task_index].text or None if task_index is not None else None)
    protected = tuple(message.role in PROTECTED_ROLES or message.index == task_index for message in messages)
    fixed = fixed_parts(messages, task_index, open_parts)
    plan = ConversationPlan(task, task_index, protected, tuple(tuple(c) for c in counts), 0, fixed)
    if target_tokens is not None:
        budget = resolve_budget(plan.origin_tokens, target_tokens=target_tokens)
    else:
        rest = plan.origin_tokens - plan.protected_tokens
        budget = plan.protected_tokens + (resolve_budget(rest, rate=rate) if rest > 0 else 0)
    emptied = sum(part is not None and not plan.is_fixed(k, p) for k, m in enumerate(messages) for p, part in enumerate(m.parts))
    need = plan.protected_tokens + pinned_tokens + empty_part_tokens * emptied
    plan = ConversationPlan(task, task_index, protected, plan.counts, budget, fixed, need)
    if strict and budget < need:
        raise ValueError(shortfall_message(messages, plan, empty_part_tokens, emptied))
    return plan


def shortfall_message(messages: Sequence[Message], plan: ConversationPlan, empty_part_tokens: int,
                      emptied: int) -> str:
    """What a budget below the protected messages lacks, and the budget that would do."""
    kept = ", ".join(str(message.index) for message, whole in zip(messages, plan.protected) if whole)
    empties = (f", and {empty_part_tokens} for each of the {emptied} other text parts even emptied (the counter "
               f"counts an empty text as {empty_part_tokens})") if empty_part_tokens and emptied else ""
    pinned = plan.need - plan.protected_tokens - empty_part_tokens * emptied
    if pinned:
        empties = f", and {pinned} for the request sentences of the latest user turn, kept verbatim{empties}"
    return (f"The budget of {plan.budget} tokens is smaller than the messages kept whole (system and developer "
            f"messages and the latest user turn: messages {kept}) need {plan.need} tokens (they count "
            f"{plan.protected_tokens} of the conversation's {plan.origin_tokens}{empties}). Give a budget "
            f"of at least {plan.need} tokens.")


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
    gap = ""
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
              counter: Callable[[str], int], floors: Sequence[Sequence[int]] = (),
              pinned: Sequence[Sequence[int]] = ()) -> list[str]:
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
        floors: Groups of parts (a message's text parts) that keep at least one sentence together: a group that
            kept none gets its best sentence (unscored: its first), and a group's last sentence is never dropped, so
            the parts may then sum over ``room``.
        pinned: Each segment's sentence indices that are never dropped (a request kept verbatim).
    """
    segments = [part[begin:end] for part, part_cuts in zip(parts, cuts) for begin, end in part_cuts]
    owner = [k for k, part_cuts in enumerate(cuts) for _ in part_cuts]
    first = [sum(len(c) for c in cuts[:k]) for k in range(len(parts))]
    kept_now = [list(segment_kept) for segment_kept in kept]
    texts = [join_kept(doc, doc_spans, segment_kept) for doc, doc_spans, segment_kept in zip(segments, spans, kept_now)]

    def part_text(k: int) -> str:
        return assemble_part(parts[k], cuts[k], texts[first[k]: first[k] + len(cuts[k])])

    groups = [[d for d, k in enumerate(owner) if k in set(floor)] for floor in floors]
    group_of = {d: g for g, members in enumerate(groups) for d in members}
    for members in groups:  # the floor: a group that kept nothing keeps its best sentence
        options = [(d, i) for d in members for i in range(len(spans[d]))]
        if options and not any(kept_now[d] for d in members):
            d, i = max(options, key=lambda c: (scores[c[0]][c[1]] is not None, scores[c[0]][c[1]] or 0.0, -c[0], -c[1]))
            kept_now[d] = sorted([*kept_now[d], i])
            texts[d] = join_kept(segments[d], spans[d], kept_now[d])

    def last_of_group(d: int) -> bool:
        return d in group_of and sum(len(kept_now[m]) for m in groups[group_of[d]]) == 1

    rebuilt = [part_text(k) for k in range(len(parts))]
    counts = [counter(text) for text in rebuilt]
    while sum(counts) > room:
        candidates = [(d, i) for d, segment_kept in enumerate(kept_now) for i in segment_kept
                      if not last_of_group(d) and not (d < len(pinned) and i in pinned[d])]
        if not candidates:
            break
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
        over_budget: Tokens by which ``compressed_tokens`` exceeds ``budget`` (0 within it): with ``strict=False``,
            what must be kept (the protected messages, one sentence of each message with ``emptied="sentence"``)
            did not fit; ``warning`` says so.
        warning: That warning's text (also warned and logged), ``None`` within the budget.
    """

    messages: list[Any]
    origin_tokens: int
    compressed_tokens: int
    budget: int
    protected_tokens: int
    task: str | None
    result: CompressionResult | None = field(default=None, repr=False)
    over_budget: int = 0
    warning: str | None = None


EMPTIED = ("empty", "drop", "sentence")
"""What becomes of a message whose text parts lose every sentence: "empty" leaves each such part as ``""`` (OpenAI
accepts empty strings; Anthropic rejects empty text blocks and empty messages), "drop" leaves an emptied text part
out of a list that keeps another part, "sentence" keeps at least one sentence (its best) of every compressed
message that had text and drops its other emptied text parts (what no major provider rejects)."""


def compress_conversation(engine: Engine, messages: Sequence[Any], *,
                          target_tokens: int | None = None, rate: float | None = None,
                          token_counter: TokenCounterSpec = None, strict: bool = True, emptied: str = "empty",
                          **options: Any) -> ConversationResult:
    """Compress a conversation under one budget (see the module's docstring and
    :meth:`tpc_core.TPCCompressor.compress_messages`, which documents the arguments).

    Args:
        strict: ``True`` (the engine's default): a budget smaller than what must be kept is a ``ValueError``.
            ``False`` (the adapters' default): the protected messages are kept whole, the others emptied (see
            ``emptied``), and the result says by how much it is over (``over_budget``), with a runtime warning.
        emptied: See :data:`EMPTIED` (the engine's default "empty"; the adapters' "sentence").
    """
    if "question" in options:
        raise TypeError("compress_messages takes no question: the latest user turn is the task (add the question as "
                        "the last user message).")
    if emptied not in EMPTIED:
        raise ValueError(f"emptied must be one of {', '.join(map(repr, EMPTIED))}, got {emptied!r}.")
    CompressionOptions.build(target_tokens=target_tokens, rate=rate, **options)  # every option checked up front
    read = read_messages(messages)
    for message in read:
        as_documents(tuple(part for part in message.parts if part is not None), message.index, label="Message",
                     part="text part")
    counter = engine.default_counter if token_counter is None else resolve_token_counter(token_counter)
    flat = [part for message in read for part in message.parts if part is not None]
    flat_counts = iter(counter.count_many(flat) if flat else [])
    counts = [tuple(next(flat_counts) if part is not None else 0 for part in message.parts) for message in read]
    around = around_request(engine, read, task_turn(read), counts, counter, options)
    pins = {key: [part[a:b] for a, b in found.spans] for key, found in around.items()
            for part in (read[key[0]].parts[key[1]] or "",)}
    def planned(open_parts: set[tuple[int, int]], check: bool) -> ConversationPlan:
        return plan_conversation(read, counts, target_tokens=target_tokens, rate=rate, empty_part_tokens=counter(""),
                                 strict=check, open_parts=open_parts,
                                 request=" ".join(found.text for found in around.values() if found.text) or None,
                                 pinned_tokens=sum(counter(text) for texts in pins.values() for text in texts))

    plan = planned(set(around), False)
    if plan.shortfall and not around:  # a turn with material and no request found, over the budget by itself:
        around = material_parts(read, task_turn(read), counts, options)  # compressed prompt-agnostically rather than kept whole
    plan = planned(set(around), strict)
    if around and not pins:
        plan = dataclasses.replace(plan, task=None)
    if pins:  # the request sentences are taken first (the caller's own patterns too) and never dropped
        options["force_keep_patterns"] = [*caller_patterns(options.get("force_keep_patterns", ())),
                                          *(rf"\A{re.escape(text)}\Z" for texts in pins.values() for text in texts)]
    # The parts to compress: every text part not kept as it is, blank ones included (they come back "").
    where = [(m.index, p) for m in read for p, part in enumerate(m.parts) if part is not None
             and not plan.is_fixed(m.index, p)]
    floors = [[k for k, (m, _) in enumerate(where) if m == message.index] for message in read
              if any(read[m].parts[p].strip() for m, p in where if m == message.index)] if emptied == "sentence" else []
    texts: dict[tuple[int, int], str] = {}
    result = None
    if sum(counts[m][p] for m, p in where) > plan.room:
        parts = [read[m].parts[p] or "" for m, p in where]
        cuts = [paragraph_cuts(part) for part in parts]
        segments = [part[begin:end] for part, part_cuts in zip(parts, cuts) for begin, end in part_cuts]
        if not segments or (plan.room <= 0 and not floors):
            texts = {key: join_kept(part, around[key].spans, range(len(around[key].spans))) if key in around else ""
                     for key, part in zip(where, parts)}
        else:
            pinned = {text for key in where for text in pins.get(key, ())}
            # the request sentences are forced in; a room too small for them still takes them (then over budget)
            target = max(plan.room, sum(counter(text) for text in pinned), 1)
            result = engine.compress([as_documents(segments, 0)], [plan.task], counter,
                                     CompressionOptions.build(target_tokens=target, **options))[0]
            texts = dict(zip(where, _fitted(result, parts, cuts, plan.room, counter, floors, pinned)))
    new_parts = [tuple(texts.get((m.index, p)) for p in range(len(m.parts))) for m in read]
    compressed = sum(counter(text) for text in texts.values()) + sum(
        counts[m][p] for m, parts in enumerate(new_parts) for p, text in enumerate(parts) if text is None)
    over, warning = max(compressed - plan.budget, 0), None
    if over:
        warning = (f"The conversation needs {compressed} tokens, {over} over its budget of {plan.budget}: "
                   + (f"the messages kept whole count {plan.protected_tokens}" if plan.shortfall else
                      "every compressed message keeps one sentence (emptied='sentence')")
                   + ". It was compressed as far as it goes; raise the budget, or shorten what is kept whole.")
        if strict:
            raise ValueError(warning)
        runtime_warning(logger, warning)
    rebuilt = [rebuild_message(original, message, parts, drop_empty=emptied != "empty")
               for original, message, parts in zip(messages, read, new_parts)]
    return ConversationResult(rebuilt, plan.origin_tokens, compressed, plan.budget, plan.protected_tokens, plan.task,
                              result, over, warning)


def _fitted(result: CompressionResult, parts: list[str], cuts: list[list[Span]], room: int,
            counter: TokenCounter, floors: Sequence[Sequence[int]] = (), pinned: Collection[str] = ()) -> list[str]:
    """The parts rebuilt from the engine's compressed paragraphs, tightened by :func:`fit_parts` (which never drops
    a kept sentence whose text is ``pinned``: a request)."""
    segments = len(result.documents)
    spans: list[list[Span]] = [[] for _ in range(segments)]
    kept: list[list[int]] = [[] for _ in range(segments)]
    scores: list[list[float | None]] = [[] for _ in range(segments)]
    for sentence in result.sentences:
        spans[sentence.doc_index].append((sentence.start, sentence.end))
        scores[sentence.doc_index].append(sentence.score)
        if sentence.kept:
            kept[sentence.doc_index].append(sentence.index)
    documents = result.documents
    keep = [[i for i in kept[d] if documents[d][spans[d][i][0]:spans[d][i][1]] in pinned] for d in range(segments)]
    return fit_parts(parts, cuts, spans, kept, scores, room, counter, floors, keep)
