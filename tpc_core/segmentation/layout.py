"""Lines and layout: which lines of a text are prose to split, which stand alone, and where a backend may cut.

Steps 1, 2 and 5 of :mod:`tpc_core.segmentation`: the text is cut into lines (every ``str.splitlines``
separator) and paragraphs (blank lines); structural lines (lists, headings, rules, quotes, indented and code-looking
lines, and a record's lines: every row and everything inside a fence, by the one record rule of
:mod:`tpc_core.segmentation.records`) stand alone; soft-wrapped prose lines are joined into
one unit; inside a prose unit, a backend's proposed sentence starts and the CJK sentence ends are the cuts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator

from tpc_core.segmentation.records import record_lines

__all__ = ["TEMPLATE_LABEL", "StartFinder", "unit_cuts", "units"]

StartFinder = Callable[[str], Iterable[int]]
"""A sentence backend: maps a unit (line breaks replaced by spaces) to proposed sentence start offsets."""

# Exactly the separators of str.splitlines, so "a line" means the same thing everywhere in Python.
_LINE_BREAK_CHARS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE = re.compile(f"[^{_LINE_BREAK_CHARS}]+")
_LINE_BREAK = re.compile(f"[{_LINE_BREAK_CHARS}]")

# Special tokens written with bars (ChatML's "<|im_end|>", Llama 3's, Phi-3's): their bars are not table cells.
_BAR_TOKEN = re.compile(r"<\|[A-Za-z_]{1,20}\|>")
# A line of a line-structured format: "key: value" (YAML, forms, tickets, headers), "key = value" (INI, TOML) or a
# "[section]" header. It starts a unit, unless the line before is visibly wrapped prose (see _continues).
_KEY_LINE = re.compile(
    r"""[ \t]*["']?[A-Za-z][\w'/.-]*(?:[ \t]+[\w'/.\#-]+){0,3}["']?[ \t]*(?::(?:[ \t]|$)|=)
      | [ \t]*\[{1,2}[^\[\]]+\]{1,2}[ \t]*$""",
    re.VERBOSE,
)
# A speaker's or a request's label: its value wraps on in lower case only ("User: when did the pension start"
# above the pasted material is one line however full it looks).
_ASKING_LABEL = re.compile(r"[ \t#*>]{0,6}(?:user|assistant|system|human|ai|question|query|q|task|instruction|"
                           r"request|prompt|input)[*_]{0,2}[ \t]*:", re.IGNORECASE)
# A prompt template's label ("Question: ...", "Answer:", "Context:", "### Task", "Helpful Answer:"): written by the
# prompt's author, never by a wrapped paragraph, so a line that opens with one (capitalised) starts a unit.
TEMPLATE_LABEL = re.compile(r"[ \t#*>]{0,6}(?:(?:helpful|refined|final|short|your|the|original)[ \t]+)?"
                             r"(?:question|query|q|task|instructions?|request|prompt|answer|a|response|output|summary|context|article|"
                             r"documents?|passages?|story|transcript|report|news|user|assistant|system|human|ai)"
                             r"[*_]{0,2}[ \t]*:", re.IGNORECASE)
# Lines that stand on their own. Code rarely reaches a prompt unfenced, but when it does, its lines must
# not be glued into prose either.
_STRUCTURAL_LINE = re.compile(
    r"""
      ^[ \t]*(?:[-*+•‣◦▪–—·]|\(?(?:\d{1,3}|[A-Za-z]|[ivxlcdmIVXLCDM]{1,6})[.)])(?:\s|$)  # list
    | ^[ \t]{0,3}\#{1,6}(?:\s|$)                                      # ATX heading
    | ^[ \t]*(?:=+|-+|\*+|_+)[ \t]*$                                  # setext underline, rule
    | ^[ \t]*(?:\"\"\"|\'\'\')[ \t]*$                                    # a quoted block's fence
    | ^[ \t]*>  | ^(?:\t|[ ]{4})                                      # quote, indented block
    | ^[ \t]*<[^<>]+>[ \t]*$                                          # a lone HTML tag
    | [{}\\]\s*$ | ^\s*[})\]]                                        # code: braces, continuation
    | \w\([^()]*\)\s*$                                                # code: ends with a call f(x)
    | \s(?:=|==|!=|->|=>|//|/\*)\s | ^\s*(?://|/\*|@\w)                # code: operators, comments
    | ^\s*(?:def|class|function)\s+\w+\s*[(:{]
    | ^\s*(?:import\s+[\w.]+(?:\s+as\s+\w+)?\s*$|from\s+[\w.]+\s+import\s)
    """,
    re.VERBOSE,
)
# A line ending like this closes a sentence (or announces the next line), so the break is a boundary.
_TERMINAL_END = re.compile(r"[.!?…:。！？][\"'”’)\]»」』]*\s*$")
_MIN_WRAPPED_WORDS = 4
# Narrower "paragraphs" are lists, poems or addresses, whose lines end early on purpose.
_MIN_WRAP_WIDTH = 40
# Nobody hard-wraps at a wider width: a paragraph whose widest line is longer was not wrapped at all (a whole
# document on one line, a JSON or HTML payload), so its line ends are the writer's own.
_MAX_WRAP_WIDTH = 300

# Every backend ends sentences only at one of these followed by whitespace and more text; most lines
# hold one sentence, so units without one skip the backend's per-call cost.
_MAY_END_INSIDE = re.compile(r"[.!?…]\S*\s+\S|[。！？｡]")

# CJK sentence ends: the punctuation and any closing quotes/brackets stay with the sentence.
_CJK_END = re.compile(r"[。！？｡]+[」』”’）〕】》〉\"')\]]*")


def _continues(line: str, next_line: str, width: Callable[[], int]) -> bool:
    """Whether ``next_line`` is the soft-wrapped continuation of the prose on ``line``.

    Args:
        line: A non-blank, non-verbatim line.
        next_line: The non-blank, non-verbatim line right after it.
        width: Returns the length of the paragraph's widest line (the wrap width, at least approximately);
            only computed when needed.
    """
    body = line.rstrip()
    if len(body.split(None, _MIN_WRAPPED_WORDS - 1)) < _MIN_WRAPPED_WORDS:  # titles, labels, list-like
        return False
    following = next_line.lstrip()
    if not following[0].islower() and TEMPLATE_LABEL.match(next_line):  # "...\nAnswer:": the template's own line
        return False
    # A "key: value" line is joined to the line before only where that line is visibly wrapped prose (full, open,
    # no key line itself): "... in the Kansas City metropolitan\narea: the Edwards Campus ...". In a form, a
    # ticket or YAML, "question: ..." starts its own unit, even in lower case after a full line.
    key_next = _KEY_LINE.match(next_line) is not None
    if key_next and _KEY_LINE.match(line):
        return False
    if key_next or not following[0].islower():
        if _TERMINAL_END.search(body[-16:]) or _ASKING_LABEL.match(line):
            return False
        # Greedy wrapping breaks a line only when the next word does not fit; a title or a short line
        # that ends early was broken on purpose.
        wrap_width = width()
        if not _MIN_WRAP_WIDTH <= wrap_width <= _MAX_WRAP_WIDTH or \
                len(body) + 1 + len(following.split(None, 1)[0]) <= wrap_width:
            return False
    # Checked last: the cheap tests above settle most line pairs.
    return not (_STRUCTURAL_LINE.search(line) or _STRUCTURAL_LINE.search(next_line))


def _row(line: str, row: re.Pattern[str]) -> bool:
    """Whether ``line`` is a record's row (:mod:`tpc_core.segmentation.records`: a table's cells' bars, not a special
    token's)."""
    if row.match(line) is None:
        return False
    return "<|" not in line or row.match(_BAR_TOKEN.sub("", line)) is not None


def _paragraphs(text: str) -> Iterator[list[tuple[int, int]]]:
    """Yield runs of lines with no blank line between them, as ``(start, end)`` line spans."""
    run: list[tuple[int, int]] = []
    previous_end = 0
    for match in _LINE.finditer(text):
        start, end = match.span()
        gap = text[previous_end:start]
        # Two or more breaks between lines ("\r\n" is one) hide an empty line: a paragraph boundary.
        if run and (len(gap) > 1 and gap != "\r\n"):
            yield run
            run = []
        if match.group().isspace():
            if run:
                yield run
            run = []
        else:
            run.append((start, end))
        previous_end = end
    if run:
        yield run


def units(text: str, *, sentences: bool, join_wrapped_lines: bool) -> Iterator[tuple[int, int, bool]]:
    """Yield ``(start, end, is_prose)`` units of ``text``: joined prose lines, or single verbatim lines.

    Args:
        text: The whole text.
        sentences: ``False`` makes every non-blank line a verbatim unit (the ``"line"`` splitter).
        join_wrapped_lines: Join soft-wrapped prose lines into one unit.
    """
    in_fence = False
    rules = record_lines()
    for run in _paragraphs(text):
        if not sentences:
            yield from ((start, end, False) for start, end in run)
            continue
        lines = [text[start:end] for start, end in run]
        width = functools.cache(lambda lines=lines: max(len(line.rstrip()) for line in lines))
        unit: list[int] | None = None  # [start, end] of the prose unit being built
        previous = ""  # the unit's last line
        for (start, end), line in zip(run, lines):
            fence = rules.fence.match(line) is not None
            if in_fence or fence or _row(line, rules.row):
                in_fence ^= fence
                if unit is not None:
                    yield unit[0], unit[1], True
                    unit = None
                yield start, end, False
            elif unit is not None and join_wrapped_lines and _continues(previous, line, width):
                unit[1] = end
            else:
                if unit is not None:
                    yield unit[0], unit[1], True
                unit = [start, end]
            previous = line
        if unit is not None:
            yield unit[0], unit[1], True


def unit_cuts(text: str, start: int, end: int, find_starts: StartFinder) -> list[int]:
    """Cut positions of one prose unit: its bounds plus the backend's and the CJK sentence starts."""
    unit = text[start:end]
    if not _MAY_END_INSIDE.search(unit):
        return [start, end]
    # Same-length copy: every offset the backend reports is an offset into the original text.
    unit = _LINE_BREAK.sub(" ", unit)
    size = len(unit)
    cuts = {cut for cut in find_starts(unit) if 0 < cut < size}
    cuts.update(match.end() for match in _CJK_END.finditer(unit) if match.end() < size)
    return [start, *(start + cut for cut in sorted(cuts)), end]
