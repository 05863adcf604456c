"""Requests written as instructions, numbered items, true/false statements, two sentences or a multiple-choice stem
with its options, in four everyday prompt shapes: data for the request head.

The CTD set's families mostly write the request as a labelled question. Real prompts also write it as an
instruction with no question mark ("Highlight the parts ... Details: ..."), a numbered true/false item, a role-play
("You are asked to act as ... and answer the question: ..."), a need stated before the question ("I need some
information about X. Is it ...?"), or a multiple-choice stem above its options. Each *family* below is one such
phrasing pattern with alternative wordings; whole families are held out (:data:`HELD_OUT_INSTRUCTION_FAMILIES`,
``split == "validation"``). Each record also has a *shape*: the request after the document, as a chat's last turn,
before the document, or after a worked few-shot example.

Wordings are written here, not taken from any evaluation set. Records are filled from rows the caller passes:
the request head trains on train rows only (``qa_dev`` train split, NQ train, ``summ_train`` for prompts with
no request; ``python -m training.curation.instruction_set``); the dev check (:mod:`benchmarks.request_found`)
fills the same families with ``qa_dev`` dev rows. The families live with the evaluation because they define what
the dev check measures; training builds its records from them.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synthesis.passages import format_passages, nq_passages

__all__ = ["HELD_OUT_INSTRUCTION_FAMILIES", "INSTRUCTION_FAMILIES", "NO_REQUEST_FAMILIES", "SHAPES", "Request",
           "instruction_records", "no_request_records", "request_of", "sample_context"]

SHAPES: tuple[str, ...] = ("after_document", "chat_last_turn", "question_first", "few_shot")


@dataclass(frozen=True)
class Request:
    """One written request: the text that states it, and text around it that is not part of it.

    Attributes:
        text: The request as written (its content is what a task description must keep).
        tail: An instruction after it that names no content ("Answer based on the document."), or ``""``.
        answer: A short answer, for the worked example of the few-shot shape.
    """

    text: str
    tail: str
    answer: str


_AUX = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.IGNORECASE)


def _clause(question: str) -> str:
    """A question as an embedded clause: "who sang x" -> "who sang x"; "Is x y?" -> "whether x y"."""
    text = question.strip().rstrip("?").strip()
    text = text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
    return f"whether {text}" if _AUX.match(text) else text


def _question(question: str) -> str:
    """A question with a capital and one question mark."""
    text = question.strip().rstrip("?").strip()
    return text[:1].upper() + text[1:] + "?"


def _topic(row: Mapping[str, Any]) -> str:
    """What a row is about: its NQ gold title, its first HotpotQA gold title, or the kind of document."""
    meta = row.get("meta") or {}
    if meta.get("gold_title"):
        return str(meta["gold_title"])
    if meta.get("gold_titles"):
        return str(meta["gold_titles"][0])
    source = str(row.get("source", ""))
    return next((noun for key, noun in (("paperqa", "this paper"), ("meetingqa", "this meeting"),
                                          ("altqa", "this article")) if key in source), "this topic")


def _noun(row: Mapping[str, Any]) -> str:
    source = str(row.get("source", ""))
    return next((noun for key, noun in (("paperqa", "paper"), ("meetingqa", "transcript"), ("altqa", "article"),
                                          ("hotpot", "text"), ("nq", "text")) if key in source), "document")


def _statement(row: Mapping[str, Any], rng: random.Random) -> str:
    """A statement about the document: one of the row's evidence sentences, clipped, without its full stop."""
    sentences = [s for s in row.get("supporting_sentences") or [] if 6 <= len(s.split()) <= 60]
    if not sentences:
        return ""
    words = rng.choice(sentences).split()[:35]
    return " ".join(words).rstrip(" .;,")


def _options(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> tuple[str, list[str]]:
    """A stem and its options: the row's own (BAMBOO multiple choice), or its answer among three of ``pool``'s."""
    meta = row.get("meta") or {}
    if meta.get("options") and meta.get("question_only"):
        return str(meta["question_only"]).strip(), [re.sub(r"^[A-Ha-h][.)]\s*", "", str(o)).strip()
                                                    for o in meta["options"]]
    gold = str(row["answers"][0]).strip()
    others = [str(r["answers"][0]).strip() for r in rng.sample(list(pool), min(12, len(pool)))]
    options = [gold, *[o for o in dict.fromkeys(others) if o and o.casefold() != gold.casefold()][:3]]
    rng.shuffle(options)
    return "", options


_LETTERS = "ABCDEFGH"


def _f_imperative(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    verb = rng.choice(("Tell me", "Find out", "Explain", "Identify", "Work out", "State", "Look up"))
    return Request(f"{verb} {_clause(row['question'])}.", rng.choice(("", "Use the text only.", "Be brief.")),
                   str(row["answers"][0]))


def _f_highlight(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    verb = rng.choice(("Highlight", "Mark", "Point out", "Quote"))
    detail = rng.choice(("Look for names, dates and numbers.", "Give the exact sentences, not a paraphrase.",
                         "Say so if nothing in it applies.", "Include the sentence before it if it is needed."))
    text = (f"{verb} the parts (if any) of this {_noun(row)} that tell us {_clause(row['question'])}. "
            f"Details: {detail}")
    return Request(text, "", str(row["answers"][0]))


def _f_please_describe(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    lead = rng.choice(("Please describe", "Please explain", "Kindly describe", "Please write down"))
    return Request(f"{lead} {_clause(row['question'])}{rng.choice(('.', ', in a sentence or two.', ' briefly.'))}",
                   "", str(row["answers"][0]))


def _f_numbered_true_false(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]],
                           rng: random.Random) -> Request:
    statement = _statement(row, rng) or f"The answer to \"{_clause(row['question'])}\" is {row['answers'][0]}"
    ask = rng.choice(("True or False?", "true or false?", "Is it true or false?"))
    tail = rng.choice(("Answer this question based on the world described in the document.",
                       "Answer based on the text above.", "Reply with True or False only."))
    return Request(f"{rng.randint(1, 12)}. {statement}, {ask}", tail, "True")


def _f_need_then_ask(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    need = rng.choice(("I need to get some more information about {t}.", "I am trying to learn more about {t}.",
                       "I have to find some details on {t}."))
    return Request(f"{need.format(t=_topic(row))} {_question(str(row['question']))}", "", str(row["answers"][0]))


def _f_mcq_select(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    stem, options = _options(row, pool, rng)
    stem = _question(stem) if stem else f"Which of the following answers the question: {_clause(row['question'])}?"
    mark = rng.choice(("{}. ", "{}) "))
    text = (f"Question {rng.randint(1, 9)}. {stem} {rng.choice(('Select all that apply.', 'Choose one.'))}\n"
            + "\n".join(mark.format(letter) + option for letter, option in zip(_LETTERS, options)))
    return Request(text, "", "A")


def _f_statement_label(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    statement = _statement(row, rng) or f"{row['answers'][0]} is the answer to {_clause(row['question'])}"
    lead = rng.choice(("Label the following statement as true or false.", "Mark this sentence TRUE or FALSE.",
                       "Say if the text backs this up or not."))
    return Request(f"{lead} {statement}.", "", "true")


def _f_lead_in_instruction(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    lead = rng.choice(("Background: I am new to {t}.", "Some context first: this is for a quiz on {t}.",
                       "I keep reading about {t}."))
    ask = rng.choice(("Please find {c}.", "Explain {c}.", "Work out {c}, with the line that says so."))
    return Request(f"{lead.format(t=_topic(row))} {ask.format(c=_clause(row['question']))}", "",
                   str(row["answers"][0]))


# Held-out families: other wordings of the same kinds, never trained on.
def _f_role_play(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    role = rng.choice(("a librarian", "a fact checker", "a history teacher", "an analyst", "a tour guide"))
    how = rng.choice(("Please describe it in plain words.", "Please describe how you found it.",
                      "Please describe the answer and where it is written."))
    clause = _clause(row["question"])
    return Request(f"You are asked to act as {role} and answer the question: {clause[:1].upper()}{clause[1:]}. "
                   f"{how}", "", str(row["answers"][0]))


def _f_claim_check(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    statement = _statement(row, rng) or f"{row['answers'][0]} is the answer to {_clause(row['question'])}"
    lead = rng.choice(("Decide whether this claim is supported by the document", "Check this statement against "
                       "the sources", "Verify the following claim"))
    return Request(f"{lead}: {statement}.", rng.choice(("Reply supported or unsupported.", "")), "supported")


def _f_context_then_ask(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    lead = rng.choice(("I'm preparing a briefing on {t} and one point is unclear.",
                       "My manager asked me about {t} this morning.", "We are writing a report that covers {t}."))
    ask = rng.choice(("Could you find out {c}.", "Can you check {c} for me.", "Let me know {c}."))
    return Request(f"{lead.format(t=_topic(row))} {ask.format(c=_clause(row['question']))}", "",
                   str(row["answers"][0]))


def _f_mcq_choose(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> Request:
    stem, options = _options(row, pool, rng)
    stem = _question(stem) if stem else _question(str(row["question"]))
    text = f"{rng.randint(1, 20)}) {stem}\n" + "\n".join(f"({letter.lower()}) {option}"
                                                         for letter, option in zip(_LETTERS, options))
    return Request(text, rng.choice(("Pick the one best answer.", "Give the letter only.")), "a")


Family = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], random.Random], Request]
INSTRUCTION_FAMILIES: Mapping[str, Family] = {
    "imperative": _f_imperative, "highlight_details": _f_highlight, "please_describe": _f_please_describe,
    "numbered_true_false": _f_numbered_true_false, "need_then_ask": _f_need_then_ask, "mcq_select": _f_mcq_select,
    "role_play": _f_role_play, "claim_check": _f_claim_check, "context_then_ask": _f_context_then_ask,
    "mcq_choose": _f_mcq_choose, "statement_label": _f_statement_label, "lead_in_instruction": _f_lead_in_instruction,
}
HELD_OUT_INSTRUCTION_FAMILIES: frozenset[str] = frozenset({"role_play", "claim_check", "context_then_ask",
                                                           "mcq_choose"})

# Prompts in the same shapes that write no request: a bare document, a request for the whole text's gist, or a
# label for the whole text (these name nothing to look for in it).
NO_REQUEST_FAMILIES: tuple[str, ...] = ("bare", "summary", "label")
_SUMMARY = ("Summarise the {noun} in three sentences.", "Please describe the main points of the {noun}.",
            "Give me a short overview of the {noun}.", "Write a brief digest of the text above.",
            "I need the gist of this {noun} for a meeting. Keep it short.", "Explain what the {noun} is about.",
            "Tell me the key takeaways of the {noun}.", "Please write a summary a busy reader can skim.")
_LABEL = ("Put the {noun} into one of these categories: news, opinion, science, finance, sport.",
          "Tag the {noun} with its tone: positive, neutral or negative.",
          "Which genre is this {noun}: report, interview, review or announcement? One word.",
          "Sort the {noun} into business, politics, technology or culture. Reply with the label only.")


_BARE_LINES = (("Thanks.", "(end of document)", "See above."), ("FYI.", "Notes for later:", "Forwarding this."))


def sample_context(row: Mapping[str, Any], rng: random.Random, styles: Sequence[str] = ("document",)) -> str:
    """The row's context; an NQ context cut to 3-8 of its passages (the gold one kept, in order), written in one
    of ``styles`` (:data:`synthesis.passages.PASSAGE_STYLES`; drawn with ``rng`` when there are several)."""
    passages = nq_passages(row)
    if not passages:
        return str(row["context"])
    gold = int((row.get("meta") or {}).get("gold_doc_index", 0))
    others = [i for i in range(len(passages)) if i != gold]
    keep = sorted([gold, *rng.sample(others, min(len(others), rng.randint(2, 7)))])
    style = rng.choice(tuple(styles)) if len(styles) > 1 else styles[0]
    return format_passages([passages[i] for i in keep], style)


def _example(pool: Sequence[Mapping[str, Any]], family: Family, rng: random.Random) -> tuple[str, str]:
    """A worked example for the few-shot shape: a short passage and its request, in the same family."""
    row = rng.choice(list(pool))
    passage = (row.get("supporting_sentences") or [str(row["context"])[:400]])[0]
    request = family(row, pool, rng)
    return passage, f"{request.text}\nAnswer: {request.answer}"


def _shape(shape: str, context: str, request: str, tail: str, rng: random.Random,
           example: tuple[str, str] | None = None) -> tuple[str, tuple[int, int]]:
    """The prompt in a shape, and the character span of ``request`` in it."""
    after = f"\n{tail}" if tail else ""
    if shape == "after_document":
        head = f"{context}\n\n"
        rest = after
    elif shape == "chat_last_turn":
        user, bot = rng.choice((("User", "Assistant"), ("Human", "AI"), ("<|user|>", "<|assistant|>")))
        head = (f"{user}: {rng.choice(('Here is the material.', 'Please read this first.', 'Some context:'))}\n\n"
                f"{context}\n\n{bot}: {rng.choice(('Got it. What would you like to know?', 'I have read it.'))}\n\n"
                f"{user}: ")
        rest = f"{after}\n\n{bot}:"
    elif shape == "question_first":
        head = ""
        rest = f"{after}\n\n{rng.choice(('Text:', 'Document:', 'Here is the text.', ''))}\n{context}".rstrip() + "\n"
    elif shape == "few_shot":
        passage, worked = example or ("", "")
        head = (f"{rng.choice(('Example:', 'Here is an example.', 'For instance:'))}\n{passage}\n{worked}\n\n"
                f"{rng.choice(('Now your turn.', 'Now the real one:', 'Your task:'))}\n{context}\n\n")
        rest = f"{after}\nAnswer:"
    else:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    return head + request + rest, (len(head), len(head) + len(request))


def request_of(record: Mapping[str, Any]) -> str:
    """The text of a record's written request(s), from its spans (``""`` when it writes none)."""
    return " ".join(record["prompt"][start:end] for start, end in record.get("request_spans") or [])


def instruction_records(rows: Sequence[Mapping[str, Any]], pool: Sequence[Mapping[str, Any]], *, seed: int,
                        families: Sequence[str], prefix: str, split_by_family: bool = True) -> list[dict[str, Any]]:
    """One record per row: the rows dealt evenly over ``families`` x :data:`SHAPES`, in a shuffled order.

    Args:
        rows: QA rows (``question``, ``answers``, ``context``; key-value rows are skipped).
        pool: Rows the few-shot examples and made-up options come from (the same split as ``rows``).
        seed: Seeds dealing and wording.
        families: Names in :data:`INSTRUCTION_FAMILIES`.
        prefix: Record id prefix.
        split_by_family: ``split`` is ``"validation"`` for held-out families (else always ``"train"``).

    Returns:
        Records like the CTD set's: ``id``, ``prompt``, ``family``, ``shape``, ``kind`` (``"instruction"``),
        ``split``, ``request_spans``, ``source_id``, ``task_description``.
    """
    unknown = set(families) - set(INSTRUCTION_FAMILIES)
    if unknown or not families:
        raise ValueError(f"unknown families {sorted(unknown)}; expected some of {sorted(INSTRUCTION_FAMILIES)}")
    rng = random.Random(f"{seed}:instructions:{prefix}")
    usable = [row for row in rows if not str(row["question"]).lstrip().startswith("Key:")]
    cells = [(family, shape) for family in families for shape in SHAPES]
    rng.shuffle(cells)
    records = []
    for number, row in enumerate(usable):
        family, shape = cells[number % len(cells)]
        wording = random.Random(f"{seed}:{prefix}:{row['id']}")
        request = INSTRUCTION_FAMILIES[family](row, pool, wording)
        example = _example(pool, INSTRUCTION_FAMILIES[family], wording) if shape == "few_shot" else None
        prompt, span = _shape(shape, sample_context(row, wording), request.text, request.tail, wording, example)
        split = "validation" if split_by_family and family in HELD_OUT_INSTRUCTION_FAMILIES else "train"
        records.append({"id": f"{prefix}-{number:05d}", "prompt": prompt, "family": family, "shape": shape,
                        "kind": "instruction", "split": split, "request_spans": [list(span)],
                        "source_id": str(row["id"]), "task_description": request.text})
    return records


def no_request_records(documents: Sequence[tuple[str, str]], *, seed: int, prefix: str,
                       families: Sequence[str] = NO_REQUEST_FAMILIES) -> list[dict[str, Any]]:
    """Prompts that write no request (a bare document, a request for the gist, a label for the whole text) in the
    same shapes.

    Args:
        documents: ``(document id, text)`` pairs (``summ_train`` documents).
        seed: Seeds dealing and wording.
        prefix: Record id prefix.
        families: Some of :data:`NO_REQUEST_FAMILIES`, dealt evenly.
    """
    if not families or not set(families) <= set(NO_REQUEST_FAMILIES):
        raise ValueError(f"families must be some of {NO_REQUEST_FAMILIES}, got {families}.")
    rng = random.Random(f"{seed}:no-request:{prefix}")
    cells = [(family, shape) for family in families for shape in SHAPES if shape != "few_shot"]
    records = []
    for number, (document_id, text) in enumerate(documents):
        family, shape = cells[number % len(cells)]
        wording = random.Random(f"{seed}:{prefix}:{document_id}")
        noun = wording.choice(("document", "article", "text", "report"))
        closing = (wording.choice(_SUMMARY).format(noun=noun) if family == "summary" else
                   wording.choice(_LABEL).format(noun=noun) if family == "label" else
                   wording.choice(_BARE_LINES[shape == "question_first"]))
        prompt, _ = _shape(shape, text.strip(), closing, "", wording)
        records.append({"id": f"{prefix}-{number:05d}", "prompt": prompt, "family": f"no_request_{family}",
                        "shape": shape, "kind": f"no_request_{family}", "split": "train", "request_spans": [],
                        "source_id": document_id, "task_description": ""})
    rng.shuffle(records)
    return records
