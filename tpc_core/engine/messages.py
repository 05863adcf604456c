"""Chat messages in, chat messages out: what a conversation's messages say, read the same way for three kinds.

``compress_messages`` takes role/content messages of three kinds and gives back the kind it was given:

* **plain dicts**, OpenAI style: ``{"role": ..., "content": str | [parts] | None, ...}`` with any other keys
  (``name``, ``tool_call_id``, ``tool_calls``, ``id``); a part is a str or a dict, a text part being
  ``{"type": "text" | "input_text" | "output_text", "text": str}``;
* **LangChain** ``BaseMessage`` (``SystemMessage``, ``HumanMessage``, ``AIMessage``, ``ToolMessage``,
  ``FunctionMessage``, ``ChatMessage`` with a role, and their chunks); ``content`` a str or a list of str / dict
  blocks;
* **LlamaIndex** ``ChatMessage``: a ``role`` (``MessageRole``) and ``blocks`` (``TextBlock`` has ``text``; every
  other block passes through).

Neither framework is imported: a message is recognised by its shape (duck typing). Reading gives each message
its canonical role and the text of each content part (``None`` for a part that is not text: an image, a file,
a tool-use block, a block of a type this module does not know); rebuilding puts new texts in the text parts of
a copy and leaves everything else (ids, names, tool calls, ``additional_kwargs``, metadata, non-text parts)
as it was. The input is never changed.
"""

from __future__ import annotations

import copy

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["ACCEPTED_ROLES", "PROTECTED_ROLES", "Message", "MessageKind", "read_message", "read_messages",
           "rebuild_message"]

#: Every role name accepted, with the canonical role it means (LangChain types, LlamaIndex and provider aliases).
ROLE_ALIASES = {
    "system": "system", "developer": "developer", "user": "user", "human": "user", "assistant": "assistant",
    "ai": "assistant", "chatbot": "assistant", "model": "assistant", "tool": "tool", "function": "function",
}
ACCEPTED_ROLES = tuple(ROLE_ALIASES)
#: Roles whose messages are always kept whole (the latest user turn is kept whole too).
PROTECTED_ROLES = frozenset({"system", "developer"})
#: Dict content parts that carry text under "text" (Chat Completions, Responses API input and output).
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
# LangChain message types -> canonical roles ("chat" messages carry their own role; chunks name their class).
LANGCHAIN_TYPES = {
    "system": "system", "human": "user", "ai": "assistant", "tool": "tool", "function": "function",
    "SystemMessageChunk": "system", "HumanMessageChunk": "user", "AIMessageChunk": "assistant",
    "ToolMessageChunk": "tool", "FunctionMessageChunk": "function",
}


class MessageKind(str, Enum):
    """Which kind of object a message is (it is rebuilt as the same kind)."""

    DICT = "dict"
    LANGCHAIN = "langchain"
    LLAMA_INDEX = "llama_index"


class ContentShape(str, Enum):
    """How a message holds its content: no content, one string, or a list of parts / blocks."""

    NONE = "none"
    STRING = "string"
    PARTS = "parts"


@dataclass(frozen=True)
class Message:
    """One message as the conversation planner sees it.

    Attributes:
        index: Its position in the conversation.
        role: The canonical role: "system", "developer", "user", "assistant", "tool" or "function".
        parts: The text of each content part, in order; ``None`` for a part that is not text (passes through).
        kind: What kind of object it came as.
        shape: How it holds its content (a message with no content has no parts).
    """

    index: int
    role: str
    parts: tuple[str | None, ...]
    kind: MessageKind
    shape: ContentShape

    @property
    def text(self) -> str:
        """The message's text parts joined by a newline (blank ones left out)."""
        return "\n".join(part for part in self.parts if part is not None and part.strip())


def _canonical_role(role: Any, index: int) -> str:
    name = role.value if isinstance(role, Enum) else role
    if isinstance(name, str) and name.lower() in ROLE_ALIASES:
        return ROLE_ALIASES[name.lower()]
    raise ValueError(f"Message {index} has the unknown role {name!r}; the accepted roles are "
                     f"{', '.join(ACCEPTED_ROLES)}.")


def _part_texts(content: Any, index: int, kind: MessageKind) -> tuple[ContentShape, tuple[str | None, ...]]:
    """The shape and text parts of a dict's or a LangChain message's ``content``."""
    if content is None or (isinstance(content, (list, tuple)) and not content):
        return ContentShape.NONE, ()
    if isinstance(content, str):
        return ContentShape.STRING, (content,)
    if not isinstance(content, (list, tuple)):
        raise TypeError(f"Message {index} ({kind.value}) has content of type {type(content).__name__}; content must be "
                        "a str, a list of parts (str or dict) or None.")
    texts: list[str | None] = []
    for position, part in enumerate(content):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if part.get("type") in TEXT_PART_TYPES and "text" in part:
                if not isinstance(part["text"], str):
                    raise TypeError(f"Message {index}, part {position}: a {part['type']!r} part's text must be a str, "
                                    f"got {type(part['text']).__name__}.")
                texts.append(part["text"])
            else:
                texts.append(None)  # an image, a file, a tool-use block, an unknown type: passes through
        else:
            raise TypeError(f"Message {index}, part {position} is a {type(part).__name__}; a content part must be a "
                            "str or a dict such as {'type': 'text', 'text': ...}.")
    return ContentShape.PARTS, tuple(texts)


def _is_langchain(message: Any) -> bool:
    return isinstance(getattr(message, "type", None), str) and hasattr(message, "content") \
        and callable(getattr(message, "model_copy", None))


def _is_llama_index(message: Any) -> bool:
    return hasattr(message, "role") and isinstance(getattr(message, "blocks", None), list) \
        and callable(getattr(message, "model_copy", None))


def read_message(message: Any, index: int) -> Message:
    """What one message says: its kind, canonical role and text parts.

    Raises:
        TypeError: Neither a dict, a LangChain message nor a LlamaIndex ``ChatMessage``; or content (a part, a
            text) of the wrong type.
        ValueError: An unknown role, or a dict without one.
    """
    if isinstance(message, dict):
        if "role" not in message:
            raise ValueError(f"Message {index} (a dict) has no 'role'; the accepted roles are "
                             f"{', '.join(ACCEPTED_ROLES)}.")
        shape, parts = _part_texts(message.get("content"), index, MessageKind.DICT)
        return Message(index, _canonical_role(message["role"], index), parts, MessageKind.DICT, shape)
    if _is_llama_index(message):
        blocks = message.blocks
        parts = tuple(block.text if getattr(block, "block_type", None) == "text" and isinstance(
            getattr(block, "text", None), str) else None for block in blocks)
        shape = ContentShape.PARTS if blocks else ContentShape.NONE
        return Message(index, _canonical_role(message.role, index), parts, MessageKind.LLAMA_INDEX, shape)
    if _is_langchain(message):
        kind = message.type
        if kind in ("chat", "ChatMessageChunk"):
            role = _canonical_role(getattr(message, "role", None), index)
        elif kind in LANGCHAIN_TYPES:
            role = LANGCHAIN_TYPES[kind]
        else:
            raise ValueError(f"Message {index} is a LangChain message of type {kind!r}, which has no role a chat model "
                             "reads; the accepted types are system, human, ai, tool, function and chat (with a role "
                             f"among {', '.join(ACCEPTED_ROLES)}).")
        shape, parts = _part_texts(message.content, index, MessageKind.LANGCHAIN)
        return Message(index, role, parts, MessageKind.LANGCHAIN, shape)
    raise TypeError(f"Message {index} is a {type(message).__name__}; a message must be a dict with 'role' and "
                    "'content', a LangChain BaseMessage or a LlamaIndex ChatMessage.")


def read_messages(messages: Any) -> list[Message]:
    """Every message of a conversation, read (see :func:`read_message`).

    Raises:
        TypeError: ``messages`` is not a sequence of messages (a str, a dict, a single message), or one of its
            items is not a message.
        ValueError: An unknown role.
    """
    if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of messages, got {type(messages).__name__}"
                        + (" (wrap a single message in a list)" if isinstance(messages, dict) else "") + ".")
    return [read_message(message, index) for index, message in enumerate(messages)]


def _new_content(content: Any, texts: Sequence[str | None]) -> Any:
    """``content`` (a str or a list of parts) with its text parts replaced by ``texts`` (``None``: unchanged)."""
    if isinstance(content, str):
        return content if texts[0] is None else texts[0]
    parts = []
    for part, text in zip(content, texts):
        if text is None:
            parts.append(copy.deepcopy(part))
        elif isinstance(part, str):
            parts.append(text)
        else:
            parts.append({**part, "text": text})
    return parts if isinstance(content, list) else type(content)(parts)


def rebuild_message(original: Any, message: Message, texts: Sequence[str | None]) -> Any:
    """A copy of ``original`` whose text parts read ``texts`` (one per part, ``None`` for a part left as it is).

    Everything else is kept: a dict's other keys, a LangChain message's id, name, tool calls and kwargs, a
    LlamaIndex message's ``additional_kwargs`` and non-text blocks. A message with no change is still a copy,
    and a deep one: changing the output's ``tool_calls`` or kwargs never changes the caller's messages.
    """
    if len(texts) != len(message.parts):
        raise ValueError(f"Message {message.index} has {len(message.parts)} parts, got {len(texts)} texts.")
    if message.kind is MessageKind.DICT:
        rebuilt = message.shape is not ContentShape.NONE  # its content is rebuilt below (non-text parts copied there)
        copied = {key: value if key == "content" and rebuilt else copy.deepcopy(value) for key, value in original.items()}
        if message.shape is not ContentShape.NONE:
            copied["content"] = _new_content(original["content"], texts)
        return copied
    if message.kind is MessageKind.LANGCHAIN:
        if message.shape is ContentShape.NONE:
            return original.model_copy(deep=True)
        return original.model_copy(update={"content": _new_content(original.content, texts)}, deep=True)
    blocks = [block.model_copy(deep=True) if text is None else block.model_copy(update={"text": text})
              for block, text in zip(original.blocks, texts)]
    return original.model_copy(update={"blocks": blocks}, deep=True)
