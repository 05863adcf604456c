"""Sentences that ask the reader something wherever they stand, and questions that belong to the material.

Structure alone (:mod:`tpc_core.engine.task.placement`) places a request at a label, in the user's turn, or in a
first or last paragraph. People also ask elsewhere: inside a paragraph after words that announce a question ("I
have a question: can I ...?"), in the first person ("could you tell me ...?"), in a short note between the
documents they paste ("A quick note before the remaining files. How many days ...? The other documents are
attached below."), or in a paragraph of its own between two documents. :func:`asking_sentences` proposes those.

A question that is part of the material is not addressed to the reader, and is proposed by none of these rules:
a speaker's line of a transcript ("Ms. Kwan: ... another 14 detentions?"; a line labelled with a role the
vocabulary names, ``User:``, is a chat turn, not a speaker's line), an article's own question ("So here is the
essential question: ..."), an FAQ entry or a solved example (its answer follows), a quoted e-mail (``> ...``),
quoted speech and list items. :func:`unplaced_question` finds, for a prompt whose request was not placed, a
sentence outside the material that asks the reader (what the "may have missed" warning reports).

:func:`propose` gives the task finder (:mod:`tpc_core.engine.task.finder`) these candidates for a whole prompt, in
every document (inside the latest user turn where a chat ends with one), with the paragraph beside a generic first
or last line ("Please answer based on the above.", "Thanks!"): they are kept besides structure's places.

Pure functions over a document's text and its sentence spans (a segmented prompt for :func:`propose`); no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tpc_core.engine.task.cues import addresses_reader, is_generic, request_content
from tpc_core.engine.task.layout import (
    ANSWER_LABEL,
    ANY_LABEL,
    MARKUP,
    OPTION,
    QUESTION_START,
    REQUEST_LABEL,
    Line,
    sentences_in,
    words,
)
from tpc_core.engine.task.layout import blocks as paragraphs
from tpc_core.engine.task.layout import lines as text_lines
from tpc_core.engine.task.placement import PlaceKind, beside_generic_ends, reads_as_request, user_turn_range
from tpc_core.engine.values import Segmented
from tpc_core.segmentation import is_turn_marker
from tpc_core.segmentation.vocabulary import speaker_role

__all__ = ["Proposal", "asking_sentences", "material_question", "propose", "unplaced", "unplaced_question"]

# Words before a colon that say a question follows ("I have a question:", "Quick query:", "What I'd like to know:").
_ASK_CUE = re.compile(r"\b(?:question|questions|query|ask|asking|wondering|wonder|know|curious|unsure|unclear|"
                      r"confused|need)\b", re.IGNORECASE)
# A lead-in in the writer's own voice ("I", "my", "we") or put to the reader ("you"): not an article's own question.
_OWN_VOICE = re.compile(r"\b(?:i|i'm|i've|i'd|my|me|we|our|us|you|your)\b", re.IGNORECASE)
# A short lead-in with no article ("Quick question:", "One question for you:"), as a person writes it.
_SHORT_CUE = re.compile(r"^\W{0,3}(?:(?:quick|one|small|short|simple|brief|last|final|a)\s+)?(?:question|query)"
                        r"(?:\s+for\s+you)?\W{0,3}$", re.IGNORECASE)
# A question the writer asks about their own case, or asks the reader to answer.
_FIRST_PERSON_ASK = re.compile(
    r"(?:^|\W)(?:(?:can|could|should|may|must|do|did|am|would|will|shall)\s+(?:i|we)\b|"
    r"(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell|explain|help|check|confirm|let|find|give|clarify|"
    r"summari[sz]e|say|show|point|look|work)\b|i\s+(?:was\s+|am\s+|'m\s+)?wonder(?:ing)?\b)", re.IGNORECASE)
_QUOTED = re.compile(r"[\"\u201c\u201d]")
_LIST_ITEM = re.compile(r"^[ \t]*(?:\d{1,3}[.)]|[-*\u2022])[ \t]")
# A speaker's name at a line's start ("Ms. Kwan:", "DR. SMITH:", "Interviewer:", "John Lee:").
_SPEAKER = re.compile(r"^[ \t>*_-]{0,4}(?P<name>(?:(?i:mr|mrs|ms|miss|dr|prof|sen|rep|gov|judge|rev|sgt|capt|lt|col|"
                      r"gen|sir|dame|hon)\.?\s+)?[A-Z][\w'\u2019.-]*(?:\s+[A-Z][\w'\u2019.-]*){0,3})\s*:")
# Words a writer uses about the prompt itself: its documents, where they stand ("the files attached below").
_ABOUT_PROMPT = frozenset(
    "document documents doc docs file files attachment attachments attached enclosed below above following remaining "
    "pasted forwarded excerpt excerpts material materials notes text texts passage passages page pages".split())
_NOTE_WORDS = 90


def _line_start(text: str, start: int) -> str:
    """The text of ``start``'s line before it."""
    return text[text.rfind("\n", 0, start) + 1: start]


def material_question(text: str, start: int, end: int) -> bool:
    """Whether the sentence ``text[start:end]`` belongs to the material: on a speaker's line of a transcript (not a
    chat role the vocabulary names), a quoted e-mail's line, a list item or an option, in quotation marks, or a
    labelled line that is not a request ("Note: ..." is not a speaker).

    >>> text = "Ms. Kwan: Will I give you another 14 detentions?"
    >>> material_question(text, 10, len(text)), material_question("User: Who won?", 6, 14)
    (True, False)
    """
    prefix = (_line_start(text, start) + text[start:end]).lstrip()
    if prefix.startswith(">") or _LIST_ITEM.match(prefix) or OPTION.match(prefix) or _QUOTED.search(text[start:end]):
        return True
    if REQUEST_LABEL.match(prefix):
        return False
    speaker = _SPEAKER.match(prefix)
    if speaker is not None:
        name = speaker.group("name")
        return speaker_role(name) is None and not _ASK_CUE.search(name) and not _OWN_VOICE.search(name)
    label = ANY_LABEL.match(prefix)
    return label is not None and _ASK_CUE.search(label.group()) is None and _OWN_VOICE.search(label.group()) is None


def _answered(text: str, end: int) -> bool:
    """Whether the line after a question gives its answer ("A: ...", "Answer: 42"): an FAQ entry, a solved example."""
    following = text[end:end + 120].lstrip(" \t").split("\n")
    line = following[1] if following[:1] == [""] and len(following) > 1 else following[0]
    answer = ANSWER_LABEL.match(line)
    return answer is not None and bool(answer.group("rest").strip())


def _announced(sentence: str) -> bool:
    """Whether a sentence announces its question in the writer's own voice before a colon ("I have a question:
    ...", "Quick question: ...") and asks after it."""
    body = " ".join(MARKUP.sub(" ", sentence).split())
    head, colon, rest = body.partition(":")
    if not colon or not rest.strip() or words(head) > 8 or words(body) > 60 or not _ASK_CUE.search(head):
        return False
    voiced = _OWN_VOICE.search(head) is not None or _SHORT_CUE.match(head) is not None
    return voiced and reads_as_request(rest.strip())


def _first_person_question(sentence: str) -> bool:
    """Whether a sentence is a question the writer asks in the first person or asks the reader to answer."""
    body = " ".join(MARKUP.sub(" ", sentence).split())
    return body.endswith("?") and words(body) <= 60 and _FIRST_PERSON_ASK.search(body) is not None


def _asks_in_place(text: str, spans: Sequence[tuple[int, int]], k: int, block: Sequence[int]) -> bool:
    """Whether sentence ``k`` (of the paragraph ``block``) asks the reader in so many words: announced
    (:func:`_announced`), or a first-person question in a change of voice (the sentences beside it in its
    paragraph speak in no first or second person: a review's "Will I be charged for that?" is the material's)."""
    sentence = text[spans[k][0]:spans[k][1]]
    if _announced(sentence):
        return True
    if not _first_person_question(sentence):
        return False
    position = block.index(k)
    beside = [text[spans[j][0]:spans[j][1]] for j in block[max(0, position - 1):position + 2] if j != k]
    return not any(_OWN_VOICE.search(other) for other in beside)


def _about_prompt(sentence: str) -> bool:
    """Whether a sentence speaks about the prompt itself and nothing else ("A quick note before the remaining
    files.", "The other documents are attached below."): a word for its documents, at most two content words."""
    words = set(re.findall(r"[^\W_]+", sentence.lower()))
    return bool(words & _ABOUT_PROMPT) and len(request_content(sentence)) <= 2


def _asks(sentence: str) -> bool:
    """A question in so many words, short, with a question word or words to the reader."""
    body = " ".join(MARKUP.sub(" ", sentence).split())
    return body.endswith("?") and words(body) <= 40 and (QUESTION_START.match(body) is not None
                                                           or addresses_reader(body))


def _note_questions(text: str, spans: Sequence[tuple[int, int]], block: Sequence[Line]) -> list[int]:
    """The questions of a short note to the reader between documents: a paragraph of a few sentences, one of which
    speaks about the prompt's documents, one of which asks."""
    inside = sentences_in(spans, block[0].start, block[-1].end)
    if len(inside) < 2 or words(text[block[0].start:block[-1].end]) > _NOTE_WORDS:
        return []
    sentences = [text[spans[k][0]:spans[k][1]] for k in inside]
    if not any(_about_prompt(s) for s in sentences):
        return []
    return [k for k, s in zip(inside, sentences) if _asks(s) and not material_question(text, *spans[k])]


def asking_sentences(text: str, spans: Sequence[tuple[int, int]],
                     within: tuple[int, int] | None = None) -> list[int]:
    """The sentences of ``text`` that ask the reader wherever they stand, inside ``within`` (a character range;
    default the whole text): a sentence that asks the reader in so many words (:func:`_asks_in_place`), the
    questions of a short note between documents, a lone question in a paragraph of its own between two paragraphs
    of material when it is the only such paragraph (an FAQ or a quiz writes several), and the only question the middle
    paragraphs hold (a change of voice: material that asks several questions asks them itself). None of them
    belongs to the material (:func:`material_question`) or has its answer written after it.

    >>> text = "Rent is due monthly. I have a question: can I pay weekly? Late fees apply."
    >>> asking_sentences(text, [(0, 20), (21, 57), (58, 74)])
    [1]
    """
    low, high = within if within is not None else (0, len(text))
    found: set[int] = set()
    lone: list[int] = []
    questions: list[int] = []
    blocks = paragraphs(text_lines(text, low, high))
    for number, block in enumerate(blocks):
        inside = [k for k in sentences_in(spans, block[0].start, block[-1].end) if not is_turn_marker(
            text[spans[k][0]:spans[k][1]])]
        open_questions = [k for k in inside if not material_question(text, *spans[k])
                          and not _answered(text, spans[k][1])]
        found.update(k for k in open_questions if _asks_in_place(text, spans, k, inside))
        if 0 < number < len(blocks) - 1:  # between two paragraphs of material
            asked = [k for k in open_questions if _asks(text[spans[k][0]:spans[k][1]])]
            questions += asked
            found.update(k for k in _note_questions(text, spans, block) if k in open_questions)
            if len(inside) == 1 and asked:
                lone.append(inside[0])
    if len(lone) == 1:
        found.add(lone[0])
    if len(questions) == 1:  # the one question between the material's statements: a change of voice
        found.add(questions[0])
    return sorted(found)


def unplaced_question(text: str, spans: Sequence[tuple[int, int]], placed: Sequence[int] = ()) -> int | None:
    """The first sentence of ``text`` outside the material that asks the reader (a question with words to the
    reader or in the first person, not on a speaker's, quoted or list line, with no answer after it) and is not
    among ``placed``; ``None`` when there is none.

    >>> text = "Rent is due monthly.\\n\\nCan you tell me when it is due?"
    >>> unplaced_question(text, [(0, 20), (22, 53)]), unplaced_question(text, [(0, 20), (22, 53)], [1])
    (1, None)
    """
    taken = set(placed)
    for k, (start, end) in enumerate(spans):
        if k in taken:
            continue
        sentence = " ".join(MARKUP.sub(" ", text[start:end]).split())
        if not sentence.endswith("?") or words(sentence) > 60 or is_generic(sentence):
            continue
        if not (addresses_reader(sentence) or _FIRST_PERSON_ASK.search(sentence)):
            continue
        if not material_question(text, start, end) and not _answered(text, end):
            return k
    return None


@dataclass(frozen=True)
class Proposal:
    """One proposed place of the request.

    Attributes:
        sentences: Its flat sentence indices, ascending.
        kind: How it was proposed.
        material: Whether it stands inside the material (a sentence that asks mid-prompt): such proposals are kept
            within a share of the budget.
    """

    sentences: tuple[int, ...]
    kind: PlaceKind
    material: bool


def propose(prompt: Segmented) -> list[Proposal]:
    """Every proposed place of ``prompt``'s request, document by document (see the module's docstring). A chat
    that does not end with the user's turn proposes nothing: its turns, answered, are the material."""
    proposals: list[Proposal] = []
    offset = 0
    for document, spans in zip(prompt.documents, prompt.spans):
        within = user_turn_range(document, spans)
        if within is None and any(is_turn_marker(document[start:end]) for start, end in spans):
            offset += len(spans)
            continue
        for (start, end), kind in beside_generic_ends(document, spans, within):
            chosen = tuple(offset + k for k in sentences_in(spans, start, end)
                           if not is_turn_marker(document[spans[k][0]:spans[k][1]]))
            if chosen:
                proposals.append(Proposal(chosen, kind, material=False))
        for k in asking_sentences(document, spans, within):
            proposals.append(Proposal((offset + k,), PlaceKind.ASKING, material=True))
        offset += len(spans)
    return proposals


def unplaced(prompt: Segmented, placed: tuple[int, ...] = ()) -> tuple[int, int, int] | None:
    """``(document, start, end)``: the character offsets of the first sentence outside the material that asks the
    reader and is not among ``placed`` (flat indices), or ``None``
    (:func:`unplaced_question`)."""
    offset = 0
    for number, (document, spans) in enumerate(zip(prompt.documents, prompt.spans)):
        local = [k - offset for k in placed if offset <= k < offset + len(spans)]
        found = unplaced_question(document, spans, local)
        if found is not None:
            return number, spans[found][0], spans[found][1]
        offset += len(spans)
    return None
