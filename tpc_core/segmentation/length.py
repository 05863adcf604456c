"""The length cap (step 6 of :mod:`tpc_core.segmentation`): no span longer than ``max_sentence_chars``.

A piece longer than the cap is cut at its last whitespace within the limit (a word boundary), or hard-cut only
inside a word longer than the limit, but never between a character and its combining mark or joiner. Every piece
is *tight*: no surrounding whitespace. :func:`cut_sentences` finds, after the fact, which spans are pieces of one
sentence the cap cut (what a result reports when it keeps only part of such a sentence).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence

from tpc_core.segmentation.contract import Span

__all__ = ["capped", "cut_sentences", "tighten"]

_LAST_WHITESPACE = re.compile(r"\s\S*\Z")
_NON_WHITESPACE = re.compile(r"\S")
_WHITESPACE = re.compile(r"\s")
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


def _may_follow_a_cut(text: str, spans: Sequence[Span], index: int, max_chars: int) -> bool:
    """Whether ``spans[index + 1]`` may start where :func:`capped` cut ``spans[index]`` off: a cut falls at the last
    whitespace of a window of ``max_chars`` characters (or inside a longer word), so the first word after it always
    runs past the window's end. A sentence boundary the backend found almost never does."""
    start = spans[index][0]
    following = spans[index + 1]
    if following[1] <= start + max_chars:  # the whole next span ends inside the window: no cut there
        return False
    word_end = _WHITESPACE.search(text, following[0], following[1])
    return (word_end.start() if word_end else following[1]) > start + max_chars


def cut_sentences(text: str, spans: Sequence[Span], max_chars: int,
                  uncapped: Callable[[str], list[Span]]) -> tuple[tuple[int, int], ...]:
    """The sentences of ``text`` the cap cut into several of ``spans``, as ``(first, last)`` indices of their pieces.

    Args:
        text: A document.
        spans: Its spans, as a splitter capped at ``max_chars`` gave them.
        max_chars: That splitter's cap.
        uncapped: The same splitter without a cap (its ``spans``): asked only where a cut may have been made, so a
            document with no span near the cap is not split again.
    """
    if not any(_may_follow_a_cut(text, spans, index, max_chars) for index in range(len(spans) - 1)):
        return ()
    cuts = []
    index = 0
    for start, end in uncapped(text):
        if end - start <= max_chars:
            continue
        while index < len(spans) - 1 and spans[index][0] < start:
            index += 1
        first = index
        while index + 1 < len(spans) and spans[index + 1][1] <= end:
            index += 1
        cuts.append((first, index))
    return tuple(cuts)
