"""The span contract every splitter keeps, and the check a custom splitter's spans go through.

A span is ``(start, end)`` with ``text[start:end]`` one sentence. A splitter's spans are pairs of ints, sorted,
non-overlapping and non-empty, carry no leading or trailing whitespace, and together cover every
non-whitespace character of the text. The built-in splitters keep it by construction
(:class:`tpc_core.segmentation.splitter.LineAwareSplitter`); any other splitter's spans are checked here.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["SentenceSplitter", "Span", "check_contract", "require_str"]

Span = tuple[int, int]
"""``(start, end)``: ``text[start:end]`` is one sentence."""


@runtime_checkable
class SentenceSplitter(Protocol):
    """Anything that turns a text into sentence spans (see :mod:`tpc_core.segmentation` for the contract)."""

    def spans(self, text: str) -> list[Span]:
        """Return the sentence spans of ``text``."""
        ...


def require_str(text: object) -> None:
    """Raise ``TypeError`` unless ``text`` is a ``str``."""
    if not isinstance(text, str):
        raise TypeError(f"Sentence splitting needs a str, got {type(text).__name__}.")


def check_contract(text: str, spans: list[Span], splitter: object) -> None:
    """Raise ValueError if ``spans`` are not pairs of ints that are sorted, tight, non-overlapping and covering."""
    name = type(splitter).__name__
    contract = ("A custom splitter's spans(text) must return (start, end) int pairs, sorted and non-overlapping, "
                "each without leading or trailing whitespace, that together cover every non-blank character "
                "(see tpc_core.segmentation).")
    position = 0
    for span in spans:
        if (not isinstance(span, (tuple, list)) or len(span) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in span)):
            raise ValueError(f"{name} returned {span!r}, which is not a pair of ints. {contract}")
        start, end = span
        problem = None
        if not (position <= start < end <= len(text)):
            problem = "out of order, overlapping, empty or out of range"
        elif text[start].isspace() or text[end - 1].isspace():
            problem = "starts or ends with whitespace"
        elif text[position:start].strip():
            problem = f"leaves {text[position:start].strip()[:40]!r} uncovered"
        if problem:
            raise ValueError(f"{name} returned span {(start, end)} that is {problem}. {contract}")
        position = end
    if text[position:].strip():
        raise ValueError(f"{name} left {text[position:].strip()[:40]!r} uncovered. {contract}")
