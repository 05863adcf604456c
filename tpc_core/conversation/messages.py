"""Chat messages in, chat messages out: what a conversation's messages say, read the same way for three kinds.

``compress_messages`` takes role/content messages of three kinds and gives back the kind it was given:

* **plain dicts**, OpenAI style: ``{"role": ..., "content": str | [parts] | None, ...}`` with any other keys
  (``name``, ``tool_call_id``, ``tool_calls``, ``id``); a part is a str or a dict, a text part being
  ``{"type": "text" | "input_text" | "output_text", "text": str}``; Anthropic-style blocks too: a
  ``{"type": "tool_result", "content": str | [blocks]}`` block's text (a string, or each of its text blocks) is read
  as a tool result's text, and a user message made only of tool results is read as the tool message it is (role
  ``"tool"``); a ``tool_use`` block is not text;
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
from collections.abc import Iterator, Sequence
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
#: Anthropic's block that carries a tool's result in a user message: ``content`` a str or a list of blocks.
TOOL_RESULT_TYPE = "tool_result"
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
        tool_parts: Per part, whether it is inside a ``tool_result`` block (a tool's text, not the user's); empty
            when none is.

    A part is a leaf of the content: a str, a text block, or, inside a ``tool_result`` block, its string content or
    each of its blocks, in order (:func:`rebuild_message` walks the content in the same order).
    """

    index: int
    role: str
    parts: tuple[str | None, ...]
    kind: MessageKind
    shape: ContentShape
    tool_parts: tuple[bool, ...] = ()

    def is_tool_part(self, position: int) -> bool:
        """Whether part ``position`` holds a tool's result (inside a ``tool_result`` block)."""
        return bool(self.tool_parts) and self.tool_parts[position]

    @property
    def text(self) -> str:
        """The text the message's author wrote: its text parts outside tool results, joined by a newline (blank ones
        left out)."""
        return "\n".join(part for k, part in enumerate(self.parts)
                         if part is not None and part.strip() and not self.is_tool_part(k))


def _canonical_role(role: Any, index: int) -> str:
    name = role.value if isinstance(role, Enum) else role
    if isinstance(name, str) and name.lower() in ROLE_ALIASES:
        return ROLE_ALIASES[name.lower()]
    raise ValueError(f"Message {index} has the unknown role {name!r}; the accepted roles are "
                     f"{', '.join(ACCEPTED_ROLES)}.")


def _part_texts(content: Any, index: int, kind: MessageKind
                ) -> tuple[ContentShape, tuple[str | None, ...], tuple[bool, ...]]:
    """The shape, text parts and tool-result flags of a dict's or a LangChain message's ``content``."""
    if content is None or (isinstance(content, (list, tuple)) and not content):
        return ContentShape.NONE, (), ()
    if isinstance(content, str):
        return ContentShape.STRING, (content,), ()
    if not isinstance(content, (list, tuple)):
        raise TypeError(f"Message {index} ({kind.value}) has content of type {type(content).__name__}; content must be "
                        "a str, a list of parts (str or dict) or None.")
    texts: list[str | None] = []
    tools: list[bool] = []
    for position, part in enumerate(content):
        if isinstance(part, dict) and part.get("type") == TOOL_RESULT_TYPE:
            inner = part.get("content")
            if isinstance(inner, str):
                texts.append(inner)
                tools.append(True)
            elif isinstance(inner, (list, tuple)) and inner:
                for block_position, block in enumerate(inner):
                    texts.append(_block_text(block, index, f"{position}.{block_position}"))
                    tools.append(True)
            else:  # no content, or a kind this module does not read: passes through
                texts.append(None)
                tools.append(True)
        elif isinstance(part, (str, dict)):
            texts.append(_block_text(part, index, str(position)))
            tools.append(False)
        else:
            raise TypeError(f"Message {index}, part {position} is a {type(part).__name__}; a content part must be a "
                            "str or a dict such as {'type': 'text', 'text': ...}.")
    return ContentShape.PARTS, tuple(texts), tuple(tools) if any(tools) else ()


def _block_text(part: Any, index: int, position: str) -> str | None:
    """A part's text: the str itself, a text block's ``text``; ``None`` for any other block (an image, a file, a
    ``tool_use`` block, an unknown type: it passes through)."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type") in TEXT_PART_TYPES and "text" in part:
        if not isinstance(part["text"], str):
            raise TypeError(f"Message {index}, part {position}: a {part['type']!r} part's text must be a str, "
                            f"got {type(part['text']).__name__}.")
        return part["text"]
    return None


def _tool_role(role: str, tools: tuple[bool, ...]) -> str:
    """A user message made only of tool results is the tool message it stands for (Anthropic puts tool results in
    user turns): it is compressed like one, and it is not the turn the user wrote."""
    return "tool" if role == "user" and tools and all(tools) else role


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
        shape, parts, tools = _part_texts(message.get("content"), index, MessageKind.DICT)
        role = _tool_role(_canonical_role(message["role"], index), tools)
        return Message(index, role, parts, MessageKind.DICT, shape, tools)
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
        shape, parts, tools = _part_texts(message.content, index, MessageKind.LANGCHAIN)
        return Message(index, _tool_role(role, tools), parts, MessageKind.LANGCHAIN, shape, tools)
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


def _new_content(content: Any, texts: Iterator[str | None], drop_empty: bool) -> Any:
    """``content`` (a str or a list of parts) with its text parts replaced by the next of ``texts`` (``None``:
    unchanged), walked in :func:`_part_texts`' order; with ``drop_empty``, a text part that became ``""`` is left out
    of a list that keeps another part."""
    if isinstance(content, str):
        text = next(texts)
        return content if text is None else text
    parts: list[Any] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == TOOL_RESULT_TYPE:
            inner = part.get("content")
            if isinstance(inner, str) or (isinstance(inner, (list, tuple)) and inner):
                parts.append({**copy.deepcopy({k: v for k, v in part.items() if k != "content"}),
                              "content": _new_content(inner, texts, drop_empty)})
            else:
                next(texts)
                parts.append(copy.deepcopy(part))
            continue
        text = next(texts)
        if text is None:
            parts.append(copy.deepcopy(part))
        elif drop_empty and text == "":
            parts.append(_EMPTIED)
        elif isinstance(part, str):
            parts.append(text)
        else:
            parts.append({**copy.deepcopy(part), "text": text})
    kept = [part for part in parts if part is not _EMPTIED]
    parts = kept if kept else [("" if isinstance(part, str) else {**part, "text": ""}) for part in content[:1]]
    return parts if isinstance(content, list) else type(content)(parts)


_EMPTIED = object()  # a text part left out (``drop_empty``)


def rebuild_message(original: Any, message: Message, texts: Sequence[str | None], *, drop_empty: bool = False) -> Any:
    """A copy of ``original`` whose text parts read ``texts`` (one per part, ``None`` for a part left as it is).

    Everything else is kept: a dict's other keys, a LangChain message's id, name, tool calls and kwargs, a
    LlamaIndex message's ``additional_kwargs`` and non-text blocks. A message with no change is still a copy,
    and a deep one: changing the output's ``tool_calls`` or kwargs never changes the caller's messages.

    Args:
        original: The message as given.
        message: It, read (:func:`read_message`).
        texts: The new text of each part.
        drop_empty: Leave out a text part that became ``""`` when its list keeps another part (a provider such as
            Anthropic rejects empty text blocks); a message whose only part it is keeps it.
    """
    if len(texts) != len(message.parts):
        raise ValueError(f"Message {message.index} has {len(message.parts)} parts, got {len(texts)} texts.")
    if message.kind is MessageKind.DICT:
        rebuilt = message.shape is not ContentShape.NONE  # its content is rebuilt below (non-text parts copied there)
        copied = {key: value if key == "content" and rebuilt else copy.deepcopy(value)
                  for key, value in original.items()}
        if message.shape is not ContentShape.NONE:
            copied["content"] = _new_content(original["content"], iter(texts), drop_empty)
        return copied
    if message.kind is MessageKind.LANGCHAIN:
        if message.shape is ContentShape.NONE:
            return original.model_copy(deep=True)
        return original.model_copy(update={"content": _new_content(original.content, iter(texts), drop_empty)},
                                   deep=True)
    blocks = [block.model_copy(deep=True) if text is None else block.model_copy(update={"text": text})
              for block, text in zip(original.blocks, texts)]
    if drop_empty:
        kept = [block for block, text in zip(blocks, texts) if text != ""]
        blocks = kept if kept else blocks[:1]
    return original.model_copy(update={"blocks": blocks}, deep=True)
