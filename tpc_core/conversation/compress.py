"""A conversation compressed under one budget: plan, read, fit.

:func:`compress_conversation` is what :meth:`tpc_core.TPCCompressor.compress_messages` runs:

1. :func:`tpc_core.conversation.messages.read_messages` reads every message (kind, canonical role, text parts);
2. **plan** (:func:`plan_work`): every text part is counted with the caller's counter; a latest user turn that
   carries material (a pasted document: :data:`MATERIAL_TOKENS` besides its request) is compressed around its
   request (:mod:`tpc_core.conversation.user_turn`: the checkpoint's request head finds the request sentences, which
   are the task, kept verbatim and counted in what the budget must hold); :func:`plan_conversation` finds the
   protected messages (system / developer messages and that turn, kept whole) and the budget of the whole
   conversation;
3. **read** (:func:`read_parts`): the text parts of every other message (earlier turns, assistant replies, tool and
   function results), cut at their blank lines into paragraphs (:func:`paragraph_cuts`: pasted documents), are the
   documents of one engine call, prompt-aware for the task, under what the protected messages leave
   (``budget - protected tokens``, ``budget_scope`` as the caller asks, "global" by default);
4. **fit** (:func:`fit_work`): :func:`fit_parts` rebuilds each part from its paragraphs (kept sentences verbatim, in
   order, a paragraph break between paragraphs) and runs the one budget loop
   (:func:`tpc_core.engine.selection.fitting.drop_to_fit`) on the sum of the parts' own counts (the engine's
   guarantee is on its documents' join): the conversation's budget is exact for any counter;
5. :func:`tpc_core.conversation.messages.rebuild_message` puts the texts back into copies of the messages.

What is counted: the sum of the counter over every text part of every message. Roles, names, tool calls'
arguments, non-text parts and the chat template's own tokens are not counted (they depend on the model's
template, which the compressor does not see): leave room for them in the budget.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from tpc_core.cache import check_cache_spec
from tpc_core.conversation.messages import Message, read_messages, rebuild_message
from tpc_core.conversation.paragraphs import assemble_part, fit_parts, paragraph_cuts
from tpc_core.conversation.plan import (
    ConversationPlan,
    fixed_parts,
    plan_conversation,
    shortfall_message,
    task_turn,
)
from tpc_core.conversation.user_turn import MATERIAL_TOKENS, around_request, caller_patterns, material_parts
from tpc_core.diagnostics.notices import caller_warning
from tpc_core.engine.options import CompressionOptions, as_documents
from tpc_core.engine.output.result import CompressionResult
from tpc_core.engine.pipeline import Engine
from tpc_core.engine.selection.budget import join_kept
from tpc_core.engine.task.finder import FoundRequest
from tpc_core.engine.tokens import TokenCounter, TokenCounterSpec, resolve_token_counter
from tpc_core.segmentation import Span

# The plan's and the paragraphs' names are re-exported: this module is where a conversation's names were found.
__all__ = ["EMPTIED", "MATERIAL_TOKENS", "ConversationPlan", "ConversationResult", "ConversationWork", "assemble_part",
           "compress_conversation", "fit_parts", "fit_work", "fixed_parts", "paragraph_cuts", "plan_conversation",
           "plan_work", "read_parts", "shortfall_message", "task_turn"]


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
                          token_counter: TokenCounterSpec = None, strict: bool = False, emptied: str = "sentence",
                          keep_parts: Collection[tuple[int, int]] = (), **options: Any) -> ConversationResult:
    """Compress a conversation under one budget (see the module's docstring and
    :meth:`tpc_core.TPCCompressor.compress_messages`, which documents the arguments): :func:`plan_work` (what is
    kept, what is compressed, within how much), :func:`read_parts` (the engine reads and selects the compressed
    paragraphs), :func:`fit_work` (the parts rebuilt within the room), then the messages rebuilt.

    Args:
        strict: ``False`` (the default everywhere, :class:`tpc_core.options.ConversationOptions`): the protected
            messages are kept whole, the others emptied (see ``emptied``), and the result says by how much it is over
            (``over_budget``), with a runtime warning. ``True``: a budget smaller than what must be kept is a
            ``ValueError``.
        emptied: See :data:`EMPTIED` (default "sentence").
        keep_parts: Text parts kept as they are, ``(message, part)``, beside the protected messages: they count in
            what the budget must hold (an agent's tool results, fitted by its ledger, and those of excluded tools).
    """
    _check_arguments(emptied, options, target_tokens=target_tokens, rate=rate)
    read = _read_checked(messages)
    counter = engine.default_counter if token_counter is None else resolve_token_counter(token_counter)
    work = plan_work(engine, read, counter, target_tokens=target_tokens, rate=rate, strict=strict, emptied=emptied,
                     options=options, keep_parts=keep_parts)
    result = read_parts(engine, work, counter)
    texts = fit_work(work, result, counter)
    return _finish(messages, work, texts, result, counter, strict=strict, emptied=emptied)


def _check_arguments(emptied: str, options: dict[str, Any], *, target_tokens: int | None, rate: float | None) -> None:
    """Raise for what a conversation cannot take: a ``question`` (the latest user turn is the task), an unknown
    ``emptied``, any option :class:`CompressionOptions` rejects, or a ``cache`` the engine would refuse (checked up
    front: a conversation within its budget makes no engine call, and is refused all the same)."""
    if "question" in options:
        raise TypeError("compress_messages takes no question: the latest user turn is the task (add the question as "
                        "the last user message).")
    if emptied not in EMPTIED:
        raise ValueError(f"emptied must be one of {', '.join(map(repr, EMPTIED))}, got {emptied!r}.")
    CompressionOptions.build(target_tokens=target_tokens, rate=rate, **options)
    check_cache_spec(options.get("cache"))
    if options.get("keep_request") is False:
        raise ValueError("keep_request=False does not apply to conversations: the latest user turn is the task, and "
                         "its request is kept. Compress the text as a prompt (compress) to let the request compete "
                         "for the budget.")


def _read_checked(messages: Sequence[Any]) -> list[Message]:
    """The messages read (:func:`read_messages`), every text part checked as a document (a lone surrogate raises)."""
    read = read_messages(messages)
    for message in read:
        as_documents(tuple(part for part in message.parts if part is not None), message.index, label="Message",
                     part="text part")
    return read


@dataclass(frozen=True)
class ConversationWork:
    """What :func:`plan_work` decides: the plan, the parts to compress and how.

    Attributes:
        read: The read messages.
        counts: Each message's text parts' counts (0 for a part that is not text).
        plan: The budget and what is kept whole.
        around: The latest user turn's parts compressed around a request (empty ``text``: prompt-agnostically).
        pins: Per such part, the texts of its request sentences (kept verbatim, never dropped).
        where: The parts to compress, ``(message, part)``: every text part not kept as it is.
        floors: Groups of positions in ``where`` (a message's parts) that keep a sentence (``emptied="sentence"``).
        options: The engine's options (the request sentences forced in).
    """

    read: list[Message]
    counts: list[tuple[int, ...]]
    plan: ConversationPlan
    around: dict[tuple[int, int], FoundRequest]
    pins: dict[tuple[int, int], list[str]]
    where: list[tuple[int, int]]
    floors: list[list[int]]
    options: dict[str, Any]

    @property
    def parts(self) -> list[str]:
        """The texts of the parts to compress."""
        return [self.read[m].parts[p] or "" for m, p in self.where]

    @property
    def over_room(self) -> bool:
        """Whether the parts to compress count more than the room the kept parts leave them."""
        return sum(self.counts[m][p] for m, p in self.where) > self.plan.room

    @property
    def pinned(self) -> set[str]:
        """The request sentences' texts among the parts to compress."""
        return {text for key in self.where for text in self.pins.get(key, ())}


def plan_work(engine: Engine, read: list[Message], counter: TokenCounter, *, target_tokens: int | None,
              rate: float | None, strict: bool, emptied: str, options: dict[str, Any],
              keep_parts: Collection[tuple[int, int]] = ()) -> ConversationWork:
    """Count every text part, find the latest user turn's request where it carries material, and plan the budget
    (``keep_parts``: parts kept as they are, see :func:`compress_conversation`).

    Raises:
        ValueError: With ``strict``, a budget smaller than what must be kept (:func:`plan_conversation`).
    """
    counts = _count_parts(read, counter)
    around = around_request(engine, read, task_turn(read), counts, counter, options)
    pins = _request_pins(read, around)
    plan = _plan_requests(read, counts, counter, around, pins, target_tokens=target_tokens, rate=rate, strict=False,
                          kept_parts=keep_parts)
    if plan.shortfall and not around:  # a turn with material and no request found, over the budget by itself:
        around = material_parts(read, task_turn(read), counts, options)  # compressed prompt-agnostically
    plan = _plan_requests(read, counts, counter, around, pins, target_tokens=target_tokens, rate=rate, strict=strict,
                          kept_parts=keep_parts)
    if around and not pins:
        plan = dataclasses.replace(plan, task=None)
    where = [(m.index, p) for m in read for p, part in enumerate(m.parts)
             if part is not None and not plan.is_fixed(m.index, p)]
    floors = _floor_groups(read, where) if emptied == "sentence" else []
    return ConversationWork(read, counts, plan, around, pins, where, floors, _request_options(options, pins))


def _count_parts(read: Sequence[Message], counter: TokenCounter) -> list[tuple[int, ...]]:
    """Each message's text parts' counts, in one ``count_many`` (0 for a part that is not text)."""
    flat = [part for message in read for part in message.parts if part is not None]
    counted = iter(counter.count_many(flat) if flat else [])
    return [tuple(next(counted) if part is not None else 0 for part in message.parts) for message in read]


def _request_pins(read: Sequence[Message],
                  around: dict[tuple[int, int], FoundRequest]) -> dict[tuple[int, int], list[str]]:
    """Per part compressed around a request, its request sentences' texts (none for a part with no request)."""
    pins: dict[tuple[int, int], list[str]] = {}
    for (m, p), found in around.items():
        part = read[m].parts[p] or ""
        pins[(m, p)] = [part[begin:end] for begin, end in found.kept or found.spans]  # all it keeps for the request
    return pins


def _plan_requests(read: Sequence[Message], counts: Sequence[Sequence[int]], counter: TokenCounter,
                  around: dict[tuple[int, int], FoundRequest], pins: dict[tuple[int, int], list[str]], *,
                  target_tokens: int | None, rate: float | None, strict: bool,
                  kept_parts: Collection[tuple[int, int]] = ()) -> ConversationPlan:
    """:func:`plan_conversation` with the parts ``around`` opened: their requests are the task, and the pinned
    sentences count in what the budget must hold."""
    request = " ".join(found.text for found in around.values() if found.text) or None
    pinned_tokens = sum(counter(text) for texts in pins.values() for text in texts)
    return plan_conversation(read, counts, target_tokens=target_tokens, rate=rate, empty_part_tokens=counter(""),
                             strict=strict, open_parts=set(around), request=request, pinned_tokens=pinned_tokens,
                             kept_parts=frozenset(kept_parts))


def _floor_groups(read: Sequence[Message], where: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Per message with text among the parts to compress, the positions of its parts in ``where``."""
    return [[k for k, (m, _) in enumerate(where) if m == message.index] for message in read
            if any((read[m].parts[p] or "").strip() for m, p in where if m == message.index)]


def _request_options(options: dict[str, Any], pins: dict[tuple[int, int], list[str]]) -> dict[str, Any]:
    """The engine's options: the request sentences taken first and never dropped, after the caller's own patterns."""
    if not pins:
        return options
    patterns = [rf"\A{re.escape(text)}\Z" for texts in pins.values() for text in texts]
    return {**options, "force_keep_patterns": [*caller_patterns(options.get("force_keep_patterns", ())), *patterns]}


def read_parts(engine: Engine, work: ConversationWork, counter: TokenCounter) -> CompressionResult | None:
    """The engine's call over the paragraphs of the parts to compress, prompt-aware for the task, within the room
    (at least what the request sentences need: they are forced in); ``None`` when no call is needed (the parts fit
    the room, have no text, or have no room and no floor)."""
    if not work.over_room:
        return None
    segments = [part[begin:end] for part in work.parts for begin, end in paragraph_cuts(part)]
    if not segments or (work.plan.room <= 0 and not work.floors):
        return None
    target = max(work.plan.room, sum(counter(text) for text in work.pinned), 1)
    options = CompressionOptions.build(target_tokens=target, **work.options)
    return engine.compress([as_documents(segments, 0)], [work.plan.task], counter, options,
                           budget_label=functools.partial(conversation_share, work.plan))[0]


def conversation_share(plan: ConversationPlan, tokens: int) -> str:
    """The engine's budget for the compressed parts, named as the share of the conversation's budget it is."""
    return (f"the {tokens} tokens left of the conversation's budget of {plan.budget} after the parts kept whole "
            f"(system and developer messages, the latest user turn: {plan.protected_tokens} tokens)")


def fit_work(work: ConversationWork, result: CompressionResult | None,
             counter: TokenCounter) -> dict[tuple[int, int], str]:
    """The new text of each compressed part: the engine's kept sentences tightened to the room (:func:`fit_parts`);
    without an engine call, only the request sentences of a part (a room of nothing), or none (the parts fit)."""
    if not work.over_room:
        return {}
    parts = work.parts
    if result is None:
        return {key: join_kept(part, work.around[key].kept or work.around[key].spans,
                               range(len(work.around[key].kept or work.around[key].spans)))
                if key in work.around else "" for key, part in zip(work.where, parts)}
    cuts = [paragraph_cuts(part) for part in parts]
    return dict(zip(work.where, _fitted(result, parts, cuts, work.plan.room, counter, work.floors, work.pinned)))


def _finish(messages: Sequence[Any], work: ConversationWork, texts: dict[tuple[int, int], str],
            result: CompressionResult | None, counter: TokenCounter, *, strict: bool,
            emptied: str) -> ConversationResult:
    """The messages rebuilt with the new texts, and the figures; over the budget, a ``ValueError`` with ``strict``,
    else a runtime warning."""
    plan = work.plan
    new_parts = [tuple(texts.get((m.index, p)) for p in range(len(m.parts))) for m in work.read]
    compressed = sum(counter(text) for text in texts.values()) + sum(
        work.counts[m][p] for m, parts in enumerate(new_parts) for p, text in enumerate(parts) if text is None)
    over = max(compressed - plan.budget, 0)
    warning = _over_budget_warning(plan, compressed) if over else None
    if warning is not None:
        if strict:
            raise ValueError(warning)
        caller_warning(warning)
    rebuilt = [rebuild_message(original, message, parts, drop_empty=emptied != "empty")
               for original, message, parts in zip(messages, work.read, new_parts)]
    return ConversationResult(rebuilt, plan.origin_tokens, compressed, plan.budget, plan.protected_tokens, plan.task,
                              result, over, warning)


def _over_budget_warning(plan: ConversationPlan, compressed: int) -> str:
    """What a conversation over its budget says: by how much, and what is kept that the budget could not hold."""
    kept = (f"the messages kept whole count {plan.protected_tokens}" if plan.shortfall else
            "every compressed message keeps one sentence (emptied='sentence')")
    return (f"The conversation needs {compressed} tokens, {compressed - plan.budget} over its budget of "
            f"{plan.budget}: {kept}. It was compressed as far as it goes; raise the budget, or shorten what is kept "
            f"whole.")


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
