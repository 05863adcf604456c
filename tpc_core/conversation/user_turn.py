"""The latest user turn when it carries material: which of its text parts are compressed, and around what.

The single-message "document + question" chat is the commonest chat prompt. :func:`around_request` finds, with the
checkpoint's request head, the request sentences of each long text part of the latest user turn: they become the
task, kept verbatim, and the rest of the part is compressed with the other messages
(:func:`tpc_core.conversation.compress.compress_conversation`). Where no request is found and the turn alone exceeds
the budget, :func:`material_parts` opens it anyway, compressed prompt-agnostically, rather than kept whole over
the budget.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tpc_core.conversation.messages import Message
from tpc_core.engine.pipeline import Engine
from tpc_core.engine.task.finder import FoundRequest
from tpc_core.engine.tokens import TokenCounter

__all__ = ["MATERIAL_TOKENS", "around_request", "caller_patterns", "material_parts"]


MATERIAL_TOKENS = 64
"""A latest user turn whose text part holds at least this many tokens besides its request sentences carries
material (a pasted document): it is compressed around its request
(:func:`tpc_core.conversation.compress.compress_conversation`)."""


def around_request(engine: Engine, read: Sequence[Message], task_index: int | None,
                   counts: Sequence[Sequence[int]], counter: TokenCounter,
                   options: dict[str, Any]) -> dict[tuple[int, int], FoundRequest]:
    """The latest user turn's text parts that carry material, each with the request it writes.

    A part qualifies when the checkpoint's request head finds request sentences in it and the rest of it counts
    at least :data:`MATERIAL_TOKENS`: the single-message "document + question" chat. Those sentences are then the
    task and are kept verbatim; the rest of the part is compressed for them with the other messages. A part where
    no request is found stays whole (it is the question; see :func:`material_parts`), as do all parts with a
    caller's own ``splitter`` (the request is found with the checkpoint's).
    """
    if task_index is None or options.get("splitter") is not None:
        return {}
    message = read[task_index]
    found_parts = {}
    for p, part in enumerate(message.parts):
        if part is None or message.is_tool_part(p) or counts[task_index][p] < MATERIAL_TOKENS:
            continue
        found = engine.find_request(part)
        if found is not None and counts[task_index][p] - sum(counter(part[a:b]) for a, b in found.kept or found.spans) \
                >= MATERIAL_TOKENS:
            found_parts[(task_index, p)] = found
    return found_parts


def material_parts(read: Sequence[Message], task_index: int | None, counts: Sequence[Sequence[int]],
                   options: dict[str, Any]) -> dict[tuple[int, int], FoundRequest]:
    """The latest user turn's own text parts of at least :data:`MATERIAL_TOKENS`, each with no request (they are
    compressed prompt-agnostically: the engine finds their task), unless the caller gave a ``splitter``."""
    if task_index is None or options.get("splitter") is not None:
        return {}
    message = read[task_index]
    return {(task_index, p): FoundRequest((), "") for p, part in enumerate(message.parts)
            if part is not None and not message.is_tool_part(p) and counts[task_index][p] >= MATERIAL_TOKENS}


def caller_patterns(value: Any) -> list[Any]:
    """The caller's ``force_keep_patterns`` as a list (one pattern, or an iterable of them)."""
    return [value] if isinstance(value, (str, re.Pattern)) else list(value)
