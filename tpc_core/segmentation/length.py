"""The length cap (step 6 of :mod:`tpc_core.segmentation`): no span longer than ``max_sentence_chars``.

A piece longer than the cap is cut at its last whitespace within the limit, or hard-cut when there is none, but
never between a character and its combining mark or joiner. Every piece is *tight*: no surrounding whitespace.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from tpc_core.segmentation.contract import Span

__all__ = ["capped", "tighten"]

_LAST_WHITESPACE = re.compile(r"\s\S*\Z")
_NON_WHITESPACE = re.compile(r"\S")
_GLUE_CHARS = "\u200d\ufe0e\ufe0f"


def tighten(text: str, start: int, end: int) -> Span:
    """Trim surrounding whitespace from ``text[start:end]``; an empty result has ``start == end``."""
    piece = text[start:end]
    left = piece.lstrip()
    start += len(piece) - len(left)
    return start, start + len(left.rstrip())


def _glued(text: str, index: int) -> bool:
    """Whether a cut before ``text[index]`` would separate it from the character it belongs to."""
    char = text[index]
    return bool(unicodedata.combining(char)) or char in _GLUE_CHARS or text[index - 1] == "\u200d"


def _hard_cut(text: str, start: int, cut: int) -> int:
    """Move a hard cut left (a little) so a character keeps its combining marks and joiners."""
    probe = cut
    while probe > start + 1 and cut - probe < 16 and _glued(text, probe):
        probe -= 1
    return cut if _glued(text, probe) else probe


def capped(text: str, start: int, end: int, max_chars: int) -> Iterator[Span]:
    """Cut a tight span into tight pieces of at most ``max_chars`` characters."""
    while end - start > max_chars:
        window_end = start + max_chars
        match = _LAST_WHITESPACE.search(text, start + 1, window_end + 1)
        cut = match.start() if match else _hard_cut(text, start, window_end)
        yield tighten(text, start, cut)
        # A search, not tighten(): copying the rest of a huge run on every cut would be quadratic.
        next_start = _NON_WHITESPACE.search(text, cut, end)
        assert next_start is not None  # text[end - 1] is not whitespace
        start = next_start.start()
    yield start, end
