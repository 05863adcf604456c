"""Prompt layouts composed from independent factors, for measuring where the request finder generalises.

A **family** is one combination of four factors: where the question stands (:data:`POSITIONS`), whether a generic
instruction that only points at it opens or closes the prompt (:data:`POINTERS`), how it is labelled
(:data:`LABELS`), and the container (:data:`CONTAINERS`). Every prompt also carries one distractor in its material
(questions the material asks itself: an FAQ, an interview, a quoted e-mail, a solved example) and, in a share of
prompts, the question typed in lower case with no question mark. Wordings (pointers, the words around a question
asked inside a paragraph) are composed from small word lists, each split into a part for choosing and a held-out
part, so a held-out family also meets wordings no choice saw (:func:`held_out_family`).

``compose(family, question, material, rng)`` gives the prompt and the question's exact text as written in it.
Wordings are written here, not taken from any evaluation set.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass

__all__ = ["CONTAINERS", "Composed", "Family", "LABELS", "POINTERS", "POSITIONS", "compose", "families",
           "held_out_family", "seen_family"]

POSITIONS = ("first_line", "top_paragraph", "mid_paragraph", "middle_paragraph", "after_material",
             "user_turn_before", "user_turn_after", "note_between", "wrapped_closing")
POINTERS = ("none", "closing", "opening")
LABELS = ("none", "hash", "bold", "tag", "q")
CONTAINERS = ("plain", "chat", "email", "markdown")

# Each wording list: (for families choices may look at, for held-out families). The held-out wordings are new: no
# choice has read a prompt written with them.
_VERBS = (("Now answer", "Please respond to", "Reply to", "Address", "Go ahead and deal with"),
          ("Kindly take care of", "Work through", "Get back to me on"))
_NAMES = (("the question", "the query", "my request", "it", "what I asked"), ("my enquiry", "the ask", "this one"))
_BEFORE = (("above", "from earlier", "", "I wrote before"), ("further up", "I wrote earlier on"))
_AFTER = (("below", "that follows", "coming next"), ("further down", "at the end of this message"))
# Words around a question asked inside a paragraph.
_FRAMES = (("I have a question: {q}", "Quick question: {q}", "My question is this: {q}",
            "Something I want to know: {q}", "One thing I am unsure about: {q}", "Here is what I need: {q}"),
           ("What I'm trying to find out: {q}", "I was wondering: {q}", "Could you help me with this: {q}"))
# A short note to the reader between two documents, around the question.
_NOTES = (("A quick note before the remaining files. {q} The other documents are attached below.",
           "Before you read on: {q} The rest of the notes follow."),
          ("Pausing here for a second. {q} More pages are pasted after this.",
           "Side note from me: {q} Remaining material below."))
# A closing paragraph that wraps the question between instructions.
_WRAPS = (("First read the material above; then answer in one short phrase: {q} Give only the answer.",
           "Go through the notes, and then tell me, briefly: {q} Answer in at most ten words."),
          ("Having read all of it, please reply in a few words: {q} Keep it to one line.",
           "Look over everything first. After that, answer this: {q} No explanation needed."))
_LABEL_WORDS = (("Question", "Query", "Request"), ("Ask", "Question for you"))
_SYSTEM = ("You are a helpful assistant.", "You answer from the material you are given.")
_INTRO = ("Here is the material:", "The notes are pasted below.", "Background follows.")
_DISTRACTORS = (
    "Frequently asked questions\nQ: How do I cite this page?\nA: Use the title and the date.\n"
    "Q: Who maintains these notes?\nA: The editorial team.",
    "Interviewer: What drew you to this subject in the first place?\nGuest: Mostly curiosity, and a good teacher.",
    "> On Monday, Alex wrote:\n> Could you send me the final figures by Friday? Thanks.",
    "Worked example. Question: What is 12 plus 30?\nAnswer: 42.",
    "Ms. Kwan: This year will I have to give you, what was it, another 14 detentions?\nMr. Dale: Only if you must.",
    "So here is the essential question: who pays when the weather turns?",
)


@dataclass(frozen=True)
class Family:
    """One combination of the factors."""

    position: str
    pointer: str
    label: str
    container: str

    @property
    def name(self) -> str:
        """``position/pointer/label/container``."""
        return f"{self.position}/{self.pointer}/{self.label}/{self.container}"


@dataclass(frozen=True)
class Composed:
    """A composed prompt and the question as written in it (the text a kept check looks for)."""

    prompt: str
    question: str
    family: Family


def families() -> list[Family]:
    """Every valid family: a question in a user turn needs a chat (template tokens or speaker labels: ``chat`` or
    ``plain``); a label stands on its own line, so a question inside a paragraph has none (it has its words)."""
    found = []
    for position, pointer, label, container in itertools.product(POSITIONS, POINTERS, LABELS, CONTAINERS):
        if position.startswith("user_turn") and container not in ("chat", "plain"):
            continue
        if position in ("mid_paragraph", "note_between", "wrapped_closing") and label != "none":
            continue
        found.append(Family(position, pointer, label, container))
    return found


def seen_family(family: Family, share: float = 0.3) -> bool:
    """Whether a family is one a former choice read failures from (a fixed draw by its bare name): never held out."""
    return hashlib.sha256(family.name.encode()).digest()[0] / 256 < share


def held_out_family(family: Family, share: float = 0.3) -> bool:
    """Whether a family is held out of every choice: a fixed draw by its salted name, among the families no former
    choice read (:func:`seen_family`)."""
    digest = hashlib.sha256(f"held-out:{family.name}".encode()).digest()
    return digest[0] / 256 < share and not seen_family(family)


def _pick(pools: tuple[tuple[str, ...], tuple[str, ...]], rng: random.Random, held_out: bool) -> str:
    return rng.choice(pools[1] if held_out else pools[0])


def _pointer(kind: str, rng: random.Random, held_out: bool) -> str:
    place = _pick(_BEFORE if kind == "closing" else _AFTER, rng, held_out)
    text = f"{_pick(_VERBS, rng, held_out)} {_pick(_NAMES, rng, held_out)} {place}".strip()
    return text + "."


def _labelled(question: str, label: str, rng: random.Random, held_out: bool) -> str:
    word = _pick(_LABEL_WORDS, rng, held_out)
    return {"none": question, "hash": f"### {word}\n{question}", "bold": f"**{word}:** {question}",
            "tag": f"<{word.lower()}>{question}</{word.lower()}>", "q": f"Q: {question}"}[label]


def _in_paragraph(blocks: list[str], asked: str) -> list[str]:
    """``asked`` inside the middle paragraph, after its first sentence."""
    blocks = list(blocks)
    middle = len(blocks) // 2
    text = blocks[middle]
    cut = text.find(". ")
    blocks[middle] = f"{text[:cut + 1]} {asked} {text[cut + 2:]}" if cut > 0 else f"{text} {asked}"
    return blocks


def _body(family: Family, asked: str, blocks: list[str]) -> list[str]:
    """The paragraphs of the prompt, question placed, before the container wraps them."""
    position = family.position
    if position == "first_line":
        return [f"{asked}\n{blocks[0]}", *blocks[1:]]
    if position in ("top_paragraph", "user_turn_before"):
        return [asked, *blocks]
    if position == "mid_paragraph":
        return _in_paragraph(blocks, asked)
    if position == "note_between":
        middle = max(1, len(blocks) // 2)
        return [*blocks[:middle], asked, *blocks[middle:]]
    if position == "middle_paragraph":
        middle = len(blocks) // 2
        return [*blocks[:middle], asked, *blocks[middle:]]
    return [*blocks, asked]


def compose(family: Family, question: str, material: str, rng: random.Random) -> Composed:
    """``question`` asked over ``material`` in ``family``; a third of questions typed in lower case with no "?".

    Raises:
        ValueError: An invalid family (see :func:`families`).
    """
    if family not in families():
        raise ValueError(f"invalid family {family.name}")
    held_out = held_out_family(family)
    if rng.random() < 0.33:  # typed in lower case; with no "?" where it stands on its own line
        question = question[:1].lower() + question[1:]
        inside = family.position in ("mid_paragraph", "note_between", "wrapped_closing")
        question = question if inside else question.rstrip("?").rstrip()
    frames = {"mid_paragraph": _FRAMES, "note_between": _NOTES, "wrapped_closing": _WRAPS}.get(family.position)
    asked = (_pick(frames, rng, held_out).format(q=question) if frames is not None
             else _labelled(question, family.label, rng, held_out))
    blocks = [block for block in material.split("\n\n") if block.strip()]
    paragraphs = _body(family, asked, blocks)
    paragraphs.insert(rng.randint(1, max(1, len(paragraphs) - 1)), rng.choice(_DISTRACTORS))
    if family.position == "user_turn_before":  # the question first, then the material introduced and pasted
        paragraphs.insert(1, rng.choice(_INTRO))
    if family.pointer == "closing":
        paragraphs.append(_pointer("closing", rng, held_out))
    elif family.pointer == "opening":
        paragraphs.insert(0, _pointer("opening", rng, held_out))
    return Composed(_container(family, paragraphs, rng), question, family)


def _container(family: Family, paragraphs: list[str], rng: random.Random) -> str:
    body = "\n\n".join(paragraphs)
    if family.position.startswith("user_turn"):
        if family.container == "chat":
            return (f"<|im_start|>system\n{rng.choice(_SYSTEM)}<|im_end|>\n<|im_start|>user\n{body}<|im_end|>\n"
                    f"<|im_start|>assistant\n")
        return f"System: {rng.choice(_SYSTEM)}\n\nUser: {body}\n\nAssistant:"
    if family.container == "chat":
        return (f"<|im_start|>system\n{rng.choice(_SYSTEM)}<|im_end|>\n<|im_start|>user\n{body}<|im_end|>\n"
                f"<|im_start|>assistant\n")
    if family.container == "email":
        return f"From: Dana Wu\nTo: research-desk\nSubject: {rng.choice(('Notes', 'Help please'))}\n\nHi team,\n\n" \
               f"{body}\n\nThanks,\nDana"
    if family.container == "markdown":
        return f"# Notes\n\n{body}\n\n---"
    return body
