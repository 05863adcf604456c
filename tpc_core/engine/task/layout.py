"""How a prompt's text is laid out, read from its characters: lines, paragraphs, labels and markup.

The shared vocabulary of request placement (:mod:`tpc_core.engine.task.placement`) and of the asking sentences
(:mod:`tpc_core.engine.task.asking`): the non-blank lines of a text with their paragraph numbers (:func:`lines`,
:func:`blocks`), the sentences inside a character range (:func:`sentences_in`), and the patterns of a request
label, an answer label, any ``Label:``, a delimiter line, a multiple-choice option, a question's first words and
chat-template markup. Pure functions and regular expressions; no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ANSWER_LABEL", "ANY_LABEL", "DELIMITER", "LINE", "MARKUP", "OPTION", "QUESTION_START", "REQUEST_LABEL",
           "WORD", "Line", "blocks", "lines", "sentences_in", "words"]

LINE = re.compile(r"[^\n\r\u2028\u2029]+")
WORD = re.compile(r"\w+")
# A label that introduces the request: "Question:", "### Query", "Your task:", "The original query is as follows:".
REQUEST_LABEL = re.compile(
    r"^[ \t#*>_\"'{,-]{0,8}(?:[A-Za-z][\w'-]*,?\s+){0,2}"
    r"(?:question|query|q|task|instruction|instructions|request|requested|prompt|user_request|need to know|"
    r"want to know|like to know)"
    r"(?:[ \t]*\d{0,3})\b(?P<tail>[^:\n]{0,25}):[ \t]*(?P<rest>.*)$|"
    r"^[ \t]*(?:\#{1,6}[ \t]*(?:[A-Za-z]+[ \t]+)?(?:question|query|task|instructions?|request|prompt|problem)"
    r"[ \t]*\W*[ \t]*$|<(?:question|query|user_request|request|instructions?|task)\b[^>]*>(?P<tagged>.*)$)",
    re.IGNORECASE)
# Labels that end a request's region: the answer's, the material's, or any other "Label:" line.
ANSWER_LABEL = re.compile(r"^[ \t#*>_-]{0,6}(?:(?:helpful|refined|final|short|your|the)\s+)?(?:answer|a|response|"
                           r"output|summary|result|reply|solution|completion)\b[^:\n]{0,12}:[ \t]*(?P<rest>.*)$",
                           re.IGNORECASE)
ANY_LABEL = re.compile(r"^[ \t#*>_-]{0,6}[A-Za-z][\w'-]*(?:[ \t]+[\w'-]+){0,3}[ \t]*:(?:[ \t]|$)")
DELIMITER = re.compile(r"^[ \t]*(?:-{3,}|={3,}|\*{3,}|_{3,}|~{3,}|`{3,}\w*|\"{3}|'{3}|#+)[ \t]*$")
# Words a written request opens with, beyond the head's imperative cues: what people ask a model to produce.
QUESTION_START = re.compile(r"^\W{0,3}(?:what|who|whom|whose|when|where|which|why|how|is|are|was|were|do|does|did|"
                             r"can|could|should|would|will|has|have|in which|according to)\b", re.IGNORECASE)
OPTION = re.compile(r"^[ \t]*\(?[A-Ha-h](?:[.):]|\\[A-Ha-h][.):])")
# Chat-template tokens and a closing tag on a request's line ("... game [/INST]", "...?<|im_end|>", "...</question>").
MARKUP = re.compile(r"<\|[^|<>\s]{1,30}\|>|\[/?INST\]|<</?SYS>>|</?s>|<(?:start|end)_of_turn>\w*|</[A-Za-z_][\w.-]*>")


@dataclass(frozen=True)
class Line:
    """One non-blank line: its character range, its text and its paragraph number."""

    start: int
    end: int
    text: str
    block: int  # paragraph number: blank lines and delimiter lines separate paragraphs


def lines(text: str, start: int = 0, end: int | None = None) -> list[Line]:
    """The non-blank lines of ``text[start:end]`` with their paragraph numbers."""
    end = len(text) if end is None else end
    lines: list[Line] = []
    block = 0
    previous_end = start
    for match in LINE.finditer(text, start, end):
        line = match.group()
        if not line.strip():
            continue
        gap = text[previous_end:match.start()]
        if lines and (gap.count("\n") + gap.count("\r") - gap.count("\r\n") > 1 or DELIMITER.match(lines[-1].text)):
            block += 1
        if DELIMITER.match(line):
            if lines:
                block += 1
            previous_end = match.end()
            lines.append(Line(match.start(), match.end(), line, block))
            continue
        lines.append(Line(match.start(), match.end(), line, block))
        previous_end = match.end()
    return lines


def words(text: str) -> int:
    """How many words ``text`` holds."""
    return len(WORD.findall(text))


def sentences_in(spans: Sequence[tuple[int, int]], start: int, end: int) -> list[int]:
    """Sentences that overlap ``[start, end)``."""
    return [k for k, (s, e) in enumerate(spans) if s < end and e > start]


def blocks(lines: Sequence[Line]) -> list[list[Line]]:
    """The paragraphs of ``lines`` (delimiter lines left out), each its lines in order."""
    blocks: list[list[Line]] = []
    for line in lines:
        if DELIMITER.match(line.text):
            continue
        if blocks and blocks[-1][-1].block == line.block:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return blocks


