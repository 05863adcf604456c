"""Compose a prompt from random parts, one draw per axis: the open-ended layout generator.

:data:`AXES` names every axis and its parts; a prompt is one draw from each, so the number of distinct layouts is
the product of the axes' sizes (effectively unbounded), not a list. Whole *parts* are held out
(:data:`HELD_OUT_PARTS`): a chat-template family (``gemma``), a key-value format (``yaml``), a document shell
(``ticket``) — the same families :data:`synthesis.layouts.HELD_OUT_LAYOUTS` holds out, so one notion of unseen
runs through the project — a wrapper vocabulary (``inquiry_excerpt``) and a request style
(``backstory_then_ask``). ``components="seen"`` never draws a held-out part; ``"held_out"`` forces one held-out
part on one axis drawn at random (the others drawn from all parts) and names in ``components["held_out"]`` every
held-out part the prompt shows; ``"all"`` draws from everything.

Deterministic for ``(seed, row id, index)``; pure Python, no model.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from synthesis.material import MATERIAL_QUESTIONS, excerpt, row_material, with_questions
from synthesis.parts import (
    CASINGS,
    DISTRACTOR_NOTES,
    HEADER_LINES,
    SYSTEM_PROMPTS,
    VOCABULARIES,
    Piece,
    header_line,
)
from synthesis.passages import PASSAGE_STYLES
from synthesis.requests import (
    INSTRUCTIONS,
    NO_REQUEST_KINDS,
    REQUEST_STYLES,
    clean_request,
    no_request_line,
    request_pieces,
    with_instructions,
)
from synthesis.shells import (
    CHAT_TEMPLATES,
    SHELL_FAMILIES,
    SHELL_POSITIONS,
    SHELLS,
    Slots,
    halves,
    material_escaped,
    one_line_request,
    render_shell,
)

__all__ = ["AXES", "HELD_OUT_PARTS", "LENGTHS", "Components", "Generated", "generate", "generate_without"]

Components = Literal["seen", "held_out", "all"]
#: Material length classes: (share of prompts, fewest words, most words).
LENGTHS: Mapping[str, tuple[float, int, int]] = {"short": (0.72, 80, 420), "medium": (0.18, 420, 650),
                                                 "long": (0.10, 900, 1500)}
_DISTRACTOR_PLACES = ("none", "none", "before", "after", "both")
AXES: Mapping[str, tuple[str, ...]] = {
    "shell": SHELLS, "vocabulary": tuple(VOCABULARIES), "casing": CASINGS, "header": tuple(HEADER_LINES),
    "position": tuple(dict.fromkeys(p for ps in SHELL_POSITIONS.values() for p in ps)),
    "distractor": DISTRACTOR_NOTES, "distractor_place": tuple(dict.fromkeys(_DISTRACTOR_PLACES)),
    "material_questions": MATERIAL_QUESTIONS, "request_style": REQUEST_STYLES, "instructions": INSTRUCTIONS,
    "system": SYSTEM_PROMPTS, "passage_style": (*PASSAGE_STYLES, "excerpt"), "length": tuple(LENGTHS),
    "no_request": NO_REQUEST_KINDS,
}
HELD_OUT_PARTS: Mapping[str, frozenset[str]] = {
    "shell": frozenset({"gemma", "yaml", "ticket"}), "vocabulary": frozenset({"inquiry_excerpt"}),
    "request_style": frozenset({"backstory_then_ask"}),
}
_SYSTEM_SHELLS = frozenset({*SHELL_FAMILIES["chat"], *SHELL_FAMILIES["key_value"], "markdown", "html", "xml", "plain"})
_LABEL_SHOWN = frozenset({*SHELL_FAMILIES["key_value"], "markdown", "html", "xml"})
_OWN_LABELS = frozenset({"ticket", "meeting", "memo", "code_comment"})  # shells that write their own request label


@dataclass(frozen=True)
class Generated:
    """One generated prompt.

    Attributes:
        prompt: The prompt text.
        request_spans: Character spans of the sentences that state the request (empty when it asks nothing).
        request: The request's own words (no template tokens, wrappers or field names): what a task description
            should be; ``""`` when it asks nothing.
        components: The part drawn on every axis, and ``held_out``: the held-out parts it shows (comma-separated).
        material: The material as written into the prompt, before any escaping.
        material_escaped: Whether the prompt holds the material JSON-escaped (JSON, some TOML).
        source_id: The QA row's or document's id.
        question: The row's question (``None`` for prompts that ask nothing).
        answers: The row's answers.
        evidence: The row's supporting sentences that the material holds.
        kind: ``"request"`` or ``"no_request_<kind>"``.
    """

    prompt: str
    request_spans: tuple[tuple[int, int], ...]
    request: str
    components: Mapping[str, str]
    material: str
    material_escaped: bool
    source_id: str
    question: str | None = None
    answers: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    kind: str = "request"
    extra: Mapping[str, Any] = field(default_factory=dict)


class _Draw:
    """Draws parts under a held-out mode, remembering the held-out parts it drew."""

    def __init__(self, rng: random.Random, mode: Components, forced: str | None) -> None:
        if mode not in ("seen", "held_out", "all"):
            raise ValueError(f"components must be 'seen', 'held_out' or 'all', got {mode!r}")
        self.rng = rng
        self.mode = mode
        self.forced = forced
        self.held: list[str] = []

    def __call__(self, axis: str, options: Sequence[str]) -> str:
        held = HELD_OUT_PARTS.get(axis, frozenset())
        if self.mode == "seen":
            options = [o for o in options if o not in held]
        elif self.mode == "held_out" and axis == self.forced:
            options = [o for o in options if o in held]
        choice = self.rng.choice(list(options))
        if choice in held:
            self.held.append(axis)
        return choice


def _forced_axis(rng: random.Random, mode: Components, axes: Sequence[str]) -> str | None:
    return rng.choice(list(axes)) if mode == "held_out" else None


def _length(rng: random.Random) -> tuple[str, int]:
    roll = rng.random()
    total = 0.0
    for name, (share, low, high) in LENGTHS.items():
        total += share
        if roll < total:
            return name, rng.randint(low, high)
    return "long", LENGTHS["long"][2]


def _position(shell: str, length: str, material: str, draw: _Draw, *, subject: bool = True) -> str:
    options = [p for p in SHELL_POSITIONS[shell] if (p != "between" or halves(material) is not None)
               and (p != "subject" or subject)]
    if length == "long" and "between" in options and draw.rng.random() < 0.6:
        return "between"  # long prompts mostly put the request in the middle
    return draw("position", options)


def _frame(draw: _Draw, shell: str) -> dict[str, Any]:
    """Header lines, distractors and system prompt, drawn."""
    rng = draw.rng
    header = rng.sample(list(HEADER_LINES), rng.choice((0, 0, 1, 2, 3, 4)))
    place = rng.choice(_DISTRACTOR_PLACES)
    notes = rng.sample(DISTRACTOR_NOTES, 2)
    system = rng.choice(SYSTEM_PROMPTS) if shell in CHAT_TEMPLATES and rng.random() < 0.6 else None
    return {"header": header, "place": place, "before": [notes[0]] if place in ("before", "both") else [],
            "after": [notes[1]] if place in ("after", "both") else [], "system": system}


def _components(shell: str, frame: Mapping[str, Any], **parts: str) -> dict[str, str]:
    family = next(name for name, names in SHELL_FAMILIES.items() if shell in names)
    notes = [*frame["before"], *frame["after"]]
    return {"shell": shell, "shell_family": family, "header": "+".join(frame["header"]) or "none",
            "distractor_place": frame["place"], "distractor": " | ".join(notes) or "none",
            "system": frame["system"] or "none", **parts}


def _rng(seed: int | str, source_id: str, index: int, mode: str) -> random.Random:
    return random.Random(f"{seed}:synthesis:{mode}:{source_id}:{index}")


def generate(row: Mapping[str, Any], *, seed: int | str, index: int = 0, components: Components = "all",
             pool: Sequence[Mapping[str, Any]] = ()) -> Generated:
    """A prompt that asks the row's question in randomly drawn parts.

    Args:
        row: A QA row (``id``, ``question``, ``answers``, ``context``, ``supporting_sentences``, ``meta``); a
            key-value lookup row (``Key: ...``) is rejected.
        seed: Seeds every draw (with the row id and ``index``).
        index: Draw another prompt from the same row.
        components: ``"seen"``, ``"held_out"`` or ``"all"`` (module docstring).
        pool: Rows whose questions may appear inside the material as distractor questions (the same split).

    Raises:
        ValueError: A key-value row, or an unknown ``components``.
    """
    if str(row["question"]).lstrip().startswith("Key:"):
        raise ValueError(f"row {row.get('id')} is a key-value lookup; the generator writes questions")
    rng = _rng(seed, str(row["id"]), index, components)
    draw = _Draw(rng, components, _forced_axis(rng, components, tuple(HELD_OUT_PARTS)))
    length, words = _length(rng)
    material, passage_style = row_material(row, words, rng)
    others = rng.sample(list(pool), min(8, len(pool))) if pool else []
    questions = [str(r["question"]).split("\n")[0] for r in others if r.get("id") != row.get("id")
                 and not str(r["question"]).startswith("Key:")]
    asked = draw("material_questions", MATERIAL_QUESTIONS)
    material = with_questions(material, asked, questions, rng)
    shell = draw("shell", [s for s in SHELLS if draw.forced != "vocabulary" or s not in _OWN_LABELS])
    vocabulary = draw("vocabulary", tuple(VOCABULARIES))
    styles = [s for s in REQUEST_STYLES if s != "multiple_choice" or (row.get("meta") or {}).get("options")]
    style = draw("request_style", styles)
    position = _position(shell, length, material, draw, subject=draw.forced != "vocabulary")
    one_line = one_line_request(shell, position)
    instructions = draw("instructions", INSTRUCTIONS)
    pieces, rules = with_instructions(instructions, request_pieces(style, row, rng, one_line=one_line), rng,
                                      one_line=one_line)
    frame = _frame(draw, shell)
    labelled = (style == "labelled" or (style not in ("casual", "search_query", "role_play", "backstory_then_ask")
                                        and rng.random() < 0.25) or draw.forced == "vocabulary") \
        and position != "subject"
    return _finish(shell, frame, rules, pieces, labelled, vocabulary, material, position, draw,
                   kind="request", source_id=str(row["id"]), question=str(row["question"]),
                   answers=tuple(str(a) for a in row.get("answers") or ()),
                   evidence=tuple(s for s in row.get("supporting_sentences") or ()
                                  if " ".join(s.split()) in " ".join(material.split())),
                   parts={"request_style": style, "instructions": instructions, "material_questions": asked,
                          "passage_style": passage_style, "length": length})


def generate_without(document_id: str, text: str, *, seed: int | str, index: int = 0,
                     components: Components = "all") -> Generated:
    """A prompt that asks nothing about a specific fact: a bare document, a summary or whole-text task with a
    fixed output format, or a few-shot labelling chat (``request_spans`` empty)."""
    rng = _rng(seed, document_id, index, components)
    draw = _Draw(rng, components, _forced_axis(rng, components, ("shell",)))  # no request: no label to vary
    length, words = _length(rng)
    material = excerpt(text, (), words, rng)
    shell = draw("shell", SHELLS)
    vocabulary = draw("vocabulary", tuple(VOCABULARIES))
    kinds = NO_REQUEST_KINDS if shell in CHAT_TEMPLATES else tuple(k for k in NO_REQUEST_KINDS if k != "label_chat")
    kind = draw("no_request", kinds)
    frame = _frame(draw, shell)
    parts = {"no_request": kind, "length": length, "passage_style": "excerpt", "material_questions": "none"}
    if kind == "label_chat":
        return _label_chat(shell, frame, material, draw, document_id, parts)
    line = no_request_line(kind, rng)
    position = _position(shell, length, material, draw)
    if position == "subject" and not line:
        position = "before"
    pieces: list[Piece] = [(line, False)] if line else []
    return _finish(shell, frame, None, pieces, False, vocabulary, material, position, draw,
                   kind=f"no_request_{kind}", source_id=document_id, parts=parts)


def _finish(shell: str, frame: Mapping[str, Any], rules: str | None, pieces: Sequence[Piece], labelled: bool,
            vocabulary: str, material: str, position: str, draw: _Draw, *, kind: str, source_id: str,
            parts: Mapping[str, str], question: str | None = None, answers: tuple[str, ...] = (),
            evidence: tuple[str, ...] = ()) -> Generated:
    """Lay the slots out in the shell and record what was drawn."""
    system = frame["system"]
    before = list(frame["before"])
    if rules:
        if shell in _SYSTEM_SHELLS:
            system = f"{system} {rules}" if system else rules
        else:
            before.insert(0, rules)
    casing = draw("casing", CASINGS)
    slots = Slots(request=tuple(pieces), labelled=labelled, vocabulary=VOCABULARIES[vocabulary], casing=casing,
                  material=material, position=position, header=tuple(header_line(n, draw.rng) for n in frame["header"]),
                  before=tuple(before), after=tuple(frame["after"]), system=system)
    prompt, spans = render_shell(shell, slots, draw.rng)
    vocabulary_shown = (labelled and shell not in _OWN_LABELS) or shell in _LABEL_SHOWN
    held = [axis for axis in dict.fromkeys(draw.held) if axis != "vocabulary" or vocabulary_shown]
    if draw.mode == "held_out" and not held:
        raise AssertionError(f"a held-out prompt shows no held-out part ({draw.forced})")  # a bug in the draws
    recorded = _components(shell, {**frame, "system": system or None, "before": before}, vocabulary=vocabulary,
                           vocabulary_shown=str(vocabulary_shown).lower(), casing=casing,
                           labelled=str(labelled).lower(), position=position, **parts)
    recorded["held_out"] = ",".join(f"{axis}={recorded[axis]}" for axis in held)
    return Generated(prompt, tuple(spans), clean_request(pieces), recorded, material,
                     material_escaped(shell, material), source_id, question, answers, evidence, kind)


_LABEL_SETS = (("easy", "hard"), ("yes", "no"), ("sport", "film", "science", "history", "other"),
               ("positive", "neutral", "negative"), ("fact", "opinion"))


def _label_chat(shell: str, frame: Mapping[str, Any], material: str, draw: _Draw, document_id: str,
                parts: Mapping[str, str]) -> Generated:
    """A few-shot labelling chat: a system line naming the labels, worked items, one more item to label."""
    rng = draw.rng
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", material) if 6 <= len(s.split()) <= 40] or [material[:300]]
    items = [rng.choice(sentences) for _ in range(rng.randint(3, 5))]
    labels = rng.choice(_LABEL_SETS)
    system = f"{rng.choice(('Label', 'Tag', 'Classify'))} every message with one of: {', '.join(labels)}."
    turns: list[tuple[str, list[Piece]]] = []
    for item in items[:-1]:
        turns += [("user", [(item, False)]), ("assistant", [(rng.choice(labels), False)])]
    turns.append(("user", [(items[-1], False)]))
    prompt = "".join(text for text, _ in CHAT_TEMPLATES[shell](system, turns))
    held = [axis for axis in dict.fromkeys(draw.held) if axis == "shell"]
    recorded = _components(shell, {**frame, "system": system, "before": [], "after": []}, vocabulary="none",
                           vocabulary_shown="false", casing="none", labelled="false", position="none", **parts)
    recorded["held_out"] = ",".join(f"{axis}={recorded[axis]}" for axis in held)
    return Generated(prompt, (), "", recorded, " ".join(items), False, document_id, kind="no_request_label_chat")
