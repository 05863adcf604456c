"""Prompt layouts people write around a request and its material: chat templates rendered to text,
markdown / XML / JSON / YAML / e-mail / ticket / memo shells, requests before, between and after the material,
stacked instructions, and material that itself asks questions.

Each layout renders ``(request, material)`` to one prompt string and gives the request's character span in it,
so the same QA row can be written in every layout and the request finder and prompt-agnostic compression be
measured per layout. Whole layouts are held out from the request head's training
(:data:`HELD_OUT_LAYOUTS`): the check reports seen against unseen.

Wordings are written here, not taken from any evaluation set. The request head trains on train rows rendered in
the seen layouts (``python -m training.curation.layout_set``); ``python -m benchmarks.layout_recall`` measures
every layout on held-out train rows (for choices) or on ``qa_dev`` dev rows (rarely).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["HELD_OUT_LAYOUTS", "LAYOUTS", "SEEN_LAYOUTS", "Rendered", "render", "written_question"]

_SYSTEM = ("You are a helpful assistant.", "You are a careful research assistant. Answer only from the material "
           "you are given.", "You are an expert analyst. Be concise and accurate.",
           "You answer questions about documents. If the answer is not in them, say so.")
_READ = ("Here is the material:", "Please read the following documents.", "Some context for you:",
         "Use these notes:", "Reference material below.")


@dataclass(frozen=True)
class Rendered:
    """A prompt and the character span of its written request (``None`` when it writes none)."""

    prompt: str
    span: tuple[int, int] | None


class _Builder:
    """Appends pieces to a prompt, remembering where the request went."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.span: tuple[int, int] | None = None

    def add(self, text: str) -> _Builder:
        self.parts.append(text)
        return self

    def request(self, text: str) -> _Builder:
        start = sum(len(p) for p in self.parts)
        self.parts.append(text)
        if text:
            self.span = (start, start + len(text))
        return self

    def done(self) -> Rendered:
        return Rendered("".join(self.parts), self.span)


Layout = Callable[[str, str, random.Random], Rendered]


def _halves(material: str) -> tuple[str, str]:
    """The material cut at the blank line nearest its middle (all of it and "" when it has none)."""
    blocks = material.split("\n\n")
    if len(blocks) < 2:
        return material, ""
    middle = len(blocks) // 2
    return "\n\n".join(blocks[:middle]), "\n\n".join(blocks[middle:])


# ------------------------------------------------------------------ chat templates rendered to text
@dataclass(frozen=True)
class _ChatTemplate:
    """A chat template rendered to text: ``opening``, the user turn, ``closing``.

    ``opening`` holds a ``{system}`` line. With no ``material_first`` the request follows ``opening`` at once
    (which may hold ``{read}``, a line asking to read, and ``{material}``); otherwise a coin puts the material
    before the request (``material_first``) or after it (``request_first``), ``heads_material_first`` saying
    which side heads gives. ``closing`` may hold ``{material}``. The draws are made in the order system, coin,
    read, so one seed gives one prompt.
    """

    opening: str
    closing: str
    request_first: str = ""
    material_first: str = ""
    heads_material_first: bool = False

    def __call__(self, request: str, material: str, rng: random.Random) -> Rendered:
        system = rng.choice(_SYSTEM)
        b = _Builder()
        if not self.material_first:
            read = rng.choice(_READ) if "{read}" in self.opening else ""
            b.add(self.opening.format(system=system, read=read, material=material)).request(request)
        else:
            b.add(self.opening.format(system=system))
            material_first = (rng.random() < 0.5) == self.heads_material_first
            turn = self.material_first if material_first else self.request_first
            text = turn.format(read=rng.choice(_READ) if "{read}" in turn else "", material=material)
            if material_first:
                b.add(text).request(request)
            else:
                b.request(request).add(text)
        return b.add(self.closing.format(material=material)).done()


_chatml = _ChatTemplate("<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n",
                        "<|im_end|>\n<|im_start|>assistant\n", request_first="\n\n{material}",
                        material_first="{read}\n\n{material}\n\n")
_llama3 = _ChatTemplate("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n{system}<|eot_id|>"
                        "<|start_header_id|>user<|end_header_id|>\n\n",
                        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
                        request_first="\n\n{read}\n{material}", material_first="{material}\n\n",
                        heads_material_first=True)
_gemma = _ChatTemplate("<start_of_turn>user\n{system}\n\n", "<end_of_turn>\n<start_of_turn>model\n",
                       request_first="\n\n{material}", material_first="{material}\n\n")
_llama2 = _ChatTemplate("<s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{read}\n{material}\n\n", " [/INST]")
_phi = _ChatTemplate("<|system|>\n{system}<|end|>\n<|user|>\n", "\n\n{material}<|end|>\n<|assistant|>\n")
_human_assistant = _ChatTemplate("\n\nHuman: {system}\n\n<document>\n{material}\n</document>\n\n", "\n\nAssistant:")


def _transcript(request: str, material: str, rng: random.Random) -> Rendered:
    user, bot = rng.choice((("User", "Assistant"), ("USER", "ASSISTANT"), ("Me", "Bot"), ("Customer", "Agent")))
    return (_Builder().add(f"System: {rng.choice(_SYSTEM)}\n\n{user}: {rng.choice(_READ)}\n\n{material}\n\n"
                           f"{bot}: {rng.choice(('Thanks, I have read it.', 'Got it. What do you need?'))}\n\n{user}: ")
            .request(request).add(f"\n\n{bot}:").done())


# ------------------------------------------------------------------ document shells
def _markdown(request: str, material: str, rng: random.Random) -> Rendered:
    task = rng.choice(("Answer from the context only.", "Read the context, then answer.", "Be brief."))
    b = _Builder().add(f"# Task\n{task}\n\n## Context\n{material}\n\n")
    return b.add(rng.choice(("## Question\n", "## Query\n", "### Your question\n"))).request(request).add(
        "\n\n## Answer\n").done()


def _xml(request: str, material: str, rng: random.Random) -> Rendered:
    blocks = [block for block in material.split("\n\n") if block.strip()]
    docs = "\n".join(f'<document index="{k}">\n{block}\n</document>' for k, block in enumerate(blocks, 1))
    tag = rng.choice(("question", "query", "user_request"))
    return (_Builder().add(f"<documents>\n{docs}\n</documents>\n\n<instructions>\n"
                           f"{rng.choice(('Answer using only the documents.', 'Quote the document you used.'))}\n"
                           f"</instructions>\n\n<{tag}>").request(request).add(f"</{tag}>").done())


def _json(request: str, material: str, rng: random.Random) -> Rendered:
    key = rng.choice(("question", "query", "input"))
    head = json.dumps({"instruction": rng.choice(("Answer the question using the context.",
                                                  "Use the context to reply.")), "context": material},
                      indent=2, ensure_ascii=False)[:-2]
    quoted = json.dumps(request, ensure_ascii=False)
    b = _Builder().add(f'{head},\n  "{key}": "')
    return b.request(quoted[1:-1]).add('"\n}').done()


def _yaml(request: str, material: str, rng: random.Random) -> Rendered:
    body = "\n".join(f"  {line}" if line else "" for line in material.split("\n"))
    return (_Builder().add(f"task: question_answering\nsystem: {rng.choice(_SYSTEM)}\nquestion: ").request(request)
            .add(f"\ncontext: |\n{body}\n").done())


def _email(request: str, material: str, rng: random.Random) -> Rendered:
    subject = rng.choice(("Quick question", "Need your help", "Re: the notes", "Fact check please"))
    sender = rng.choice(("Dana Wu", "Sam Ortiz", "Lee Park"))
    opening = rng.choice(("Hope you are well.", "Sorry for the short notice.", "Thanks for earlier."))
    return (_Builder().add(f"From: {sender}\nTo: research-desk\nSubject: {subject}\n\nHi team,\n\n{opening} ")
            .request(request).add(f"\n\n{rng.choice(('Thanks!', 'Best,', 'Cheers,'))}\n"
                                  f"{rng.choice(('Dana', 'Sam', 'Lee'))}\n\n---------- Forwarded message ----------\n"
                                  f"{material}").done())


def _ticket(request: str, material: str, rng: random.Random) -> Rendered:
    return (_Builder().add(f"Ticket #{rng.randint(1000, 9999)}\nStatus: Open\nPriority: P{rng.randint(1, 3)}\n"
                           f"Reporter: {rng.choice(('a customer', 'support bot', 'J. Smith'))}\n"
                           "Summary: Customer question\nDescription:\n").request(request)
            .add(f"\n\nAttachments:\n{material}\n\nInternal notes: {rng.choice(('none', 'check the docs first'))}")
            .done())


def _memo(request: str, material: str, rng: random.Random) -> Rendered:
    return (_Builder().add(f"MEMORANDUM\nTO: Research desk\nFROM: {rng.choice(('Office of the Director', 'Legal'))}\n"
                           f"DATE: {rng.randint(1, 28)} March\n\n{material}\n\nACTION REQUESTED: ").request(request)
            .done())


# ------------------------------------------------------------------ where the request stands
def _stacked_after(request: str, material: str, rng: random.Random) -> Rendered:
    first = rng.choice(("Use only the text above.", "Do not use outside knowledge.", "Read every document."))
    last = rng.choice(("Keep the answer under twenty words.", "Cite the document number.", "Answer in English."))
    return (_Builder().add(f"{material}\n\nInstructions:\n1. {first}\n2. ").request(request)
            .add(f"\n3. {last}").done())


def _between(request: str, material: str, rng: random.Random) -> Rendered:
    first, second = _halves(material)
    return (_Builder().add(f"{first}\n\n{rng.choice(('My question:', 'What I need to know:', 'Question:'))} ")
            .request(request).add(f"\n\n{rng.choice(('More material follows.', 'The rest of the notes:'))}\n\n{second}")
            .done())


def _with_questions(request: str, material: str, rng: random.Random) -> Rendered:
    """Material that asks questions of its own (an FAQ, a quiz) before the real request."""
    faq = rng.choice(("Frequently asked questions\nQ: How do I cite this page?\nA: Use the title and the date.\n"
                      "Q: Who maintains these notes?\nA: The editorial team.",
                      "Review questions from the textbook:\n1. What is the main idea of the passage?\n"
                      "2. Why does the author mention it?"))
    return (_Builder().add(f"{faq}\n\n{material}\n\nNow, the question I actually need answered: ").request(request)
            .done())


LAYOUTS: Mapping[str, Layout] = {
    "chatml": _chatml, "llama3": _llama3, "transcript": _transcript, "markdown": _markdown, "json": _json,
    "email": _email, "stacked_after": _stacked_after, "between": _between, "with_questions": _with_questions,
    "gemma": _gemma, "llama2": _llama2, "phi": _phi, "human_assistant": _human_assistant, "xml": _xml,
    "yaml": _yaml, "ticket": _ticket, "memo": _memo,
}
#: Whole layouts never used in training: the check reports them against the seen ones.
HELD_OUT_LAYOUTS: frozenset[str] = frozenset({"gemma", "llama2", "phi", "human_assistant", "xml", "yaml", "ticket",
                                              "memo"})
SEEN_LAYOUTS: tuple[str, ...] = tuple(name for name in LAYOUTS if name not in HELD_OUT_LAYOUTS)


def render(layout: str, request: str, material: str, rng: random.Random) -> Rendered:
    """``material`` and ``request`` (``""``: a prompt that writes no request) written in ``layout``.

    Raises:
        ValueError: An unknown layout name.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {sorted(LAYOUTS)}")
    rendered = LAYOUTS[layout](request, material, rng)
    if rendered.span is not None:
        start, end = rendered.span
        if json.dumps(request, ensure_ascii=False)[1:-1] != rendered.prompt[start:end] != request:
            raise AssertionError(f"layout {layout} misplaced the request span")  # a bug in a layout above
    return rendered


def written_question(question: str) -> str:
    """A dataset question as a person writes it: capitalised, with its question mark (one that already ends in
    ``?``, ``.`` or ``)``, or a ``Key: ...`` lookup, as it is).

    >>> written_question("who wrote it"), written_question('Key: "a1"')
    ('Who wrote it?', 'Key: "a1"')
    """
    text = question.strip()
    return text if text.endswith(("?", ".", ")")) or text.startswith("Key:") else f"{text[:1].upper()}{text[1:]}?"

