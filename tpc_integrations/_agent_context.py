"""What the agent adapters share (LangChain's middleware and LangGraph hook, LlamaIndex's agent memory): their
settings and one compression of the model's view, for messages of any kind (neither framework imported).

The route is :mod:`tpc_core.conversation.tool_results`: each tool result compressed once toward the user's request
and its tool call (read with the message, :mod:`tpc_core.conversation.messages`), then kept the same bytes; older
turns are compressed (by ``compress_conversation``) only where the tool results alone cannot bring the view within
its budget, every tool result kept there as the ledger fitted it (or whole, for an excluded tool).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, TypeGuard

from pydantic import Field, model_validator

from tpc_core.conversation import (
    Message,
    ToolCall,
    ToolResult,
    ToolResultLedger,
    compress_conversation,
    compress_tool_texts,
    compress_tool_texts_together,
    emptied_note,
    kept_nothing,
    read_messages,
    rebuild_message,
    task_turn,
    tool_calls_by_id,
    tool_question,
    tool_share,
)
from tpc_core.options import surface_defaults
from tpc_integrations._common import ENGINE_KEYWORDS
from tpc_integrations._failsafe import guarded
from tpc_integrations._messages import TPCMessagesSettings

logger = logging.getLogger("tpc_integrations")

__all__ = ["AGENT_EVENT", "AgentContext", "AgentView", "MessageListCounter", "TPCAgentContextSettings", "compress_view",
           "is_message_counter"]

AGENT_EVENT = "tpc_agent_context"
"""Name of the event each model call emits (a LangChain custom event, a LlamaIndex ``TPCEvent``); its data:
origin_tokens, sent_tokens, budget, trigger, tool_results, whole, compressed, recompressed, reused (how many tool
results had each fate), history_compressed, cache_hits, cache_misses, over_budget (tokens sent beyond the budget: what
is never altered, excluded tools' results included, overran it); a fallback's data carries fallback and error."""


def is_message_counter(spec: Any) -> TypeGuard[Callable[[Sequence[Any]], int]]:
    """Whether ``spec`` counts a list of messages (LangChain's ``count_tokens_approximately``, a model's
    ``get_num_tokens_from_messages``): a callable whose first parameter is named ``messages``."""
    if not callable(spec) or isinstance(spec, str) or hasattr(spec, "encode"):
        return False
    try:
        parameters = list(inspect.signature(spec).parameters)
    except (TypeError, ValueError):
        return False
    return bool(parameters) and parameters[0] in ("messages", "msgs")


class MessageListCounter:
    """A counter of message lists used as a text counter: what a text adds as one user message's content (the
    message's own overhead left out)."""

    def __init__(self, count: Callable[[Sequence[Any]], int]) -> None:
        self.count = count
        self.overhead = count([{"role": "user", "content": ""}])

    def __call__(self, text: str) -> int:
        return max(self.count([{"role": "user", "content": text}]) - self.overhead, 0)

    def __repr__(self) -> str:
        return f"MessageListCounter({getattr(self.count, '__name__', type(self.count).__name__)})"


class TPCAgentContextSettings(TPCMessagesSettings):
    """:class:`tpc_integrations._messages.TPCMessagesSettings` for an agent's model calls.

    ``target_tokens`` is the budget of everything the model receives (the system prompt and the latest user turn
    included), counted with ``token_counter``: a text counter, or a counter of message lists such as LangChain's
    ``count_tokens_approximately`` (then the whole view is counted with it, message overheads included). ``rate``
    is refused: an agent's budget is a number of tokens. Two defaults differ from the other adapters, each for the
    reason its row of :data:`tpc_core.options.SURFACE_DEFAULTS` gives: ``on_error="passthrough"`` and
    ``cache="memory"``.
    """

    trigger_tokens: Optional[int] = None
    """Compress only when the view counts more than this, then down to ``target_tokens`` (default: the target; not
    below it): below it, new tool results are sent whole."""
    trigger_fraction: Optional[float] = None
    """Instead of ``trigger_tokens``: a share of the model's context window (its profile's ``max_input_tokens``)."""
    target_fraction: Optional[float] = None
    """Instead of ``target_tokens``: the budget as a share of the model's context window."""
    scope: Literal["tools", "all"] = "all"
    """What may be compressed: "tools" (tool results only) or "all" (default: tool results first, then, when they
    alone cannot bring the view within the budget, older turns and assistant replies, as ``compress_messages`` does;
    the system prompt, tool calls, the latest user turn's request and the tool results as first fitted are never
    altered there, so a result re-sent keeps its bytes)."""
    exclude_tools: tuple[str, ...] = ()
    """Names of tools whose results are always sent whole, byte-identical in every scope (the tool is named by its
    call, in any message shape, or by the tool message's own ``name``): they count as a fixed part of the budget,
    and where they alone overrun it the call's ``over_budget`` says by how much."""
    plan_ahead: int = Field(default=2, ge=0)
    """How far ahead a shrink plans: when the tool results no longer fit, the earlier ones are compressed further
    all at once, to a share that leaves room for this many more results of their mean size, so the next calls add
    their results without changing the earlier ones (the prompt's prefix stays the same bytes, for a provider's
    prompt cache). 0: each shrink fits only the results at hand (the most room for each, a change on most calls)."""
    write_back: bool = False
    """False (default): the agent's stored state keeps every message whole; only the model's view is compressed.
    True: the compressed tool results replace the stored ones (same message ids)."""

    def __init__(self, compressor: Any = None, **data: Any) -> None:
        data = {**surface_defaults("agents"), **data}
        counter = data.get("token_counter")
        if is_message_counter(counter):
            data["token_counter"] = MessageListCounter(counter)
        super().__init__(compressor, **data)

    @model_validator(mode="after")
    def _check_agent_budget(self) -> TPCAgentContextSettings:
        if self.rate is not None:
            raise ValueError("rate does not apply to an agent's context: give target_tokens (or target_fraction of "
                             "the model's context window).")
        if (self.target_tokens is None) == (self.target_fraction is None):
            raise ValueError("Give one budget: target_tokens (tokens the model may receive) or target_fraction (a "
                             "share of the model's context window).")
        if self.trigger_tokens is not None and self.trigger_fraction is not None:
            raise ValueError("Give trigger_tokens or trigger_fraction, not both.")
        for name in ("target_fraction", "trigger_fraction"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {value!r}.")
        trigger = self.trigger_tokens
        target = self.target_tokens
        if trigger is not None and target is not None and trigger < target:
            raise ValueError(f"trigger_tokens ({self.trigger_tokens}) is below target_tokens ({self.target_tokens}): "
                             "the view is compressed once it passes the trigger, down to the target.")
        return self

    def limits(self, context_window: int | None) -> tuple[int, int]:
        """The budget and the trigger in tokens, for a model whose context window is ``context_window``.

        Raises:
            ValueError: A fraction is set and the window is unknown.
        """
        if (self.target_fraction or self.trigger_fraction) and not context_window:
            raise ValueError("target_fraction / trigger_fraction need the model's context window, which its profile "
                             "does not give: use target_tokens / trigger_tokens.")
        window = context_window or 0
        budget = self.target_tokens
        if budget is None:  # then target_fraction is set (the validator asks for one of the two)
            budget = int((self.target_fraction or 0.0) * window)
        trigger = self.trigger_tokens
        if trigger is None:
            trigger = budget if self.trigger_fraction is None else int(self.trigger_fraction * window)
        return budget, max(trigger, budget)

    def view_counter(self) -> Callable[[Sequence[Any]], int] | None:
        """The message-list counter the view is counted with, or ``None`` (the sum of the text counter)."""
        counter = self.token_counter
        return counter.count if isinstance(counter, MessageListCounter) else None


@dataclass
class AgentView:
    """One model call's view, compressed.

    Attributes:
        messages: The messages to send (unchanged ones are the objects given; changed ones new copies).
        changed: Positions of the messages that were changed (tool results to write back, with ``write_back``).
        data: The call's figures, for its event.
    """

    messages: list[Any]
    changed: list[int] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)


def _tool_results(read: Sequence[Message], exclude: Collection[str]
                  ) -> tuple[list[tuple[int, int, str | None, ToolCall | None]], list[tuple[int, int]]]:
    """The view's tool results with text, oldest first, as ``(message, part, call id, its call)``, those of
    ``exclude``'s tools left out; and every tool result's part (kept as it is by the history stage)."""
    calls = tool_calls_by_id(read)
    results = []
    parts = []
    for message in read:
        for p, part in enumerate(message.parts):
            if part is None or not message.is_tool_result(p):
                continue
            parts.append((message.index, p))
            call_id = message.call_id(p)
            call = calls.get(call_id) if call_id is not None else None
            if not part.strip() or {call.name if call else None, message.tool_name} & set(exclude):
                continue
            results.append((message.index, p, call_id, call))
    return results, parts


def _emptied(result: ToolResult, counter: Callable[[str], int]) -> str:
    """What a tool result none of whose text fits is sent as: a note that says so, or the result itself where it
    counts no more than the note (never an empty text)."""
    note = emptied_note(result.tokens)
    return result.text if result.tokens <= counter(note) else note


def compress_view(settings: TPCAgentContextSettings, ledger: ToolResultLedger, messages: Sequence[Any],
                  budget: int, trigger: int) -> AgentView:
    """The view ``messages`` (the system prompt first, where the framework sends one) within ``budget`` when it
    counts more than ``trigger``: tool results first (:meth:`ToolResultLedger.fit`; an excluded tool's results are
    fixed parts), then, with ``scope="all"``, the other messages (``compress_conversation``, every tool result kept
    as it is: the ledger's bytes, an excluded result whole).

    Raises:
        ValueError, TypeError: A message that cannot be read (the caller's ``on_error`` decides).
    """
    read = read_messages(messages)
    text_counter = settings.resolved_token_counter() or settings.compressor.engine.default_counter
    view_counter = settings.view_counter()

    def count_view(view: Sequence[Any], part_counts: dict[tuple[int, int], int]) -> int:
        if view_counter is not None:
            return view_counter(list(view))
        return sum(part_counts.values())

    counts = {(m.index, p): ledger.count(part, text_counter)
              for m in read for p, part in enumerate(m.parts) if part is not None}
    origin = count_view(messages, counts)
    task_index = task_turn(read)
    request = read[task_index].text if task_index is not None else None
    found, tool_parts = _tool_results(read, settings.exclude_tools)
    slots = [(m, p) for m, p, _, _ in found]
    results = [ToolResult(ledger.key_of(call_id, read[m].parts[p] or ""), read[m].parts[p] or "",
                          tool_question(request, call.name if call else read[m].tool_name,
                                        call.arguments if call else None), counts[(m, p)])
               for m, p, call_id, call in found]
    options = {name: value for name, value in settings.engine_options().items()
               if name in ENGINE_KEYWORDS and name not in ("target_tokens", "rate", "token_counter")}
    engine = settings.compressor.engine
    fixed = origin - sum(result.tokens for result in results)
    entries = [ledger.get(result.key) for result in results]
    current = fixed + sum(entry.tokens if entry else result.tokens for entry, result in zip(entries, results))
    triggered = current > trigger
    room = (budget if triggered else trigger) - fixed
    reads: list[Any] = []

    def compress(chosen: Sequence[ToolResult], share: int) -> list[str]:
        texts = compress_tool_texts(engine, [(result.text, result.question, result.tokens) for result in chosen],
                                    share, text_counter, options, reads,
                                    budget_label=functools.partial(tool_share, room + fixed, fixed))
        return [_emptied(result, text_counter) if kept_nothing(result.text, text) else text
                for text, result in zip(texts, chosen)]

    def compress_together(chosen: Sequence[ToolResult], total: int) -> list[str]:
        texts = compress_tool_texts_together(engine, [(result.text, result.question, result.tokens)
                                                      for result in chosen], total, text_counter, options, reads,
                                             budget_label=functools.partial(tool_share, room + fixed, fixed))
        return [_emptied(result, text_counter) if kept_nothing(result.text, text) else text
                for text, result in zip(texts, chosen)]

    fates = ledger.fit(results, room, compress, text_counter, settings.plan_ahead, compress_together)
    texts: dict[int, list[str | None]] = {}
    for (m, p), (entry, _) in zip(slots, fates):
        if entry.text != read[m].parts[p]:
            texts.setdefault(m, [None] * len(read[m].parts))[p] = entry.text
            counts[(m, p)] = entry.tokens
    view = [rebuild_message(messages[m], read[m], texts[m]) if m in texts else message
            for m, message in enumerate(messages)]
    sent = count_view(view, counts)
    history = settings.scope == "all" and triggered and sent > budget
    hits = sum(read.cache_hits for read in reads)
    misses = sum(read.cache_misses for read in reads)
    if history:
        result = compress_conversation(settings.compressor.engine, view, strict=settings.strict,
                                       emptied=settings.emptied, keep_parts=tool_parts,
                                       **{**settings.engine_options(), "target_tokens": budget})
        view = result.messages
        sent = result.compressed_tokens if view_counter is None else view_counter(result.messages)
        hits += result.result.cache_hits if result.result is not None else 0
        misses += result.result.cache_misses if result.result is not None else 0
    changed = [m for m in texts] if not history else [m for m, message in enumerate(messages) if view[m] is not message]
    fate_names = [fate for _, fate in fates]
    data = {"origin_tokens": origin, "sent_tokens": sent, "budget": budget, "trigger": trigger,
            "tool_results": len(results), **{name: fate_names.count(name) for name in
                                             ("whole", "compressed", "recompressed", "reused")},
            "history_compressed": history, "cache_hits": hits, "cache_misses": misses,
            "over_budget": max(sent - budget, 0)}
    return AgentView(view, sorted(changed), data)


class AgentContext:
    """An adapter's state: its settings, the ledger of what each tool result was sent as, and one guarded
    compression of a view (``label`` names the adapter in warnings)."""

    def __init__(self, compressor: Any = None, *, label: str, **settings: Any) -> None:
        self.settings = TPCAgentContextSettings(compressor=compressor, **settings)
        self.ledger = ToolResultLedger()
        self.label = label

    def view(self, messages: Sequence[Any], context_window: Optional[int] = None) -> AgentView:
        """``messages`` compressed (see :func:`tpc_integrations._agent_context.compress_view`); on a fault, with
        ``on_error="passthrough"`` or past ``deadline_ms``, the messages unchanged and why in the data."""
        def work(_: Any) -> AgentView:
            budget, trigger = self.settings.limits(context_window)
            return compress_view(self.settings, self.ledger, messages, budget, trigger)

        view, fallback, _ = guarded(self.settings, self.label, work, len(messages))
        if fallback is not None:
            return AgentView(list(messages), [], {**fallback.event_data(), "messages": len(messages)})
        assert view is not None  # guarded returns the work's value whenever there is no fallback
        logger.debug("%s: %s", self.label, view.data)
        return view
