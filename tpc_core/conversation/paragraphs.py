"""A conversation's compressed text parts: cut into paragraphs, rebuilt from their kept sentences, fitted to a room.

Each text part compressed is cut at its blank lines into paragraphs (:func:`paragraph_cuts`: pasted documents), the
documents of the engine's call; :func:`fit_parts` rebuilds each part from its paragraphs' kept sentences
(:func:`assemble_part`) and runs the one budget loop (:func:`tpc_core.engine.selection.fitting.drop_to_fit`) on the
parts' own counts: the conversation's budget is exact for any counter. Pure: no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from tpc_core.engine.selection.budget import join_kept
from tpc_core.engine.selection.fitting import drop_to_fit, fill_floors
from tpc_core.segmentation import Span

__all__ = ["BLANK_LINE", "assemble_part", "fit_parts", "paragraph_cuts"]

# Whitespace that holds a blank line: where one paragraph (a pasted document) ends and the next begins.
BLANK_LINE = re.compile(r"[ \t\r\f\v]*\n(?:[ \t\r\f\v]*\n)+\s*")


def paragraph_cuts(text: str) -> list[Span]:
    """Where ``text``'s paragraphs are: the stretches between whitespace that holds a blank line (blank ones left
    out). Pasted documents are such paragraphs; each is read by the CSE as a document of its own, as the
    prompt-aware reference reads separate documents (on qa_dev train, evidence recall 0.825 against 0.792 for
    whole messages as documents: ``benchmarks/results/conversations``)."""
    cuts = []
    start = 0
    for gap in BLANK_LINE.finditer(text):
        cuts.append((start, gap.start()))
        start = gap.end()
    cuts.append((start, len(text)))
    return [(begin, end) for begin, end in cuts if text[begin:end].strip()]


def assemble_part(text: str, cuts: Sequence[Span], segments: Sequence[str]) -> str:
    """A text part from its compressed paragraphs: the non-empty ones in order, each followed by the whitespace
    that originally followed it (a paragraph break) when another comes after it."""
    pieces: list[str] = []
    gap = ""
    for k, ((_, end), segment) in enumerate(zip(cuts, segments)):
        if not segment:
            continue
        if pieces:
            pieces.append(gap)
        pieces.append(segment)
        gap = text[end:cuts[k + 1][0]] if k + 1 < len(cuts) else "\n\n"
    return "".join(pieces)


def fit_parts(parts: Sequence[str], cuts: Sequence[Sequence[Span]], spans: Sequence[Sequence[Span]],
              kept: Sequence[Sequence[int]], scores: Sequence[Sequence[float | None]], room: int,
              counter: Callable[[str], int], floors: Sequence[Sequence[int]] = (),
              pinned: Sequence[Sequence[int]] = ()) -> list[str]:
    """The parts rebuilt from their paragraphs' kept sentences (verbatim), the weakest sentence dropped until the
    parts' own counts sum to at most ``room`` (the one budget loop:
    :func:`tpc_core.engine.selection.fitting.drop_to_fit`, each text part a part, its sentences ``(segment, index)``).

    The engine guarantees the count of its documents joined by a separator; with a subword counter the sum of
    the parts' own counts can be larger. Each drop removes the lowest-scoring kept sentence (unscored: the
    earliest) and recounts its part alone.

    Args:
        parts: The text parts.
        cuts: Each part's paragraphs (:func:`paragraph_cuts`); the paragraphs, part by part, are the segments.
        spans: Each segment's sentence spans (offsets in the segment).
        kept: Each segment's kept sentence indices (ascending).
        scores: Each segment's sentence scores (``None`` when nothing was scored).
        room: The budget of all the parts together.
        counter: The caller's counter.
        floors: Groups of parts (a message's text parts) that keep at least one sentence together: a group that
            kept none gets its best sentence (unscored: its first), and a group's last sentence is never dropped, so
            the parts may then sum over ``room``.
        pinned: Each segment's sentence indices that are never dropped (a request kept verbatim).
    """
    paragraphs = _Paragraphs(parts, cuts, spans)
    held = [[(d, i) for d in paragraphs.segments_of(k) for i in kept[d]] for k in range(len(parts))]
    pins = [{(d, i) for d in paragraphs.segments_of(k) if d < len(pinned) for i in pinned[d]}
            for k in range(len(parts))]
    held = fill_floors(held, paragraphs.sentences(), floors, lambda s: (*_rank(scores, s), -s[0], -s[1]))
    fitted = drop_to_fit(held, room, lambda k, ids: counter(paragraphs.text(k, ids)),
                         weakest=lambda s: (*_rank(scores, s), s), pinned=pins, floors=floors)
    return [paragraphs.text(k, ids) for k, ids in enumerate(fitted.kept)]


def _rank(scores: Sequence[Sequence[float | None]], sentence: tuple[int, int]) -> tuple[bool, float]:
    """A sentence's strength: scored before unscored, then by score."""
    score = scores[sentence[0]][sentence[1]]
    return score is not None, score or 0.0


class _Paragraphs:
    """Text parts cut into paragraphs (the segments), each part rebuilt from its kept ``(segment, sentence)``s."""

    def __init__(self, parts: Sequence[str], cuts: Sequence[Sequence[Span]], spans: Sequence[Sequence[Span]]) -> None:
        self.parts = parts
        self.cuts = cuts
        self.spans = spans
        self.segments = [part[begin:end] for part, part_cuts in zip(parts, cuts) for begin, end in part_cuts]
        self.first = [sum(len(c) for c in cuts[:k]) for k in range(len(parts))]

    def segments_of(self, part: int) -> range:
        """The segments of text part ``part``."""
        return range(self.first[part], self.first[part] + len(self.cuts[part]))

    def sentences(self) -> list[list[tuple[int, int]]]:
        """Each part's sentences, ``(segment, index)``."""
        return [[(d, i) for d in self.segments_of(k) for i in range(len(self.spans[d]))]
                for k in range(len(self.parts))]

    def text(self, part: int, kept: Sequence[tuple[int, int]]) -> str:
        """Text part ``part`` keeping ``kept`` (:func:`assemble_part` of its segments' :func:`join_kept` texts)."""
        texts = [join_kept(self.segments[d], self.spans[d], [i for segment, i in kept if segment == d])
                 for d in self.segments_of(part)]
        return assemble_part(self.parts[part], self.cuts[part], texts)
