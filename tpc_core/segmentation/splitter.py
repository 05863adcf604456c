"""The splitter: lines and layout, a backend inside each prose unit, the length cap; and the two entry points.

:func:`get_splitter` builds (once per setting) a :class:`LineAwareSplitter`, which keeps the span contract by
construction; :func:`split_sentences` splits with a name or any object with ``spans(text)``, and checks such an
object's spans against the contract (:mod:`tpc_core.segmentation.contract`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from tpc_core.segmentation.backends import SPLITTER_NAMES, start_finder
from tpc_core.segmentation.contract import SentenceSplitter, Span, check_contract, require_str
from tpc_core.segmentation.layout import StartFinder, unit_cuts, units
from tpc_core.segmentation.length import capped, tighten
from tpc_core.segmentation.markers import cut_at_markers, marker_spans

__all__ = ["DEFAULT_MAX_SENTENCE_CHARS", "LineAwareSplitter", "SPLIT_RULES_REVISION", "get_splitter", "split_sentences"]

SPLIT_RULES_REVISION = 3
"""Bumped whenever the built-in splitters cut differently (2: chat-template markers are spans of their own and
key/value lines are not joined); a sentence cache's splitter identity holds it, so entries made under
older rules are misses, never reused."""

DEFAULT_MAX_SENTENCE_CHARS = 2000


@dataclass(frozen=True)
class LineAwareSplitter:
    """Splits lines first, joins soft-wrapped prose, then runs a sentence backend inside each unit.

    Attributes:
        name: Backend name, for messages.
        find_starts: Maps a unit (line breaks already replaced by spaces) to proposed sentence starts;
            ``None`` makes every non-blank line one sentence. It is only consulted for units where
            ``. ! ? …`` is followed by whitespace and more text, the only places a backend can cut.
        max_sentence_chars: No span is longer than this.
        join_wrapped_lines: Join soft-wrapped prose lines before sentence splitting.
    """

    name: str
    find_starts: StartFinder | None
    max_sentence_chars: int = DEFAULT_MAX_SENTENCE_CHARS
    join_wrapped_lines: bool = True

    def spans(self, text: str) -> list[Span]:
        """Return the sentence spans of ``text``.

        Args:
            text: Any string.

        Returns:
            Sorted, tight, non-overlapping spans covering every non-whitespace character.

        Raises:
            TypeError: If ``text`` is not a ``str``.
        """
        require_str(text)
        result: list[Span] = []
        find_starts = self.find_starts
        markers = marker_spans(text)  # chat-template markers: each one a span of its own
        next_marker = 0
        for start, end, prose in units(text, sentences=find_starts is not None,
                                       join_wrapped_lines=self.join_wrapped_lines):
            bounds = unit_cuts(text, start, end, find_starts) if prose and find_starts is not None else [start, end]
            if next_marker < len(markers) and markers[next_marker][0] < end:
                bounds, next_marker = cut_at_markers(bounds, markers, next_marker)
            for left, right in zip(bounds, bounds[1:]):
                left, right = tighten(text, left, right)
                if left < right:
                    result.extend(capped(text, left, right, self.max_sentence_chars))
        return result


@functools.lru_cache(maxsize=32)
def _cached_splitter(name: str, max_sentence_chars: int, join_wrapped_lines: bool) -> LineAwareSplitter:
    return LineAwareSplitter(name, start_finder(name), max_sentence_chars, join_wrapped_lines)


def get_splitter(
    name: str = "nupunkt",
    *,
    max_sentence_chars: int = DEFAULT_MAX_SENTENCE_CHARS,
    join_wrapped_lines: bool = True,
) -> SentenceSplitter:
    """Return a sentence splitter by backend name.

    Args:
        name: One of ``SPLITTER_NAMES``: ``"nupunkt"`` (default), ``"nltk"``, ``"regex"``, ``"line"``.
        max_sentence_chars: Longest allowed span; longer runs are cut at whitespace.
        join_wrapped_lines: Join soft-wrapped prose lines (see :mod:`tpc_core.segmentation`). Ignored by ``"line"``.

    Returns:
        A splitter whose ``spans(text)`` follows the segmentation contract.

    Raises:
        ValueError: For an unknown name or a ``max_sentence_chars`` below 1.
        TypeError: If ``name`` is not a string or ``max_sentence_chars`` not an int.
        RuntimeError: For ``"nltk"`` when nltk or its ``punkt_tab`` data is missing (says how to install).

    Example:
        >>> get_splitter("regex").spans("One. Two.")
        [(0, 4), (5, 9)]
    """
    if not isinstance(name, str):
        raise TypeError(f"Splitter name must be a str, got {type(name).__name__}.")
    if name not in SPLITTER_NAMES:
        raise ValueError(f"Unknown sentence splitter {name!r}; choose one of {', '.join(SPLITTER_NAMES)}.")
    if isinstance(max_sentence_chars, bool) or not isinstance(max_sentence_chars, int):
        raise TypeError(f"max_sentence_chars must be an int, got {type(max_sentence_chars).__name__}.")
    if max_sentence_chars < 1:
        raise ValueError(f"max_sentence_chars must be at least 1, got {max_sentence_chars}.")
    return _cached_splitter(name, max_sentence_chars, bool(join_wrapped_lines))


def split_sentences(text: str, splitter: str | SentenceSplitter = "nupunkt") -> list[Span]:
    """Split ``text`` into sentence spans.

    Args:
        text: The text to split.
        splitter: A backend name for :func:`get_splitter`, or any object with ``spans(text)``. A custom
            splitter's output is checked against the contract.

    Returns:
        Sorted, tight, non-overlapping spans that cover every non-whitespace character of ``text``.

    Raises:
        TypeError: If ``text`` is not a ``str`` or ``splitter`` is neither a name nor a splitter.
        ValueError: For an unknown name, or a custom splitter whose spans break the contract.
    """
    require_str(text)
    if isinstance(splitter, str):
        return get_splitter(splitter).spans(text)
    if not isinstance(splitter, SentenceSplitter):
        raise TypeError(
            f"splitter must be a name or have a spans(text) method, got {type(splitter).__name__}."
        )
    spans = splitter.spans(text)
    if isinstance(splitter, LineAwareSplitter):  # the built-in backends: correct by construction
        return list(spans)
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Iterable):
        raise ValueError(f"{type(splitter).__name__}.spans(text) returned a {type(spans).__name__}, not a list of "
                         f"(start, end) pairs.")
    spans = [tuple(span) if isinstance(span, list) else span for span in spans]
    check_contract(text, spans, splitter)
    return spans
