"""Chat messages in, chat messages out: what a conversation's messages say, read the same way for three kinds.

``compress_messages`` takes role/content messages of three kinds and gives back the kind it was given:

* **plain dicts**, OpenAI style: ``{"role": ..., "content": str | [parts] | None, ...}`` with any other keys
  (``name``, ``tool_call_id``, ``tool_calls``, ``id``); a part is a str or a dict, a text part being
  ``{"type": "text" | "input_text" | "output_text", "text": str}``; Anthropic-style blocks too: a
  ``{"type": "tool_result", "content": str | [blocks]}`` block's text (a string, or each of its text blocks) is read
  as a tool result's text, and a user message made only of tool results is read as the tool message it is (role
  ``"tool"``); a ``tool_use`` block is not text (it is read as a tool call);
* **LangChain** ``BaseMessage`` (``SystemMessage``, ``HumanMessage``, ``AIMessage``, ``ToolMessage``,
  ``FunctionMessage``, ``ChatMessage`` with a role, and their chunks); ``content`` a str or a list of str / dict
  blocks;
* **LlamaIndex** ``ChatMessage``: a ``role`` (``MessageRole``) and ``blocks`` (``TextBlock`` has ``text``; every
  other block passes through).

Neither framework is imported: a message is recognised by its shape (duck typing). Reading gives each message
its canonical role and the text of each content part (``None`` for a part that is not text: an image, a file,
a tool-use block, a block of a type this module does not know), the tool calls it makes and the call each of its
tool results answers (:class:`ToolCall`, every shape above: LangChain's ``tool_calls``, OpenAI's ``tool_calls`` and
``tool_call_id``, Anthropic's ``tool_use`` / ``tool_result`` blocks and their ``tool_use_id``, LlamaIndex's
``ToolCallBlock`` and ``additional_kwargs``); rebuilding puts new texts in the text parts of
a copy and leaves everything else (ids, names, tool calls, ``additional_kwargs``, metadata, non-text parts)
as it was. The input is never changed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tpc_core.segmentation.vocabulary import message_roles

__all__ = ["ACCEPTED_ROLES", "PROTECTED_ROLES", "Message", "MessageKind", "ToolCall", "read_message", "read_messages",
           "rebuild_message", "tool_calls_by_id"]

#: Every role name accepted, with the canonical role it means (LangChain types, LlamaIndex and provider aliases:
#: the message roles of :data:`tpc_core.segmentation.vocabulary.ROLE_NAMES`).
ROLE_ALIASES = message_roles()
ACCEPTED_ROLES = tuple(ROLE_ALIASES)
#: Roles whose messages are always kept whole (the latest user turn is kept whole too).
PROTECTED_ROLES = frozenset({"system", "developer"})
#: Dict content parts that carry text under "text" (Chat Completions, Responses API input and output).
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
#: Anthropic's block that carries a tool's result in a user message: ``content`` a str or a list of blocks.
TOOL_RESULT_TYPE = "tool_result"
#: Anthropic's block that carries a tool call in an assistant message: ``id``, ``name``, ``input``.
TOOL_USE_TYPE = "tool_use"
# LangChain message types -> canonical roles ("chat" messages carry their own role; chunks name their class).
_LANGCHAIN_CLASSES = {"system": "System", "human": "Human", "ai": "AI", "tool": "Tool", "function": "Function"}
LANGCHAIN_TYPES = {**{kind: ROLE_ALIASES[kind] for kind in _LANGCHAIN_CLASSES},
                   **{f"{name}MessageChunk": ROLE_ALIASES[kind] for kind, name in _LANGCHAIN_CLASSES.items()}}


class MessageKind(str, Enum):
    """Which kind of object a message is (it is rebuilt as the same kind)."""

    DICT = "dict"
    LANGCHAIN = "langchain"
    LLAMA_INDEX = "llama_index"


@dataclass(frozen=True)
class ToolCall:
    """A tool call an assistant message makes.

    Attributes:
        id: Its id (what the result's ``tool_call_id`` / ``tool_use_id`` names); ``None`` when it has none.
        name: The tool's name.
        arguments: Its arguments as given (a mapping, or a JSON string).
    """

    id: str | None
    name: str | None
    arguments: Any = None


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
        calls: The tool calls it makes (an assistant message), in order, each id once.
        answers: Per part, the id of the tool call it answers (a tool message's ``tool_call_id``, a ``tool_result``
            block's ``tool_use_id``; ``None`` where none is given); empty when it answers none.
        tool_name: The tool's name a tool or function message carries itself (``name``), else ``None``.

    A part is a leaf of the content: a str, a text block, or, inside a ``tool_result`` block, its string content or
    each of its blocks, in order (:func:`rebuild_message` walks the content in the same order).
    """

    index: int
    role: str
    parts: tuple[str | None, ...]
    kind: MessageKind
    shape: ContentShape
    tool_parts: tuple[bool, ...] = ()
    calls: tuple[ToolCall, ...] = ()
    answers: tuple[str | None, ...] = ()
    tool_name: str | None = None

    def is_tool_part(self, position: int) -> bool:
        """Whether part ``position`` holds a tool's result (inside a ``tool_result`` block)."""
        return bool(self.tool_parts) and self.tool_parts[position]

    def is_tool_result(self, position: int) -> bool:
        """Whether part ``position`` is a tool's result: a part of a tool or function message, or of a
        ``tool_result`` block."""
        return self.role in ("tool", "function") or self.is_tool_part(position)

    def call_id(self, position: int) -> str | None:
        """The id of the tool call part ``position`` answers, ``None`` where none is given."""
        return self.answers[position] if position < len(self.answers) else None

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


@dataclass(frozen=True)
class _Content:
    """What :func:`_part_texts` reads from a dict's or a LangChain message's ``content``."""

    shape: ContentShape
    parts: tuple[str | None, ...] = ()
    tools: tuple[bool, ...] = ()
    answers: tuple[str | None, ...] = ()


def _part_texts(content: Any, index: int, kind: MessageKind) -> _Content:
    """The shape, text parts, tool-result flags and the call ids they answer of a dict's or a LangChain message's
    ``content``."""
    if content is None or (isinstance(content, (list, tuple)) and not content):
        return _Content(ContentShape.NONE)
    if isinstance(content, str):
        return _Content(ContentShape.STRING, (content,))
    if not isinstance(content, (list, tuple)):
        raise TypeError(f"Message {index} ({kind.value}) has content of type {type(content).__name__}; content must be "
                        "a str, a list of parts (str or dict) or None.")
    texts: list[str | None] = []
    answers: list[tuple[bool, str | None]] = []
    for position, part in enumerate(content):
        if isinstance(part, dict) and part.get("type") == TOOL_RESULT_TYPE:
            inner = _tool_result_texts(part.get("content"), index, position)
            texts += inner
            answers += [(True, _call_id(part.get("tool_use_id")))] * len(inner)
        elif isinstance(part, (str, dict)):
            texts.append(_block_text(part, index, str(position)))
            answers.append((False, None))
        else:
            raise TypeError(f"Message {index}, part {position} is a {type(part).__name__}; a content part must be a "
                            "str or a dict such as {'type': 'text', 'text': ...}.")
    if not any(tool for tool, _ in answers):
        return _Content(ContentShape.PARTS, tuple(texts))
    return _Content(ContentShape.PARTS, tuple(texts), tuple(tool for tool, _ in answers),
                    tuple(call for _, call in answers))


def _tool_result_texts(inner: Any, index: int, position: int) -> list[str | None]:
    """The parts of a ``tool_result`` block's content: its string, or each of its blocks; one ``None`` part for no
    content or a kind this module does not read (it passes through)."""
    if isinstance(inner, str):
        return [inner]
    if isinstance(inner, (list, tuple)) and inner:
        return [_block_text(block, index, f"{position}.{block_position}") for block_position, block in enumerate(inner)]
    return [None]


def _call_id(value: Any) -> str | None:
    """A tool call's id as a str (``None`` for none, or an empty one)."""
    return None if value is None or value == "" else str(value)


def _listed_call(call: Any) -> ToolCall:
    """One entry of a ``tool_calls`` list: LangChain's ``{"id", "name", "args"}``, OpenAI's ``{"id", "function":
    {"name", "arguments"}}``, LlamaIndex's ``{"tool_id", "tool_name", "tool_kwargs"}``, or an object that dumps to
    one of them (``model_dump``)."""
    if not isinstance(call, dict):
        dump = getattr(call, "model_dump", None)
        call = dump() if callable(dump) else {}
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    arguments = next((call[key] for key in ("args", "tool_kwargs") if call.get(key) is not None),
                     function.get("arguments"))
    return ToolCall(_call_id(call.get("id") or call.get("tool_id")),
                    call.get("name") or call.get("tool_name") or function.get("name"), arguments)


def _read_calls(listed: Any, content: Any = None, blocks: Any = ()) -> tuple[ToolCall, ...]:
    """The tool calls a message makes: its ``tool_calls`` list, then its content's ``tool_use`` blocks and its
    LlamaIndex ``ToolCallBlock`` blocks, each id once (LangChain gives Anthropic's calls both ways)."""
    calls = [_listed_call(call) for call in listed or () if call is not None]
    calls += [ToolCall(_call_id(part.get("id")), part.get("name"), part.get("input"))
              for part in (content if isinstance(content, (list, tuple)) else ())
              if isinstance(part, dict) and part.get("type") == TOOL_USE_TYPE]
    calls += [ToolCall(_call_id(block.tool_call_id), block.tool_name, block.tool_kwargs)
              for block in blocks or () if getattr(block, "block_type", None) == "tool_call"]
    seen: set[str] = set()
    unique = []
    for call in calls:
        if call.id is not None:
            if call.id in seen:
                continue
            seen.add(call.id)
        unique.append(call)
    return tuple(unique)


def _answers(role: str, content: _Content, count: int, own: Any) -> tuple[str | None, ...]:
    """Per part, the call id it answers: a ``tool_result`` block's own, else a tool message's ``tool_call_id``
    (``own``); empty when no part is a tool result."""
    if role not in ("tool", "function"):
        return content.answers
    blocks = content.answers or (None,) * count
    return tuple(block or _call_id(own) for block in blocks)


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
    """What one message says: its kind, canonical role, text parts, the tool calls it makes and the calls its tool
    results answer.

    Raises:
        TypeError: Neither a dict, a LangChain message nor a LlamaIndex ``ChatMessage``; or content (a part, a
            text) of the wrong type.
        ValueError: An unknown role, or a dict without one.
    """
    if isinstance(message, dict):
        if "role" not in message:
            raise ValueError(f"Message {index} (a dict) has no 'role'; the accepted roles are "
                             f"{', '.join(ACCEPTED_ROLES)}.")
        content = _part_texts(message.get("content"), index, MessageKind.DICT)
        return _message(index, _canonical_role(message["role"], index), content, MessageKind.DICT,
                        _read_calls(message.get("tool_calls"), message.get("content")),
                        message.get("tool_call_id"), message.get("name"))
    if _is_llama_index(message):
        return _llama_index_message(message, index)
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
        kwargs = getattr(message, "additional_kwargs", None)
        kwargs = kwargs if isinstance(kwargs, dict) else {}
        content = _part_texts(message.content, index, MessageKind.LANGCHAIN)
        calls = _read_calls(getattr(message, "tool_calls", None) or kwargs.get("tool_calls"), message.content)
        return _message(index, role, content, MessageKind.LANGCHAIN, calls,
                        getattr(message, "tool_call_id", None) or kwargs.get("tool_call_id"),
                        getattr(message, "name", None) or kwargs.get("name"))
    raise TypeError(f"Message {index} is a {type(message).__name__}; a message must be a dict with 'role' and "
                    "'content', a LangChain BaseMessage or a LlamaIndex ChatMessage.")


def _message(index: int, role: str, content: _Content, kind: MessageKind, calls: tuple[ToolCall, ...],
             own_id: Any, name: Any) -> Message:
    """A dict's or a LangChain message's reading: a user message made only of tool results reads as role "tool"; a
    tool or function message's ``name`` is its tool's."""
    answers = _answers(role, content, len(content.parts), own_id)
    tool_name = name if role in ("tool", "function") and isinstance(name, str) and name else None
    return Message(index, _tool_role(role, content.tools), content.parts, kind, content.shape, content.tools,
                   calls, answers, tool_name)


def _llama_index_message(message: Any, index: int) -> Message:
    """A LlamaIndex ``ChatMessage``'s reading: its text blocks, its ``ToolCallBlock`` / ``additional_kwargs`` tool
    calls, and a tool message's ``tool_call_id`` and ``name`` (in ``additional_kwargs``)."""
    blocks = message.blocks
    parts = tuple(block.text if getattr(block, "block_type", None) == "text" and isinstance(
        getattr(block, "text", None), str) else None for block in blocks)
    shape = ContentShape.PARTS if blocks else ContentShape.NONE
    kwargs = getattr(message, "additional_kwargs", None)
    kwargs = kwargs if isinstance(kwargs, dict) else {}
    role = _canonical_role(message.role, index)
    return _message(index, role, _Content(shape, parts), MessageKind.LLAMA_INDEX,
                    _read_calls(kwargs.get("tool_calls"), blocks=blocks), kwargs.get("tool_call_id"),
                    kwargs.get("name"))


def tool_calls_by_id(messages: Sequence[Message]) -> dict[str, ToolCall]:
    """Every tool call the assistant messages of a read conversation make, by id (the latest of an id repeated)."""
    return {call.id: call for message in messages if message.role == "assistant" for call in message.calls
            if call.id is not None}


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
