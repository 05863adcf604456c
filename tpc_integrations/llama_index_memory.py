"""LlamaIndex: a chat memory whose history comes back compressed, for chat engines and agents.

One line in a chat engine::

    from tpc_integrations.llama_index import TPCChatMemory

    chat_engine = index.as_chat_engine(memory=TPCChatMemory.from_defaults(target_tokens=3000))
    chat_engine = SimpleChatEngine.from_defaults(llm=llm, memory=TPCChatMemory(target_tokens=3000))

It wraps another memory (``memory=``; default ``Memory.from_defaults()``, LlamaIndex's own default), which
stores the full history; only what ``get`` / ``aget`` return is compressed, so nothing is lost for later turns.

Needs ``pip install tpc-langchain[llamaindex]``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, List, Optional, Union

try:
    import llama_index.core.instrumentation as instrument
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.bridge.pydantic import Field, SerializeAsAny
    from llama_index.core.instrumentation.events import BaseEvent
    from llama_index.core.memory import BaseMemory
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCChatMemory needs llama-index-core: pip install 'tpc-langchain[llamaindex]'") from error

from pydantic import BaseModel, ConfigDict, FieldSerializationInfo, field_serializer, field_validator

from tpc_core.conversation import ConversationResult
from tpc_core.options import surface_defaults
from tpc_integrations._messages import TPCMessagesSettings, compress_messages_call, guarded_conversation

__all__ = ["TPCChatMemory", "TPCEvent"]

DefaultMemory: type[BaseMemory]
try:  # LlamaIndex's default memory since 0.12.4x; before it, the buffer (its own token limit applies first)
    from llama_index.core.memory import Memory

    DefaultMemory = Memory
except ImportError:  # pragma: no cover - older llama-index-core
    from llama_index.core.memory import ChatMemoryBuffer

    DefaultMemory = ChatMemoryBuffer

dispatcher = instrument.get_dispatcher(__name__)


def _memory_class(name: str) -> type[BaseMemory]:
    """The imported memory class whose LlamaIndex ``class_name`` is ``name``.

    Raises:
        ValueError: No imported subclass of ``BaseMemory`` has that name.
    """
    pending: list[type[BaseMemory]] = [BaseMemory]  # type: ignore[type-abstract]  # its subclasses are wanted
    while pending:
        for subclass in pending.pop().__subclasses__():
            if subclass.class_name() == name:
                return subclass
            pending.append(subclass)
    raise ValueError(f"memory: no imported LlamaIndex memory class is named {name!r}; import it before validating "
                     "the dump, or pass the memory object.")


class TPCEvent(BaseEvent):
    """An instrumentation event of the TPC adapters that LlamaIndex has no event class for: each
    :class:`TPCChatMemory` read (``name="tpc_messages_compression"``, ``data`` as LangChain's
    ``tpc_messages_compression`` event) and a :class:`~tpc_integrations.llama_index.TPCTransform` call that fell back
    (``name="tpc_ingestion"``). Handlers see it through ``instrument.get_dispatcher().add_event_handler``."""

    name: str
    data: dict[str, Any]

    @classmethod
    def class_name(cls) -> str:
        return "TPCEvent"


class TPCChatMemory(TPCMessagesSettings, BaseMemory):
    """A memory whose ``get`` returns the stored conversation compressed under one token budget: the latest user
    turn is the task, kept whole with system messages; earlier turns, assistant replies and tool results keep the
    sentences most relevant to it.

    Behaviour:
        * ``put`` / ``set`` / ``reset`` / ``get_all`` (and their async forms) go to the wrapped ``memory``, which
          keeps the full history; ``get`` / ``aget`` read it through that memory and compress what it returns.
        * The returned ``ChatMessage`` objects are new, in order, same roles, ``additional_kwargs`` (tool call ids,
          names) and non-text blocks (images, audio, documents) untouched; a text block is its own sentences,
          verbatim, in order ("" when it lost every one).
        * ``input`` (what agents pass to ``get``): when it is not already the history's latest user turn, it is
          the task: it counts in the budget (the model will read it) but is not returned.
        * ``target_tokens`` (or ``rate``, default 0.2, of the messages not kept whole, those kept on top) is the
          budget of the returned conversation plus ``input``,
          counted as the sum of ``token_counter`` over every text block (a chat engine's ``prefix_messages`` and
          the chat template are not counted); a budget that covers it returns it unchanged. Prefer
          ``target_tokens``: the history is then compressed only once it outgrows it.
        * A budget smaller than the messages kept whole (a pasted document in the latest turn) does not end the chat:
          they are returned whole, the rest as short as it goes, with a runtime warning and ``over_budget`` in the
          event (``strict=True``: a ``ValueError`` saying how many tokens they need).
        * ``token_limit`` (what LlamaIndex memories call their budget) is refused with ``target_tokens``.
        * ``cache`` is ``"memory"`` by default (its row of :data:`tpc_core.options.SURFACE_DEFAULTS`): the messages
          read before come from the sentence cache, so a ``get`` after one more turn reads only that turn.
        * Each ``get`` emits a :class:`TPCEvent` (``name="tpc_messages_compression"``) with the call's figures.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: SerializeAsAny[BaseMemory] = Field(default_factory=DefaultMemory.from_defaults)
    """The memory that stores the full history (default: ``Memory.from_defaults()``); its own limits apply first."""

    @classmethod
    def class_name(cls) -> str:
        return "TPCChatMemory"

    @field_validator("memory", mode="before")
    @classmethod
    def _memory_from_dump(cls, memory: Any) -> Any:
        """A dumped memory (a dict with the ``class_name`` LlamaIndex writes) rebuilt as the memory class of that
        name, by its own ``from_dict``: so ``model_validate(model_dump())`` round-trips."""
        if isinstance(memory, dict) and "class_name" in memory:
            return _memory_class(memory["class_name"]).from_dict(dict(memory))
        return memory

    @field_serializer("memory")
    def _memory_dump(self, memory: BaseMemory, info: FieldSerializationInfo) -> Any:
        """The wrapped memory as LlamaIndex dumps it, with its ``class_name``, less the model-valued fields still at
        their defaults (rebuilt as defaults): LlamaIndex's ``Memory`` cannot validate its own dump of its default
        prompt template."""
        dump = memory.model_dump(mode=info.mode)
        for name, field in type(memory).model_fields.items():
            value = getattr(memory, name, None)
            if (isinstance(value, BaseModel) and not field.is_required()
                    and value == field.get_default(call_default_factory=True)):
                dump.pop(name, None)
        return dump

    @classmethod
    def from_defaults(cls, chat_history: Optional[List[ChatMessage]] = None, memory: Optional[BaseMemory] = None,
                      **settings: Any) -> TPCChatMemory:
        """A TPC memory over ``memory`` (default ``Memory.from_defaults()``) holding ``chat_history``.

        Args:
            chat_history: Messages to start with.
            memory: The memory to wrap.
            **settings: The fields (``target_tokens``, ``rate``, ``token_counter``, ``compressor``, ...); ``llm`` is
                not used.
        """
        settings.pop("llm", None)
        inner = memory if memory is not None else DefaultMemory.from_defaults()
        if chat_history:
            inner.set(list(chat_history))
        return cls(memory=inner, **settings)

    def __init__(self, compressor: Any = None, **data: Any) -> None:
        super().__init__(compressor, **{**surface_defaults("chat memory"), **data})

    def get(self, input: Optional[Union[str, ChatMessage]] = None, **kwargs: Any  # LlamaIndex's name
            ) -> List[ChatMessage]:
        """The history, compressed for its latest user turn (or ``input``)."""
        # BaseMemory annotates input as str; its memories (Memory, ChatMemoryBuffer) take a ChatMessage as well
        return self._read(self.memory.get(input=input, **kwargs), input)  # type: ignore[arg-type]

    async def aget(self, input: Optional[Union[str, ChatMessage]] = None, **kwargs: Any
                   ) -> List[ChatMessage]:
        """:meth:`get`, the compression in a worker thread so the event loop keeps running."""
        history = await self.memory.aget(input=input, **kwargs)  # type: ignore[arg-type]  # as in get
        return await asyncio.to_thread(self._read, history, input)

    def _read(self, history: List[ChatMessage], input: Optional[Union[str, ChatMessage]]
              ) -> List[ChatMessage]:
        result, data = guarded_conversation(self, lambda: self.compress(history, input), lambda: history, len(history))
        dispatcher.event(TPCEvent(name="tpc_messages_compression", data=data))
        return result.messages

    def compress(self, history: List[ChatMessage], input: Optional[Union[str, ChatMessage]] = None
                 ) -> ConversationResult:
        """``history`` compressed, with the figures (origin / compressed tokens, budget, task); ``input``, when it is
        not the latest user turn already, is the task (counted, not returned). ``on_error`` / ``deadline_ms`` do not
        apply here (:meth:`get` applies them)."""
        task = ChatMessage(role=MessageRole.USER, content=input) if isinstance(input, str) and input.strip() \
            else input if isinstance(input, ChatMessage) else None
        users = [message for message in history if message.role == MessageRole.USER]
        if task is not None and (not users or users[-1].content != task.content):
            result = compress_messages_call(self, [*history, task])
            return dataclasses.replace(result, messages=result.messages[:-1])
        return compress_messages_call(self, history)

    def get_all(self) -> List[ChatMessage]:
        """The full stored history, uncompressed."""
        return self.memory.get_all()

    async def aget_all(self) -> List[ChatMessage]:
        return await self.memory.aget_all()

    def put(self, message: ChatMessage) -> None:
        self.memory.put(message)

    async def aput(self, message: ChatMessage) -> None:
        await self.memory.aput(message)

    def put_messages(self, messages: List[ChatMessage]) -> None:
        self.memory.put_messages(messages)

    async def aput_messages(self, messages: List[ChatMessage]) -> None:
        await self.memory.aput_messages(messages)

    def set(self, messages: List[ChatMessage]) -> None:
        self.memory.set(messages)

    async def aset(self, messages: List[ChatMessage]) -> None:
        await self.memory.aset(messages)

    def reset(self) -> None:
        self.memory.reset()

    async def areset(self) -> None:
        await self.memory.areset()
