"""What the conversation adapters share (LangChain's messages runnable, LlamaIndex's chat memory): their settings
and one call of :meth:`tpc_core.TPCCompressor.compress_messages`, with the figures they report to callbacks.

Neither framework is imported here: the engine reads every kind of message itself
(:mod:`tpc_core.conversation.messages`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import model_validator

from tpc_core.conversation import ConversationResult
from tpc_core.options import ConversationOptions, ScopeOptions
from tpc_integrations._common import TPCEngineSettings
from tpc_integrations._failsafe import guarded

__all__ = ["TPCMessagesSettings", "compress_messages_call", "conversation_event_data", "guarded_conversation"]

class TPCMessagesSettings(TPCEngineSettings, ScopeOptions, ConversationOptions):
    """:class:`tpc_integrations._common.TPCEngineSettings` for conversations: the budget is the whole
    conversation's (every text part of every message, counted with ``token_counter``; the chat template's own
    tokens are not counted), the latest user turn is the task and is kept whole with the system messages;
    ``strict`` and ``emptied`` are ``compress_messages``' own (:class:`tpc_core.options.ConversationOptions`).

    ``task_description`` is refused: the conversation's latest user turn is its task (a conversation with no user
    turn is compressed prompt-agnostically).
    """

    def __init__(self, compressor: Any = None, **data: Any) -> None:
        # Declared so that this class's own calls type-check with compressor=; a type checker still synthesises the
        # constructor of a pydantic subclass from its fields alone (dataclass_transform).
        super().__init__(compressor, **data)

    @model_validator(mode="after")
    def _no_task_description(self) -> TPCMessagesSettings:
        if self.task_description is not None:
            raise ValueError("task_description does not apply to conversations: the latest user turn is the task. "
                             "Add the task as the last user message.")
        if not self.keep_request:
            raise ValueError("keep_request=False does not apply to conversations: the latest user turn is the task, "
                             "and its request is kept.")
        return self


def compress_messages_call(settings: TPCMessagesSettings, messages: Sequence[Any]) -> ConversationResult:
    """One ``compress_messages`` call with the adapter's settings; an empty conversation loads no model."""
    if not messages:
        return ConversationResult([], 0, 0, 0, 0, None)
    options = settings.engine_options()
    return settings.compressor.compress_messages(messages, strict=settings.strict, emptied=settings.emptied,
                                                 return_result=True, **options)


def guarded_conversation(settings: TPCMessagesSettings, run: Callable[[], ConversationResult],
                         unchanged: Callable[[], Sequence[Any]],
                         count: int) -> tuple[ConversationResult, dict[str, Any]]:
    """``run()`` under the adapter's ``on_error`` / ``deadline_ms``: the result and its event data. A fallback returns
    copies of ``unchanged()`` (the messages as given; figures 0) and says why in the data.

    Args:
        settings: The adapter.
        run: One compression of the conversation.
        unchanged: The messages to return on a fallback (may raise: then nothing is returned).
        count: How many messages the call has, for the event.
    """
    result, fallback, _ = guarded(settings, type(settings).__name__, lambda progress: run(), count)
    if fallback is None:
        assert result is not None  # guarded returns the work's value whenever there is no fallback
        return result, conversation_event_data(result)
    try:
        messages = [copy.deepcopy(message) for message in unchanged()]
    except Exception:  # noqa: BLE001 - what cannot be read cannot be returned as messages
        messages = []
    return (ConversationResult(messages, 0, 0, 0, 0, None),
            {**fallback.event_data(), "messages": len(messages), "mode": "fallback"})


def conversation_event_data(result: ConversationResult) -> dict[str, Any]:
    """The figures each call reports to its framework's callbacks (JSON-serialisable)."""
    engine = result.result
    mode = "unscored" if engine is None or not engine.scored else ("query" if result.task is not None else "agnostic")
    return {"origin_tokens": result.origin_tokens, "compressed_tokens": result.compressed_tokens,
            "budget": result.budget, "protected_tokens": result.protected_tokens,
            "messages": len(result.messages), "task": result.task, "mode": mode,
            "task_source": str(engine.task_source) if engine is not None and engine.task_source is not None else None,
            "cache_hits": engine.cache_hits if engine is not None else 0,
            "cache_misses": engine.cache_misses if engine is not None else 0, "over_budget": result.over_budget}
