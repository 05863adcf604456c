"""A conversation's plan: which messages are kept whole, what the budget is, and what it must hold (pure: no model).

:func:`plan_conversation` finds the task (the latest user turn's text, or the request found in it), the protected
messages (system / developer messages and that turn, kept whole) and turns ``target_tokens`` / ``rate`` into the
budget of the whole conversation; :mod:`tpc_core.conversation.compress` runs it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tpc_core.conversation.messages import PROTECTED_ROLES, Message
from tpc_core.engine.selection.budget import resolve_budget

__all__ = ["ConversationPlan", "fixed_parts", "plan_conversation", "shortfall_message", "task_turn"]


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
                open_parts: Collection[tuple[int, int]] = (),
                kept_parts: Collection[tuple[int, int]] = ()) -> tuple[tuple[bool, ...], ...]:
    """Per message, per part, what is kept as it is: every part of a system or developer message; the latest user
    turn's own parts (the tool results it carries are compressed like any tool message's), but the ``open_parts``
    (``(message, part)``: a long turn compressed around its request,
    :func:`tpc_core.conversation.compress.compress_conversation`); and the caller's ``kept_parts``."""
    return tuple(tuple(message.role in PROTECTED_ROLES or (message.index, p) in kept_parts
                       or (message.index == task_index and not message.is_tool_part(p)
                           and (message.index, p) not in open_parts)
                       for p in range(len(message.parts))) for message in messages)


def plan_conversation(messages: Sequence[Message], counts: Sequence[Sequence[int]], *,
                      target_tokens: int | None = None, rate: float | None = None,
                      empty_part_tokens: int = 0, strict: bool = True,
                      open_parts: Collection[tuple[int, int]] = (), request: str | None = None,
                      pinned_tokens: int = 0, kept_parts: Collection[tuple[int, int]] = ()) -> ConversationPlan:
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
        kept_parts: Other text parts the caller keeps as they are, ``(message, part)`` (an agent's tool results,
            already fitted): they count in what the budget must hold, like the protected messages.

    Raises:
        ValueError: With ``strict``, a budget smaller than what the protected messages need (and the emptied parts,
            where the counter counts an empty text): the message says how many tokens.
    """
    task_index = task_turn(messages)
    task = request or (messages[task_index].text or None if task_index is not None else None)
    protected = tuple(message.role in PROTECTED_ROLES or message.index == task_index for message in messages)
    fixed = fixed_parts(messages, task_index, open_parts, kept_parts)
    plan = ConversationPlan(task, task_index, protected, tuple(tuple(c) for c in counts), 0, fixed)
    if target_tokens is not None:
        budget = resolve_budget(plan.origin_tokens, target_tokens=target_tokens)
    else:
        rest = plan.origin_tokens - plan.protected_tokens
        budget = plan.protected_tokens + (resolve_budget(rest, rate=rate) if rest > 0 else 0)
    emptied = sum(part is not None and not plan.is_fixed(k, p)
                  for k, m in enumerate(messages) for p, part in enumerate(m.parts))
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
