"""How a request is written (the request-style axis), the instructions around it (the instructions axis), and the
lines of prompts that ask nothing.

**What is labelled as the request.** The sentence(s) that name what to find, answer or verify: a question in any
form (labelled or not, lower case, with or without a question mark, a search query), an imperative that names
what to find ("Tell me when ..."), a claim to check together with its verdict question ("... True or false?",
"Verify: ..."), and a multiple-choice stem with its options. **Not** the request: a field label or wrapper
("Question:", "Statement:"), a role-play opening ("You are a travel agent. A customer writes:"), a backstory
sentence before the question, greetings, format-only instructions ("Answer in one word.", "Cite the passage"),
system rules, and lines that ask for the whole text (a summary, a label from a fixed set, a conversion): those
name nothing to look for, so prompts made of them have no request span.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synthesis.parts import FORMAT_INSTRUCTIONS, ROLES, Piece

__all__ = ["INSTRUCTIONS", "NO_REQUEST_KINDS", "REQUEST_STYLES", "clean_request", "no_request_line",
           "request_pieces", "with_instructions"]

REQUEST_STYLES: tuple[str, ...] = ("labelled", "plain", "casual", "search_query", "imperative", "polite",
                                   "claim_supported", "claim_true_false", "verify", "role_play", "multiple_choice",
                                   "backstory_then_ask")
INSTRUCTIONS: tuple[str, ...] = ("none", "format_after", "format_before", "numbered", "system_rules")
NO_REQUEST_KINDS: tuple[str, ...] = ("bare", "summary", "whole_text", "label_chat")

_FIRST_STEPS = ("Read the material.", "Use only the sources given.", "Skim every document first.",
                "Read the whole text before answering.")
_AUX = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.IGNORECASE)


def _stem(row: Mapping[str, Any]) -> str:
    """The row's question without its options (BAMBOO multiple choice keeps them in ``meta``)."""
    meta = row.get("meta") or {}
    return str(meta.get("question_only") or row["question"]).strip()


def _written(question: str) -> str:
    text = question.strip().rstrip("?").strip()
    return f"{text[:1].upper()}{text[1:]}?"


def _casual(question: str) -> str:
    text = question.strip().rstrip("?").strip()
    return text[:1].lower() + text[1:] if text[1:2].islower() or len(text) < 2 else text


def _clause(question: str) -> str:
    """A wh-question as an embedded clause (callers handle yes/no questions, which need inversion)."""
    text = _casual(question)
    return text


def _statement(row: Mapping[str, Any], rng: random.Random) -> str:
    """A claim about the material: one of the row's evidence sentences (clipped), else the answer stated."""
    sentences = [s for s in row.get("supporting_sentences") or [] if 6 <= len(s.split()) <= 60 and "\n" not in s]
    if sentences:
        return " ".join(rng.choice(sentences).split()[:35]).rstrip(" .;,")
    return f"the answer to the question {_clause(_stem(row))} is {str(row['answers'][0]).strip()}"


def _options(row: Mapping[str, Any]) -> list[str]:
    meta = row.get("meta") or {}
    options = meta.get("options")
    if isinstance(options, str):
        options = re.findall(r"'([A-H]\. [^']*)'", options)
    return [str(o).strip() for o in options or [] if str(o).strip()]


def request_pieces(style: str, row: Mapping[str, Any], rng: random.Random, *, one_line: bool = False) -> list[Piece]:
    """The request in ``style`` (one of :data:`REQUEST_STYLES`): pieces, the request ones flagged.

    Args:
        style: The request style.
        row: A QA row (``question``, ``answers``, ``supporting_sentences``, ``meta``).
        rng: Draws the wording.
        one_line: No line breaks and no double quotes (for key-value values, JSON strings and subject lines).

    Raises:
        ValueError: An unknown style, or ``multiple_choice`` for a row without options.
    """
    asked = _Asked(_stem(row), row, rng, one_line)
    if style not in _STYLES:
        raise ValueError(f"unknown request style {style!r}; expected one of {REQUEST_STYLES}")
    pieces = _STYLES[style](asked)
    return [(text.replace('"', "'") if one_line and flag else text, flag) for text, flag in pieces]


@dataclass(frozen=True)
class _Asked:
    """What a request style words: the row's question stem, the row, the draws, and whether it is one line."""

    question: str
    row: Mapping[str, Any]
    rng: random.Random
    one_line: bool

    @property
    def quote(self) -> str:
        return "'" if self.one_line else '"'


def _plain(asked: _Asked) -> list[Piece]:
    return [(_written(asked.question), True)]


def _casual_style(asked: _Asked) -> list[Piece]:
    greeting = asked.rng.choice(("", "", "hey ", "quick one: ", "hi, ", "so "))
    return [(greeting, False), (_casual(asked.question), True)]


def _search_query(asked: _Asked) -> list[Piece]:
    return [(_casual(asked.question).lower(), True)]


def _imperative(asked: _Asked) -> list[Piece]:
    question = asked.question
    rng = asked.rng
    if _AUX.match(_casual(question)):  # "were x and y ...": no clause without inversion
        lead = rng.choice(("Find out", "Check this", "Answer this", "Work this out"))
        return [(f"{lead}: {_casual(question) if rng.random() < 0.5 else _written(question)}", True)]
    verb = rng.choice(("Tell me", "Find out", "Explain", "Look up", "Work out", "State", "Identify"))
    return [(f"{verb} {_clause(question)}.", True)]


def _polite(asked: _Asked) -> list[Piece]:
    question = asked.question
    if _AUX.match(_casual(question)):
        lead = asked.rng.choice(("Could you check something for me:", "Quick question:", "Can you tell me this:"))
        return [(f"{lead} {_written(question)}", True)]
    form = asked.rng.choice(("Could you tell me {c}?", "Can you find out {c}?", "I'd like to know {c}.",
                             "Please check {c}.", "Would you mind looking up {c}?"))
    return [(form.format(c=_clause(question)), True)]


def _claim_supported(asked: _Asked) -> list[Piece]:
    form = asked.rng.choice(("Is this claim supported by the text: {s}?",
                             "Does the material support the claim that {s}?",
                             "Is the following statement backed up by the sources: {s}?"))
    return [(form.format(s=_statement(asked.row, asked.rng)), True)]


def _claim_true_false(asked: _Asked) -> list[Piece]:
    rng = asked.rng
    statement = _statement(asked.row, rng)
    if rng.random() < 0.5:
        return [(asked.quote, False), (f"{statement}.", True), (f"{asked.quote} ", False),
                (rng.choice(("True or false?", "true or false?")), True)]
    return [(rng.choice(("Statement: ", "Claim: ")), False),
            (f"{statement}. {rng.choice(('True or false?', 'Is it true?', 'Correct or not?'))}", True)]


def _verify(asked: _Asked) -> list[Piece]:
    form = asked.rng.choice(("Verify: {s}.", "Fact-check this: {s}.", "Please verify that {s}.",
                             "Check whether it is true that {s}."))
    return [(form.format(s=_statement(asked.row, asked.rng)), True)]


def _role_play(asked: _Asked) -> list[Piece]:
    role, asker = asked.rng.choice(ROLES)
    spoken = _written(asked.question) if asked.rng.random() < 0.5 else _casual(asked.question)
    return [(f"You are {role}. {asker}: {asked.quote}", False), (spoken, True), (asked.quote, False)]


def _multiple_choice(asked: _Asked) -> list[Piece]:
    options = _options(asked.row)
    if not options:
        raise ValueError(f"row {asked.row.get('id')} has no options for a multiple-choice request")
    separator = " " if asked.one_line else "\n"
    return [(_written(asked.question) + separator + separator.join(options), True)]


def _backstory_then_ask(asked: _Asked) -> list[Piece]:
    story = asked.rng.choice(("I'm putting together notes for a class and got stuck on one point.",
                              "My friend and I were arguing about this over dinner.",
                              "I was reading about this on the train this morning."))
    question = asked.question
    return [(f"{story} ", False), (_written(question) if asked.rng.random() < 0.6 else _casual(question), True)]


# Each request style's wording.
_STYLES: dict[str, Callable[[_Asked], list[Piece]]] = {
    "labelled": _plain, "plain": _plain, "casual": _casual_style, "search_query": _search_query,
    "imperative": _imperative, "polite": _polite, "claim_supported": _claim_supported,
    "claim_true_false": _claim_true_false, "verify": _verify, "role_play": _role_play,
    "multiple_choice": _multiple_choice, "backstory_then_ask": _backstory_then_ask,
}


def with_instructions(kind: str, pieces: Sequence[Piece], rng: random.Random, *,
                      one_line: bool = False) -> tuple[list[Piece], str | None]:
    """The request with format-only instructions around it (``kind`` in :data:`INSTRUCTIONS`), and system rules
    for the prompt's preamble (``system_rules``; else ``None``). The instructions are never request pieces."""
    first, second = rng.sample(FORMAT_INSTRUCTIONS, 2)
    if kind == "none":
        return list(pieces), None
    if kind == "format_after":
        return [*pieces, (f" {first}", False)], None
    if kind == "format_before":
        return [(f"{first} ", False), *pieces], None
    if kind == "numbered":
        if one_line:
            return [(f"1. {rng.choice(_FIRST_STEPS)} 2. ", False), *pieces, (f" 3. {first}", False)], None
        return [(f"Instructions:\n1. {rng.choice(_FIRST_STEPS)}\n2. ", False), *pieces, (f"\n3. {first}", False)], None
    if kind == "system_rules":
        return list(pieces), f"Rules: {first} {second}"
    raise ValueError(f"unknown instructions kind {kind!r}; expected one of {INSTRUCTIONS}")


def clean_request(pieces: Sequence[Piece]) -> str:
    """The request's own words: its pieces joined (what a task description should be)."""
    return " ".join(text.strip() for text, is_request in pieces if is_request and text.strip())


_SUMMARY_LINES = ("Summarise the material in three sentences.", "Give me a short overview of the text.",
                  "What are the main points here? Keep it brief.", "tl;dr please",
                  "Write a digest a busy reader can skim.", "can you summarize this for me")
_WHOLE_TEXT_LINES = ("Which area does this belong to: politics, health, technology or culture? Reply with one word.",
                     "Rate how formal the writing is, from 1 to 5. Output the number only.",
                     "Return a JSON object with the keys topic and audience for the text.",
                     "Put every person named in the text into a list, one per line.",
                     "Translate the text into French.", "Rewrite the text in plain English for a ten-year-old.",
                     "Fix the grammar and return the corrected text.", "Turn this into three bullet points.")
_BARE_LINES = ("", "", "FYI.", "See below.", "Forwarding this for the record.", "Notes from today.")


def no_request_line(kind: str, rng: random.Random) -> str:
    """The line a prompt that asks nothing carries where a request would be (may be ``""``)."""
    if kind == "summary":
        return rng.choice(_SUMMARY_LINES)
    if kind == "whole_text":
        return rng.choice(_WHOLE_TEXT_LINES)
    if kind in ("bare", "label_chat"):
        return rng.choice(_BARE_LINES)
    raise ValueError(f"unknown no-request kind {kind!r}; expected one of {NO_REQUEST_KINDS}")
