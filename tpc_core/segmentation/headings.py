"""Bare headings and the sections they open: a line that names a section says nothing without it.

A heading is a sentence span alone on its line that only labels what follows: a markdown heading (``## Impact``),
a line in bold (``**Action items**``), or a short label ending in ``.`` or ``:`` (``Impact.``, ``What went well.``,
``Lessons learned:``). Its words hold no sentence punctuation inside (``Postmortem: outage on 14 March`` is a title
with content, not a bare label), it asks nothing (``?``, ``!``) and it is no prompt template's label (``Question:``,
``Answer:``, ``Context:``: the template's own parts). A plain label is at most three words before a ``.`` (six
before a ``:``), starts with a capital, holds no pronoun or auxiliary verb (``She is successful.``, ``We rolled
back.`` are sentences) and does not end in a name's abbreviation (``Edgar Kaiser Jr.``). A line without a final
``.`` or ``:`` (a passage's title, ``Ed Wood (film)``) is no heading: it names an entity, which may be the answer. A
``.`` label is the weakest sign (``Line one about cats.`` reads the same), so it counts only where the document has
two or more of them.

A run-in heading opens a paragraph and its section follows on the same line (``Impact. Orders failed for an
hour.``, ``Contents of the box. The kit holds a jug.``): a label ending in ``.`` of at most four words, which may hold
an article but no pronoun or auxiliary verb (``Rent is due. Pay on the first.`` opens with a sentence). A short
sentence reads the same, so run-in labels count only where the document opens two or more lines with one: what it
does elsewhere tells a set of sections from a sentence.

A heading's section is what follows it up to the next heading that follows a sentence (a heading right under
another opens the same section: ``# Report`` over ``## Impact``), a chat-template marker or the end of the
document. A heading with no sentence in its section (a closing ``Thanks.``) is no heading here.
:func:`tpc_core.engine.selection.assembly.apply_budget` keeps a heading only as context for a kept sentence of its
section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tpc_core.segmentation.layout import TEMPLATE_LABEL
from tpc_core.segmentation.markers import is_turn_marker

__all__ = ["heading_sections", "is_heading", "is_run_in_heading"]

_ATX = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+(?P<body>.+?)(?:[ \t]+#+)?[ \t]*")
_BOLD = re.compile(r"(?P<fence>\*\*|__)(?P<body>[^*_]+?)(?P=fence)[ \t]*[.:]?[ \t]*")
_LABEL = re.compile(r"(?P<body>[^\W\d_][^.:;!?]*?)[ \t]*(?P<end>[.:])")
# Sentence punctuation inside a label: a label holding one of these says something ("Owner: payments team").
_INNER_PUNCTUATION = re.compile(r"[.:;!?]")
# Words that make a short line a sentence rather than a label ("She is successful.", "Add a check."), and the
# abbreviations that end a name rather than a sentence ("Edgar Kaiser Jr.", "Feel Good Inc.": a passage's title).
_SENTENCE_WORDS = frozenset(
    "i you he she it we they me him her us them my our your their its this that these those there here "
    "is are was were am be been being has have had do does did will would can could should shall may might must "
    "not no yes a an the".split())
# A run-in label may hold an article ("Contents of the box.", "Flushing a new cartridge."), never a pronoun or verb.
_RUN_IN_SENTENCE_WORDS = _SENTENCE_WORDS - {"a", "an", "the"}
_NAME_ENDINGS = frozenset("jr sr inc ltd co corp bros st mr mrs ms dr prof no vol jnr snr plc llc ag sa".split())
_LETTERS = re.compile(r"[^\W\d_]+")
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # those of str.splitlines
_MAX_HEADING_CHARS = 120
_MAX_MARKUP_WORDS = 8
_MAX_PLAIN_WORDS = {".": 3, ":": 6}  # a colon announces what follows: a surer sign of a label
# A plain label ending in "." is the weakest sign ("Line one about cats." reads the same): such lines are headings
# only where the document has at least this many of them, as sections come in sets.
_MIN_PLAIN_DOT_LABELS = 2
_MAX_RUN_IN_WORDS = 4
# Run-in labels, like plain "." labels, count only where the document opens at least this many lines with one.
_MIN_RUN_IN_LABELS = 2


def is_heading(line: str) -> bool:
    """Whether ``line`` (a whole line: the caller checks that the span stands alone on it) is a bare heading.

    >>> is_heading("## Impact"), is_heading("**Action items**"), is_heading("What went well.")
    (True, True, True)
    >>> is_heading("Postmortem: outage on 14 March"), is_heading("Answer:"), is_heading("Ed Wood (film)")
    (False, False, False)
    """
    text = line.strip()
    if not text or is_turn_marker(text) or TEMPLATE_LABEL.match(text):
        return False
    markup = _ATX.fullmatch(text) or _BOLD.fullmatch(text)
    if markup is not None:
        return _bare(markup.group("body"), _MAX_MARKUP_WORDS)
    label = _LABEL.fullmatch(text)
    if label is None or not label.group("body")[:1].isupper():
        return False
    words = [word.lower() for word in _LETTERS.findall(label.group("body"))]
    if _SENTENCE_WORDS.intersection(words) or (label.group("end") == "." and words[-1] in _NAME_ENDINGS):
        return False
    return _bare(label.group("body"), _MAX_PLAIN_WORDS[label.group("end")])


def is_run_in_heading(text: str) -> bool:
    """Whether ``text`` (a sentence span that opens its line, followed on that line by more text) reads as a run-in
    heading: a label ending in ``.`` that only names a section (see the module).

    >>> is_run_in_heading("Contents of the box."), is_run_in_heading("Rent is due.")
    (True, False)
    """
    label = _LABEL.fullmatch(text.strip())
    if label is None or label.group("end") != "." or not label.group("body")[:1].isupper():
        return False
    if TEMPLATE_LABEL.match(text.strip()):
        return False
    words = [word.lower() for word in _LETTERS.findall(label.group("body"))]
    if not words or _RUN_IN_SENTENCE_WORDS.intersection(words) or words[-1] in _NAME_ENDINGS:
        return False
    return _bare(label.group("body"), _MAX_RUN_IN_WORDS)


def _is_plain_dot(line: str) -> bool:
    """Whether a heading line is a plain label ending in ``.`` (no markdown, no bold, no colon)."""
    text = line.strip()
    return text.endswith(".") and _ATX.fullmatch(text) is None and _BOLD.fullmatch(text) is None


def _bare(body: str, max_words: int) -> bool:
    """Whether a heading's words only name a section: a few words, no sentence punctuation inside."""
    words = body.rstrip(" \t.:").split()
    return 0 < len(words) <= max_words and not _INNER_PUNCTUATION.search(" ".join(words))


def heading_sections(document: str, spans: Sequence[tuple[int, int]]) -> dict[int, tuple[int, ...]]:
    """Each bare heading of ``document`` (a span index) and the sentences of its section (not headings), in order.

    A span is a heading only where it stands alone on its line (:func:`is_heading`), or opens its line with more
    text after it there (:func:`is_run_in_heading`, where the document has two or more), and its section holds a
    sentence.

    >>> text = "# Impact\\nOrders failed for an hour.\\n## Notes\\nWe rolled back."
    >>> spans = [(0, 8), (9, 35), (36, 44), (45, 60)]
    >>> heading_sections(text, spans)
    {0: (1,), 2: (3,)}
    >>> text = "Impact. Orders failed for an hour.\\nNotes. We rolled back.\\nRent is due. Pay on the first."
    >>> heading_sections(text, [(0, 7), (8, 34), (35, 41), (42, 57), (58, 70), (71, 88)])
    {0: (1,), 2: (3, 4, 5)}
    """
    headings = [end - start <= _MAX_HEADING_CHARS and is_heading(document[start:end])
                and _alone_on_line(document, start, end) for start, end in spans]
    run_in = [not heading and _run_in(document, spans, index) for index, heading in enumerate(headings)]
    if sum(run_in) >= _MIN_RUN_IN_LABELS:
        headings = [heading or opens for heading, opens in zip(headings, run_in)]
    plain_dot = [heading and _is_plain_dot(document[start:end]) for heading, (start, end) in zip(headings, spans)]
    if sum(plain_dot) < _MIN_PLAIN_DOT_LABELS:
        headings = [heading and not dot for heading, dot in zip(headings, plain_dot)]
    sections: dict[int, tuple[int, ...]] = {}
    for index, heading in enumerate(headings):
        section = _section(document, spans, headings, index) if heading else ()
        if section:
            sections[index] = section
    return sections


def _run_in(document: str, spans: Sequence[tuple[int, int]], index: int) -> bool:
    """Whether span ``index`` opens its line, the next span follows it on the same line, and it reads as a run-in
    heading."""
    start, end = spans[index]
    if index + 1 >= len(spans) or end - start > _MAX_HEADING_CHARS:
        return False
    before = document[:start].rstrip(" \t")
    between = document[end:spans[index + 1][0]]
    return (not before or before[-1] in _LINE_BREAKS) and not any(char in _LINE_BREAKS for char in between) \
        and is_run_in_heading(document[start:end])


def _alone_on_line(document: str, start: int, end: int) -> bool:
    """Whether the span ``[start, end)`` is the whole of its line (only whitespace up to a line break each side)."""
    before = start - 1
    while before >= 0 and document[before].isspace() and document[before] not in _LINE_BREAKS:
        before -= 1
    after = end
    while after < len(document) and document[after].isspace() and document[after] not in _LINE_BREAKS:
        after += 1
    return (before < 0 or document[before] in _LINE_BREAKS) and (after == len(document) or
                                                                 document[after] in _LINE_BREAKS)


def _section(document: str, spans: Sequence[tuple[int, int]], headings: Sequence[bool], heading: int
             ) -> tuple[int, ...]:
    """The sentences (not headings) under ``heading``: up to the next heading that follows a sentence (one right
    under it opens the same section), a chat-template marker, or the end."""
    section: list[int] = []
    for index in range(heading + 1, len(spans)):
        if headings[index]:
            if section:
                break
            continue
        start, end = spans[index]
        if is_turn_marker(document[start:end]):
            break
        section.append(index)
    return tuple(section)
