"""Where a prompt writes its request, read from its structure alone: chat turns, template labels, paragraphs.

The request finder decides two things apart. This module answers the first, **does the prompt ask, and where
can the request be?**, from structure a person can see: the latest user turn of a chat rendered with template
tokens, the text after a request label ("Question:", "Query:", "Instruction:", "### Task", "The original query is
as follows:"), a short last paragraph after the material that asks (a question, an instruction, a typed query),
or a short first paragraph before it. A bare document places nothing. The learned head then ranks sentences
only inside the place (:mod:`tpc_core.engine.task.finder`), and compression keeps the placed sentences verbatim
whatever their scores.

Pure functions over one document's text and its sentence spans; no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tpc_core.engine.task import layout
from tpc_core.engine.task.cues import addresses_reader, imperative_start, is_generic
from tpc_core.engine.values import ValueEnum
from tpc_core.segmentation import is_turn_marker
from tpc_core.segmentation.vocabulary import LabelUse, MarkerKind, label_names, read_marker

__all__ = ["PlaceKind", "RequestPlace", "beside_generic_ends", "place_request", "reads_as_request", "user_turn_range",
           "without_request_label"]

_INSTRUCTION_START = re.compile(
    r"^\W{0,3}(?:please\s+|kindly\s+|now,?\s+|then,?\s+|also,?\s+)?(?:summari[sz]e|write|generate|create|draft|"
    r"translate|rewrite|paraphrase|outline|discuss|analy[sz]e|review|critique|recommend|suggest|propose|"
    r"produce|compose|prepare|classify|rank|sort|convert|fix|complete|continue|read|give me|help me|based on|"
    r"using|given)\b", re.IGNORECASE)
# The start of retrieved material: "Document [1] (Title: ...)", "Passage 2:", "Title: ...", "[3]".
_MATERIAL_START = re.compile(r"^\W{0,3}(?:document|doc|passage|article|source|title|chunk|context|snippet)\b\s*"
                             r"(?:\[?\d+\]?|\(|:)|^\s*\[\d+\]", re.IGNORECASE)
# An empty turn left for the model's reply ("Assistant:", "### Response:"): not part of what the user wrote.
_REPLY_LABEL = re.compile(
    rf"^[ \t#*>_-]{{0,6}}(?:{'|'.join(label_names(LabelUse.SPEAKER, role='assistant'))})[*_]{{0,2}}[ \t]*:[ \t]*"
    r"(?P<rest>.*)$", re.IGNORECASE)
_GREETING = re.compile(r"^(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings)\b[^.?!\n]{0,40},?$",
                       re.IGNORECASE)
_USER_LABEL = re.compile(
    rf"^[ \t#*>_-]{{0,6}}(?:{'|'.join(label_names(LabelUse.SPEAKER, asks=True))})[*_]{{0,2}}[ \t]*:", re.IGNORECASE)
# A one-sentence preamble that only asks to read what follows.
_PREAMBLE = re.compile(r"^(?:please\s+|kindly\s+)?(?:read|see|consider|review|look at|here is|here are|below is|"
                       r"find)\b[^.?!\n]{0,60}[.:!]?$", re.IGNORECASE)
_MAX_PLACE_WORDS = 600
_MAX_TYPED_WORDS = 24
# A line that introduces content after a clause ("We have provided an existing answer: ...").
_CLAUSE_LABEL = re.compile(r"^[^:\n]{12,80}:[ \t]+\S")
# A line that gives the answer inside a labelled question's region: a worked example (few-shot material).
_ANSWERED = re.compile(r"^\W{0,4}(?:so,?\s+|therefore,?\s+|thus,?\s+|hence,?\s+)?(?:the\s+)?(?:final\s+|correct\s+)?"
                       r"answer(?:\s+is\b|\s*[:=])", re.IGNORECASE)


class PlaceKind(ValueEnum):
    """How a request was placed.

    Attributes:
        CHAT_TURN: The latest user turn of a chat rendered with template tokens (or the part of it that asks).
        LABEL: The region after an unanswered request label (the last one, and the first).
        LAST_BLOCK: The last paragraph after the material, which reads as a request.
        FIRST_BLOCK: The first paragraph before the material, which reads as a request.
        LAST_SENTENCE: Where nothing else is placed, the prompt's last sentence, a question in so many words (a
            question word or words to the reader, and a final question mark) after material in its own paragraph.
        ASKING: A sentence that asks the reader wherever it stands (inside a paragraph, in a note between documents,
            a lone question between documents: :func:`tpc_core.engine.task.asking.asking_sentences`).
    """

    CHAT_TURN = "chat_turn"
    LABEL = "label"
    LAST_BLOCK = "last_block"
    FIRST_BLOCK = "first_block"
    LAST_SENTENCE = "last_sentence"
    ASKING = "asking"


@dataclass(frozen=True)
class RequestPlace:
    """Where one document may write its request: one or more candidate places, in order of trust.

    Attributes:
        candidates: Each candidate's sentence indices (ascending) into the document's sentence spans. Every
            candidate is kept verbatim; the finder takes the request itself (the task description) from one.
        kinds: How each candidate was placed.
    """

    candidates: tuple[tuple[int, ...], ...]
    kinds: tuple[PlaceKind, ...]

    @property
    def sentences(self) -> tuple[int, ...]:
        """Every candidate's sentences, ascending: what compression keeps whatever their scores."""
        return tuple(sorted({k for candidate in self.candidates for k in candidate}))

    @property
    def kind(self) -> PlaceKind:
        """How the most trusted candidate was placed."""
        return self.kinds[0]


def reads_as_request(text: str) -> bool:
    """Whether a short passage reads as a request: a question mark, an instruction, words to the reader, or a
    query typed in lower case with no closing full stop.

    >>> reads_as_request("Summarize the obligations of the tenant."), reads_as_request("The tenant pays water.")
    (True, False)
    >>> reads_as_request("when did the nfl change to a 16 game schedule")
    True
    """
    body = " ".join(text.split())
    if not body:
        return False
    labelled = layout.REQUEST_LABEL.match(body) or _USER_LABEL.match(body)
    core = layout.ANY_LABEL.sub("", body, count=1) if labelled else body
    if _PREAMBLE.match(core):  # "Please read this first.": it asks to read, not for anything
        return False
    typed = layout.words(body) <= _MAX_TYPED_WORDS and body[-1].isalnum() and "://" not in body
    if "?" in body or _INSTRUCTION_START.match(core) or imperative_start(core):
        return True
    if layout.QUESTION_START.match(core) and typed:  # "when did the nfl change ...", not "When in the Course of ..., "
        return True
    sentence = re.split(r"(?<=[.!?])\s", body, maxsplit=1)[0]
    if addresses_reader(sentence) and layout.words(body) <= 80:
        return True
    return typed and core[:1].islower()


def _is_title(line: str) -> bool:
    """A heading: a short line in title case, or a short line that ends with no punctuation above a paragraph."""
    words = line.split()
    if not words or len(words) > 15:
        return False
    capitalised = sum(word[:1].isupper() for word in words if word[:1].isalpha())
    return (len(words) >= 2 and capitalised >= 0.6 * len(words)) or line.rstrip()[-1:].isalnum()


def without_request_label(text: str) -> str:
    """``text`` without a leading request label longer than a field name ("The original query is as follows:",
    "Now, the question I actually need answered:"): the request's own words.

    >>> without_request_label("The original query is as follows: who signed it?")
    'who signed it?'
    >>> without_request_label("Key: a1b2"), without_request_label("who signed it?")
    ('Key: a1b2', 'who signed it?')
    """
    if _INSTRUCTION_START.match(text) or imperative_start(text):  # "Summarize the task: ...": the request itself
        return text
    match = layout.REQUEST_LABEL.match(text)
    rest = (match.group("rest") or match.group("tagged") or "").strip() if match else ""
    return rest if rest else text


def _label_regions(lines: Sequence[layout.Line]) -> list[tuple[int, int]]:
    """The character ranges of the last and the first unanswered labelled requests (once when they are one): the
    template's label is one of them whether it comes before the material or after it."""
    found: list[tuple[int, int]] = []
    for number, line in enumerate(lines):
        match = layout.REQUEST_LABEL.match(line.text)
        if match is None or layout.ANSWER_LABEL.match(line.text):
            continue
        rest = (match.group("rest") or match.group("tagged") or "").strip()
        region = _labelled_region(lines, number, rest)
        words = layout.words(" ".join(x.text for x in region))
        labelled = rest or len(region) > 1
        if not _answered(lines, number, region) and words >= 1 and labelled and words <= _MAX_PLACE_WORDS:
            found.append((region[0].start, region[-1].end))
    return list(dict.fromkeys(found[-1:] + found[:1]))


def _labelled_region(lines: Sequence[layout.Line], number: int, rest: str) -> list[layout.Line]:
    """The lines of the request labelled on line ``number`` (``rest``: what follows its label on that line)."""
    region = [lines[number]]
    for position, following in enumerate(lines[number + 1:], number + 1):
        if following.block != region[-1].block and (rest or len(region) > 1):
            break
        if _is_option(lines, position):  # "A: ...", "B) ...": the choices of a multiple-choice request
            region.append(following)
            continue
        if layout.DELIMITER.match(following.text) or layout.ANSWER_LABEL.match(following.text) or \
                layout.REQUEST_LABEL.match(following.text):
            break
        cue = layout.ANY_LABEL.match(following.text)
        if cue is not None and (rest or len(region) > 1):
            if not following.text[cue.end():].strip():  # "Corresponding value:": the request's own last cue
                region.append(following)
            break
        if region[-1].text.rstrip().endswith("?") and _CLAUSE_LABEL.match(following.text):
            break  # a complete question, then the template's next line ("We have provided an existing answer: ...")
        region.append(following)
    return region


def _answered(lines: Sequence[layout.Line], number: int, region: Sequence[layout.Line]) -> bool:
    """Whether the request in ``region`` (from line ``number``) already has its answer written, inside the region or
    on the next line of its block."""
    if any(_ANSWERED.match(x.text) for x in region[1:]):
        return True
    after = lines[number + len(region)] if number + len(region) < len(lines) else None
    if after is None or after.block != region[-1].block:
        return False
    answer = layout.ANSWER_LABEL.match(after.text)
    return answer is not None and bool(answer.group("rest").strip())


def _is_option(lines: Sequence[layout.Line], position: int) -> bool:
    """Whether line ``position`` is a choice of a multiple-choice list (a neighbouring line is one too)."""
    if not layout.OPTION.match(lines[position].text):
        return False
    neighbours = [*lines[max(0, position - 1): position], *lines[position + 1: position + 2]]
    return any(layout.OPTION.match(line.text) and line.block == lines[position].block for line in neighbours)


def _strip_answer_lines(block: list[layout.Line]) -> list[layout.Line]:
    """A block without its trailing answer cue ("Answer:", "Summary:") left empty for the model to fill."""
    while block:
        answer = layout.ANSWER_LABEL.match(block[-1].text) or _REPLY_LABEL.match(block[-1].text)
        if answer is None or answer.group("rest").strip():
            break
        block = block[:-1]
    return block


def _has_words(blocks: Sequence[list[layout.Line]], at_least: int) -> bool:
    """Whether the blocks hold at least ``at_least`` words (counted until they do: material can be 30k tokens)."""
    count = 0
    for block in blocks:
        for line in block:
            count += len(line.text.split())
            if count >= at_least:
                return True
    return False


def _without_header(block: list[layout.Line]) -> list[layout.Line]:
    """A first paragraph without its header: a message's or a ticket's fields ("From: ...", "Status: Open",
    "Ticket #4821", "Description:") and a greeting ("Hi team,"), which open a message before its first words."""
    start = 0
    fields = 0
    while start < len(block):
        line = block[start].text.strip()
        field = (layout.ANY_LABEL.match(line) is not None and (layout.words(line) <= 8 or line.endswith(":"))) or \
            _GREETING.match(line) is not None
        if not (field or (layout.words(line) <= 3 and line[-1:] not in ".?!")):
            break
        fields += field
        start += 1
    return block[start:] if fields else block  # a title alone is no header: the paragraph under it is material


def _end_block(blocks: list[list[layout.Line]], *, last: bool) -> tuple[int, int] | None:
    """The last (or first) paragraph, when it reads as a request and material lies on the other side."""
    if len(blocks) < 2:
        return None
    ordered = list(reversed(blocks)) if last else blocks
    candidate: list[layout.Line] = []
    used = 0
    for block in ordered:
        used += 1
        candidate = _strip_answer_lines(block) if last else _without_header(block)
        if candidate:
            break
    if not candidate:
        return None
    text = layout.MARKUP.sub(" ", "\n".join(line.text for line in candidate)).strip()
    words = layout.words(text)
    if words == 0 or words > _MAX_PLACE_WORDS or not _has_words(ordered[used:], max(20, words)):
        return None
    lead = layout.MARKUP.sub(" ", candidate[0].text).strip()
    if not lead or _MATERIAL_START.match(lead) or (len(candidate) > 1 and _is_title(lead)):  # a passage under its title
        return None
    if layout.ANY_LABEL.match(lead) and not layout.REQUEST_LABEL.match(lead) and not _USER_LABEL.match(lead):
        return None  # a speaker's line in a transcript, a field of a record
    if layout.REQUEST_LABEL.match(lead):  # a labelled question: the label rule has judged it (answered: material)
        return None
    opening = re.split(r"(?<=[.!?])\s", lead, maxsplit=1)[0]
    if not reads_as_request(text if words <= 80 else opening):  # a long paragraph asks only if its opening does
        return None
    return candidate[0].start, candidate[-1].end


def _opens_user_turn(marker: str) -> bool:
    """Whether a marker opens a turn of the role named ``user`` (a chat template's token that names or implies it, a
    ``User:`` label)."""
    reading = read_marker(marker)
    return reading is not None and reading.kind is MarkerKind.OPEN and reading.role == "user"


def _template_token(marker: str) -> bool:
    """Whether a marker is a chat template's own token: a turn it opens is the prompt's, never quoted material."""
    reading = read_marker(marker)
    return reading is not None and not reading.label


def _latest_user_turn(sentences: Sequence[str]) -> tuple[int, int] | None:
    """``(first, last)`` sentence indices of the latest user turn's content, when a chat rendered with template
    tokens ends with it (an assistant turn left open after it is allowed)."""
    markers = [k for k, text in enumerate(sentences) if is_turn_marker(text)]
    if not markers:
        return None
    opens = [k for k in markers if _opens_user_turn(sentences[k])]
    if not opens:
        return None
    first = opens[-1] + 1
    last = first - 1
    for k in range(first, len(sentences)):
        if is_turn_marker(sentences[k]):
            break
        last = k
    tail = [k for k in range(last + 1, len(sentences)) if not is_turn_marker(sentences[k])]
    if last < first or tail:  # an empty turn, or an answered one
        return None
    return first, last


def place_request(text: str, spans: Sequence[tuple[int, int]]) -> RequestPlace | None:
    """Where ``text`` writes its request, or ``None`` when its structure shows none (a bare document).

    Candidates, in order of trust: in a chat that ends with a user turn (rendered with template tokens or speaker
    labels), the places inside that turn (its unanswered request labels, its last and first paragraphs where they
    read as a request, each line a paragraph in a turn with no blank line; a turn opened by a chat template's token,
    which always asks, else the whole turn, or its last paragraph when the turn is long); then, over the whole
    document, the last unanswered request label, the last paragraph after the material where it reads as a
    request, and the first paragraph before the material where it reads as a request; where none of these places
    anything, the last sentence where it asks in so many words. Overlapping candidates are kept once.

    Args:
        text: One document.
        spans: Its sentence spans (ascending, as the splitter gives them).
    """
    if not spans or not text.strip():
        return None
    sentences = [text[s:e] for s, e in spans]
    regions: list[tuple[tuple[int, int], PlaceKind]] = []
    turn = _latest_user_turn(sentences)
    if turn is not None:
        start = spans[turn[0]][0]
        end = spans[turn[1]][1]
        turn_lines = layout.lines(text, start, end)
        if len({line.block for line in turn_lines}) == 1:  # a turn with no blank line: each line is a paragraph
            turn_lines = [layout.Line(line.start, line.end, line.text, number)
                          for number, line in enumerate(turn_lines)]
        inside = _regions(turn_lines, first=True)
        if not inside and _template_token(sentences[turn[0] - 1]):
            blocks = layout.blocks(layout.lines(text, start, end))
            whole = layout.words(text[start:end]) <= _MAX_PLACE_WORDS or len(blocks) < 2
            inside = [((start, end) if whole else (blocks[-1][0].start, blocks[-1][-1].end), PlaceKind.CHAT_TURN)]
        regions += inside
    regions += _regions(layout.lines(text), first=True)
    if not regions:
        regions += _last_sentence(text, spans, sentences)
    candidates: list[tuple[int, ...]] = []
    kinds: list[PlaceKind] = []
    for (region_start, region_end), kind in regions:
        chosen = tuple(k for k in layout.sentences_in(spans, region_start, region_end)
                       if not is_turn_marker(sentences[k]))
        if chosen and not any(set(chosen) & set(other) for other in candidates):
            candidates.append(chosen)
            kinds.append(kind)
    return RequestPlace(tuple(candidates), tuple(kinds)) if candidates else None


def _left_for_reply(sentence: str) -> bool:
    """Whether a sentence is a turn marker, a reply label or an empty answer cue: nothing the user asks."""
    if is_turn_marker(sentence) or _REPLY_LABEL.match(sentence.strip()):
        return True
    answer = layout.ANSWER_LABEL.match(sentence.strip())
    return answer is not None and not answer.group("rest").strip()


def _last_sentence(text: str, spans: Sequence[tuple[int, int]], sentences: Sequence[str],
                   ) -> list[tuple[tuple[int, int], PlaceKind]]:
    """The prompt's last sentence, where it is a question in so many words (a question word or words to the reader,
    and a final question mark) after material in the same paragraph: "... Bread is made from flour. Which river
    flows through Rome?"."""
    last = len(sentences) - 1
    while last >= 0 and _left_for_reply(sentences[last]):
        last -= 1
    if last < 1:
        return []
    sentence = " ".join(layout.MARKUP.sub(" ", sentences[last]).split())
    before = layout.Line(0, 0, " ".join(sentences[:last]), 0)
    if not sentence or layout.words(sentence) > 40 or not _has_words([[before]], 20):
        return []
    line = text[text.rfind("\n", 0, spans[last][0]) + 1: spans[last][1]].strip()
    if layout.ANY_LABEL.match(line) and not layout.REQUEST_LABEL.match(line) and not _USER_LABEL.match(line):
        return []  # a speaker's line in a transcript: the material's own question
    labelled = layout.REQUEST_LABEL.match(sentence) or _USER_LABEL.match(sentence)
    core = layout.ANY_LABEL.sub("", sentence, count=1) if labelled else sentence
    asks_here = sentence.endswith("?") and (layout.QUESTION_START.match(core) is not None or addresses_reader(sentence))
    return [(spans[last], PlaceKind.LAST_SENTENCE)] if asks_here else []


def _regions(lines: Sequence[layout.Line], *, first: bool) -> list[tuple[tuple[int, int], PlaceKind]]:
    """The label region, the last paragraph and (with ``first``) the first paragraph that place a request."""
    blocks = layout.blocks(lines)
    regions: list[tuple[tuple[int, int], PlaceKind]] = []
    regions += [(label, PlaceKind.LABEL) for label in _label_regions(lines)]
    last = _end_block(blocks, last=True)
    if last is not None:
        regions.append((last, PlaceKind.LAST_BLOCK))
    opening = _end_block(blocks, last=False) if first else None
    if opening is not None:
        regions.append((opening, PlaceKind.FIRST_BLOCK))
    return regions


def user_turn_range(text: str, spans: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """The character range of the latest user turn's content, when a chat rendered with template tokens ends with
    it (:func:`place_request` reads its places there first); ``None`` otherwise."""
    sentences = [text[s:e] for s, e in spans]
    turn = _latest_user_turn(sentences)
    return None if turn is None else (spans[turn[0]][0], spans[turn[1]][1])


def beside_generic_ends(text: str, spans: Sequence[tuple[int, int]],
                        within: tuple[int, int] | None = None) -> list[tuple[tuple[int, int], PlaceKind]]:
    """The paragraph beside a first or last paragraph that asks for nothing in particular ("Please answer based on
    the above.", "Answer concisely.", "Thanks!"): the request written next to it, where that paragraph reads as a
    request and material lies on its other side (up to two generic paragraphs are passed over)."""
    low, high = within if within is not None else (0, len(text))
    blocks = layout.blocks(layout.lines(text, low, high))
    regions: list[tuple[tuple[int, int], PlaceKind]] = []
    for kind, last in ((PlaceKind.LAST_BLOCK, True), (PlaceKind.FIRST_BLOCK, False)):
        rest = list(blocks)
        for _ in range(2):
            end = _strip_answer_lines(rest[-1]) if last and rest else (rest[0] if rest else [])
            if not end or not is_generic(layout.MARKUP.sub(" ", " ".join(line.text for line in end))):
                break
            rest = rest[:-1] if last else rest[1:]
            region = _end_block(rest, last=last)
            if region is not None:
                regions.append((region, kind))
                break
    return regions
