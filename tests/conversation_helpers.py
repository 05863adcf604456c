"""Checks shared by the conversation tests: a text is a verbatim selection of another's sentences, in order."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


def is_selection(original: str, compressed: str, splitter: Any) -> bool:
    """Whether ``compressed`` is ``original`` itself, or some of its sentences verbatim, in order, apart by
    whitespace only (how the engine joins kept sentences)."""
    if compressed == original or compressed == "":
        return True
    sentences = [original[start:end] for start, end in splitter.spans(original)]

    @lru_cache(maxsize=None)
    def match(position: int, first: int) -> bool:
        if position == len(compressed):
            return True
        for index in range(first, len(sentences)):
            sentence = sentences[index]
            if compressed.startswith(sentence, position):
                after = position + len(sentence)
                if after == len(compressed):
                    return True
                gap = after
                while gap < len(compressed) and compressed[gap].isspace():
                    gap += 1
                if gap > after and match(gap, index + 1):
                    return True
        return False

    return match(0, 0)


def texts_of(message: Any) -> list[str]:
    """The text parts of a dict, LangChain or LlamaIndex message."""
    if hasattr(message, "blocks") and not isinstance(message, dict):
        return [block.text for block in message.blocks if getattr(block, "block_type", None) == "text"]
    content = message["content"] if isinstance(message, dict) else message.content
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    return [part if isinstance(part, str) else part["text"] for part in content
            if isinstance(part, str) or part.get("type") == "text"]


def counted(messages: list[Any], counter: Any) -> int:
    """The conversation's count: the counter summed over every text part of every message."""
    return sum(counter(text) for message in messages for text in texts_of(message))
