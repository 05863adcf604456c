"""The written request's text: which sentences state it, and its own words without the wrapper around them.

Pure rules over sentence texts, no model: the leading label and markup of a sentence (:func:`sentence_core`),
the sentences a request head's probabilities pick (:func:`pick_request`), a multiple-choice request completed
with its stem and options (:func:`complete_request`), the request's words as a task description
(:func:`request_text`), and whether a request asks for a summary (:func:`asks_for_summary`). The patterns the
layout features share with these rules (:mod:`tpc_core.engine.task.request.features`) are public here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tpc_core.engine.task.turns import turn_text

if TYPE_CHECKING:
    import torch

__all__ = ["LEAD_MARKUP", "OPTION_MARKER", "REQUEST_CUE", "asks_for_summary", "complete_request", "pick_request",
           "request_text", "sentence_core", "without_trailing_markup"]

OPTION_MARKER = re.compile(r"^\s*\(?[A-Ha-h][.):]\s")
"""An option line of a multiple-choice question: "A. ...", "(b) ...", "C) ..."."""
# Wrapper-independent cues: the same request reads alike as "Question: ...", "<question>...</question>",
# '"question": "..."', "### Question" + a line, or "My question is: ...". Leading markup (tags, quotes, braces,
# heading and list marks) and one short leading label are peeled off before the request cues are looked for.
LEAD_MARKUP = re.compile(r"^(?:\s+|[\"'`{}\[\],>#*_=|~-]+|</?[A-Za-z][\w.-]*(?:\s[^<>]*)?>)+")
"""Leading markup of a sentence: whitespace, quotes, braces, heading and list marks, tags."""
REQUEST_CUE = re.compile(r"\b(?:question|questions|query|queries|task|instruction|instructions|request|ask|asked|input|"
                         r"problem|prompt|q)\b", re.IGNORECASE)
"""A word that names a request ("Question", "task", "instructions", "Q")."""
_KEY = re.compile(r"^[\"']?([A-Za-z][\w ]{0,40}?)[\"']?\s*[:=]\s*")
_TAG = re.compile(r"<\s*/?\s*([A-Za-z][\w.-]*)")
# Labels a description drops besides the cues: a speaker's ("User:", "### Human:") and a form's or ticket's field.
_SPEAKER_LABEL = re.compile(r"^[\s#*>_-]{0,6}(?:user|human|me|customer|client|prompter|system|assistant|ai|bot|model)"
                            r"[*_]{0,2}\s*:\s*", re.IGNORECASE)
_FIELD_LABEL = re.compile(r"\b(?:message|issue|subject|body|comment|comments|details|description|inquiry|enquiry|"
                          r"ticket|ask)\b", re.IGNORECASE)
_TRAIL_MARKUP = re.compile(r"(?:[\"'`{}\[\],]|</?[A-Za-z/][\w./-]*>|\[/?[A-Z]+\])$")


def sentence_core(sentence: str) -> tuple[str, str]:
    """``(label, rest)``: a sentence's leading label (a ``key:`` prefix of at most five words, and the names of
    the tags it opens with) and the text after that label and any leading markup.

    >>> sentence_core('",  "question": "who wrote it"')
    ('question', 'who wrote it"')
    >>> sentence_core("<question>who wrote it</question>")
    ('question question', 'who wrote it</question>')
    """
    text = sentence.strip()
    tags = " ".join(_TAG.findall(text[:60]))
    rest = LEAD_MARKUP.sub("", text)
    label = ""
    match = _KEY.match(rest)
    if match and len(match.group(1).split()) <= 5:
        label = match.group(1)
        rest = LEAD_MARKUP.sub("", rest[match.end():])
    return f"{label} {tags}".strip(), rest


def without_trailing_markup(sentence: str, *, keep_paired_quotes: bool = False) -> str:
    """The sentence without the closing tags, quotes, braces and ``[/INST]``-style marks at its end, peeled one
    piece at a time (linear in the sentence, never a backtracking regex over all of it).

    With ``keep_paired_quotes`` a closing quote stays where the text has an even number of that quote, so it
    closes a quotation of the text's own (``Key: "a1b2"``) rather than a wrapper's string.
    """
    text = sentence.rstrip()
    while text:
        tail = text[-40:]
        match = _TRAIL_MARKUP.search(tail)
        if match is None:
            break
        piece = match.group(0)
        if keep_paired_quotes and piece in ("\"", "'") and text.count(piece) % 2 == 0:
            break
        text = text[: len(text) - len(tail) + match.start()].rstrip()
    return text


def pick_request(probabilities: torch.Tensor, threshold: float, max_sentences: int,
                 neighbour_threshold: float | None = None) -> list[int]:
    """Indices (ascending) of the request sentences, or ``[]`` when no sentence reaches ``threshold``.

    At most ``max_sentences`` are taken, the most probable first; a question written twice (before and after
    the context) counts once per occurrence. With ``neighbour_threshold``, a sentence next to a picked one is
    taken too when it reaches that lower bar (and so on outwards): a request written over two sentences ("I need
    some information about X. Is it ...?") often has one sentence the head is sure of and one it is not.
    """
    if not len(probabilities) or float(probabilities.max()) < threshold:
        return []
    ranked = sorted(range(len(probabilities)), key=lambda i: (-float(probabilities[i]), i))
    picked = {i for i in ranked[:max_sentences] if float(probabilities[i]) >= threshold}
    if neighbour_threshold is not None:
        frontier = sorted(picked)
        while frontier and len(picked) < max_sentences:
            index = frontier.pop(0)
            for near in (index - 1, index + 1):
                if 0 <= near < len(probabilities) and near not in picked and len(picked) < max_sentences \
                        and float(probabilities[near]) >= neighbour_threshold:
                    picked.add(near)
                    frontier.append(near)
    return sorted(picked)


def complete_request(sentences: Sequence[str], picked: Sequence[int]) -> list[int]:
    """The picked sentences with the rest of a multiple-choice request they belong to: its option lines and its
    stem.

    A head that fires on an option line ("A. ...") would otherwise give the options without the question they
    answer, and one that fires on the stem would give the stem without its options. Where a picked sentence is
    an option, the whole run of option lines around it is added, and the sentence before the run (the stem);
    when that sentence is a short line that asks nothing itself ("Select all that apply.", "Question 1."), the
    one before it too. Where a picked sentence, or the short line after it, is followed by options, they are
    added.

    >>> complete_request(["Text.", "Question 1.", "Which of these is red?", "Select all that apply.",
    ...                   "A. ruby", "B. jade"], [4])
    [2, 3, 4, 5]
    """
    chosen = set(picked)
    options = [OPTION_MARKER.match(s) is not None for s in sentences]
    for index in sorted(picked):
        if options[index]:
            first = last = index
            while first > 0 and options[first - 1]:
                first -= 1
            while last + 1 < len(sentences) and options[last + 1]:
                last += 1
            chosen.update(range(first, last + 1))
            stem = first - 1
            if stem >= 0:
                chosen.add(stem)
                if stem > 0 and _asks_nothing(sentences[stem]) and not options[stem - 1]:
                    chosen.add(stem - 1)
        else:
            after = index + 1
            if after + 1 < len(sentences) and not options[after] and _asks_nothing(sentences[after]) \
                    and options[after + 1]:
                chosen.add(after)
                after += 1
            while after < len(sentences) and options[after]:
                chosen.add(after)
                after += 1
    return sorted(chosen)


def _asks_nothing(sentence: str) -> bool:
    """A short line that is no question itself: "Select all that apply.", "Question 1.", "Choose one."."""
    text = without_trailing_markup(sentence)
    return len(text.split()) <= 6 and not text.endswith(("?", ":"))


def request_text(sentences: Sequence[str], picked: Sequence[int]) -> str:
    """The picked sentences as a task description: the request's own words, each sentence without the wrapper
    around it, joined by spaces, each distinct text once (a repeated question is stated once).

    The wrapper is the prompt's format: chat-template tokens and anything of the next turn after them
    (:func:`tpc_core.engine.task.turns.turn_text`), a speaker's label ("User:", "### Human:"), leading and trailing
    markup (tags, quotes, braces, heading marks) and a leading label that names the request or its field
    ("Question:", ``"question":``, "My question is:", "Customer request:", "Message:"): the CSE compares the request
    itself. A label that is part of the request ("Key: ...") is kept. A picked label or marker alone contributes
    nothing; if every one is, the picked sentences that are not markers are used as written.

    >>> request_text(['  "question": "Who wrote it?"'], [0]), request_text(['Key: "a1b2"'], [0])
    ('Who wrote it?', 'Key: "a1b2"')
    >>> request_text(["User:", "when did it start?<|im_end|>", "A. 1909", "B. 1910"], [0, 1])
    'when did it start? A. 1909 B. 1910'
    """
    picked = complete_request(sentences, picked)
    seen: dict[str, None] = {}
    for index in picked:
        text = _SPEAKER_LABEL.sub("", turn_text(sentences[index]), count=1)
        label, rest = sentence_core(text)
        if not (label and (REQUEST_CUE.search(label) or _FIELD_LABEL.search(label))):
            rest = LEAD_MARKUP.sub("", text.strip())
        text = " ".join(without_trailing_markup(rest, keep_paired_quotes=True).split())
        if text:
            seen.setdefault(text, None)
    if not seen:
        written = [sentences[i] for i in picked if turn_text(sentences[i])] or [sentences[i] for i in picked]
        return " ".join(dict.fromkeys(" ".join(sentence.split()) for sentence in written))
    return " ".join(seen)


_SUMMARY_WORDS = re.compile(r"\b(?:summar\w*|overview|gist|main points|key points|tl;?dr|digest|recap|outline)\b",
                            re.IGNORECASE)


def asks_for_summary(request: str) -> bool:
    """Whether a written request asks for a summary of the whole text ("Summarise …", "the gist", "main points").

    A matched request of that kind keeps the coverage selection that prompts with no question get (cosine to
    "summarise" does not rank sentences); any other matched request (a question, a key to look up) is scored
    by relevance, like an extracted one.

    >>> asks_for_summary("Summarise the report in five bullet points."), asks_for_summary("What are the main points?")
    (True, True)
    >>> asks_for_summary("who plays sheila carter"), asks_for_summary('Key: "3180d3d4"')
    (False, False)
    """
    return bool(_SUMMARY_WORDS.search(request))

