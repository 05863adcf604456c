"""LangChain: a conversation compressed between a prompt and a chat model, where ``trim_messages`` would drop turns.

One line in a chain::

    from tpc_integrations.langchain import TPCMessagesCompressor

    chain = prompt | TPCMessagesCompressor(target_tokens=2000) | chat_model

A list of messages, compressed now: ``TPCMessagesCompressor(target_tokens=2000).invoke(history)``.

Needs ``pip install tpc-langchain[langchain]``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, Union

try:
    from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
    from langchain_core.messages import BaseMessage, convert_to_messages
    from langchain_core.prompt_values import PromptValue
    from langchain_core.runnables import RunnableConfig, RunnableLambda, RunnableSerializable
    from langchain_core.runnables.config import run_in_executor
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCMessagesCompressor needs langchain-core: pip install 'tpc-langchain[langchain]'") from error

from pydantic import ConfigDict

from tpc_core.conversation import ConversationResult
from tpc_core.diagnostics import register_library_path
from tpc_integrations._messages import TPCMessagesSettings, compress_messages_call, guarded_conversation

__all__ = ["MESSAGES_EVENT", "TPCMessagesCompressor"]

MESSAGES_EVENT = "tpc_messages_compression"
"""Name of the custom event each call emits to the run's callbacks (``on_custom_event``, ``astream_events``); its
data: origin_tokens, compressed_tokens, budget, protected_tokens, messages, task, mode ("query": compressed for
the latest user turn, "agnostic": no user turn, "unscored": the budget covered the conversation, "fallback"),
task_source, cache_hits, cache_misses, over_budget (tokens over the budget, 0 within it); a fallback's data
carries fallback, returned and error instead of the figures."""

MessagesInput = Union[PromptValue, Sequence[Any]]

# A chain calls the runnable from inside langchain_core: our warnings name the user's invoke() line.
register_library_path(Path(inspect.getfile(RunnableLambda)).parents[1])


class TPCMessagesCompressor(TPCMessagesSettings, RunnableSerializable[MessagesInput, list[BaseMessage]]):
    """Compresses a conversation under one token budget: the latest user turn is the task, kept whole with the
    system messages; earlier turns, assistant replies and tool results keep their sentences most relevant to it.

    Behaviour:
        * Input: a ``PromptValue`` (what a ``ChatPromptTemplate`` gives), or a list of messages or anything
          ``convert_to_messages`` takes (dicts, ``("human", "...")`` tuples, strings). Output: a new
          ``list[BaseMessage]``, the same messages in the same order, each of its class, with its id, name, tool
          calls, ``tool_call_id``, kwargs and non-text content blocks (images, files) untouched; a text part is its
          own sentences, verbatim, in order ("" when it lost every one). The input is never changed.
        * ``target_tokens`` is the budget of the whole conversation, counted as the sum of ``token_counter`` over
          every text part of every message (the chat template's tokens are not counted: leave room for them);
          ``rate`` (default 0.2) keeps that share of the other messages, the protected ones whole on top (a
          first turn, with nothing to compress, passes unchanged). It holds exactly; a budget that covers the
          conversation returns it unchanged. ``token_counter``: a ``Callable[[str], int]``, a tokenizer or a chat
          model (its ``get_num_tokens``); a counter of message lists (``count_tokens_approximately``) is refused.
        * A budget smaller than the messages kept whole keeps them whole and the others as short as they go, with a
          runtime warning and ``over_budget`` in the event (``strict=True``: a ``ValueError`` saying how many tokens
          they need). A message that loses every sentence keeps one (``emptied``). An unknown role ``ValueError``; a
          message that is not a message ``TypeError``. A conversation with no user turn is compressed
          prompt-agnostically; an empty one returns ``[]`` without loading the model.
        * Sync, async (``ainvoke``: the model work runs in a worker thread), ``batch`` / ``abatch`` (one call per
          conversation, concurrent on one shared engine), streaming as a single chunk.
        * Each call emits a ``tpc_messages_compression`` custom event to the run's callbacks.

    Example:
        >>> chain = ChatPromptTemplate.from_messages([...]) | TPCMessagesCompressor(target_tokens=2000) | model
        >>> chain.invoke({"question": "What changed in Q3?", "history": history})
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: Optional[str] = "TPCMessagesCompressor"
    """The run's name in traces."""

    def invoke(self, input: MessagesInput, config: Optional[RunnableConfig] = None,  # LangChain's name
               **kwargs: Any) -> list[BaseMessage]:
        """Compress one conversation (see the class docstring); ``kwargs`` are LangChain's and not used."""
        return self._as_lambda().invoke(input, config)

    async def ainvoke(self, input: MessagesInput, config: Optional[RunnableConfig] = None,
                      **kwargs: Any) -> list[BaseMessage]:
        """:meth:`invoke` with the model work in a worker thread, so the event loop keeps running."""
        return await self._as_lambda().ainvoke(input, config)

    def _as_lambda(self) -> RunnableLambda[MessagesInput, list[BaseMessage]]:
        # One run per call, under this runnable's name; the functions get the run's config for their event.
        return RunnableLambda(self._compress_in_run, afunc=self._acompress_in_run, name=self.get_name())

    def _compress_in_run(self, input: MessagesInput, config: RunnableConfig) -> list[BaseMessage]:
        result, data = self._guarded(input)
        dispatch_custom_event(MESSAGES_EVENT, data, config=config)
        return result.messages

    async def _acompress_in_run(self, input: MessagesInput, config: RunnableConfig) -> list[BaseMessage]:
        result, data = await run_in_executor(None, self._guarded, input)
        await adispatch_custom_event(MESSAGES_EVENT, data, config=config)
        return result.messages

    def compress(self, messages: MessagesInput) -> ConversationResult:
        """The compressed conversation with its figures (origin / compressed tokens, budget, the task), outside any
        run: what :meth:`invoke` returns the messages of (``on_error`` / ``deadline_ms`` apply)."""
        return self._guarded(messages)[0]

    def _guarded(self, messages: MessagesInput) -> tuple[ConversationResult, dict[str, Any]]:
        return guarded_conversation(self, lambda: compress_messages_call(self, as_messages(messages)),
                                    lambda: _as_given(messages), len(messages) if isinstance(messages, Sequence) else 1)


def as_messages(messages: MessagesInput) -> list[BaseMessage]:
    """LangChain messages from a ``PromptValue`` or anything ``convert_to_messages`` takes.

    Raises:
        TypeError: Not a prompt value or a sequence of message-like items (the message names what it got).
    """
    if isinstance(messages, PromptValue):
        return messages.to_messages()
    if isinstance(messages, (str, bytes, dict, BaseMessage)) or not isinstance(messages, Sequence):
        raise TypeError(f"TPCMessagesCompressor takes a list of messages or a PromptValue, got "
                        f"{type(messages).__name__}" + (" (wrap a single message in a list)"
                                                        if isinstance(messages, (dict, BaseMessage)) else "") + ".")
    try:
        return convert_to_messages(messages)
    except (NotImplementedError, ValueError, KeyError) as error:
        raise TypeError(f"TPCMessagesCompressor could not read the messages: {error}") from error


def _as_given(messages: MessagesInput) -> list[Any]:
    """A fallback's output: the messages read as LangChain messages, or, where they cannot be read, as given (the
    chat model reads message-likes itself)."""
    try:
        return as_messages(messages)
    except TypeError:
        return list(messages) if isinstance(messages, Sequence) and not isinstance(messages, (str, bytes)) else [
            messages]
