"""The interchangeable parts prompts are composed from, and the builder that tracks the request in them.

Every table here is one axis's parts: wrapper vocabularies and their casings, header / metadata lines, distractor
notes, system prompts, format-only instructions, roles for role-play, questions that sit inside material. The
generator (:mod:`synthesis.generator`) draws one or more parts from each table at random, so the layouts
it writes are combinations, not a list. All wordings are written here, not taken from any evaluation set.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = ["CASINGS", "DISTRACTOR_NOTES", "FORMAT_INSTRUCTIONS", "HEADER_LINES", "NAMES", "READ_LINES", "ROLES",
           "SYSTEM_PROMPTS", "VOCABULARIES", "Piece", "PromptBuilder", "cased", "header_line", "json_escape",
           "key_name"]

#: A run of prompt text and whether it states the request (request pieces are the labelled spans).
Piece = tuple[str, bool]


def json_escape(text: str) -> str:
    """``text`` as the inside of a JSON string (non-ASCII kept)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


@dataclass
class PromptBuilder:
    """Appends pieces, remembering which character ranges state the request."""

    pieces: list[Piece]

    @classmethod
    def new(cls) -> PromptBuilder:
        """An empty builder."""
        return cls([])

    def text(self, text: str) -> PromptBuilder:
        """Append text that is not the request."""
        if text:
            self.pieces.append((text, False))
        return self

    def add(self, pieces: Iterable[Piece], escape: Callable[[str], str] | None = None) -> PromptBuilder:
        """Append pieces (request pieces stay request pieces), each passed through ``escape`` if given."""
        for text, is_request in pieces:
            if text:
                self.pieces.append((escape(text) if escape else text, is_request))
        return self

    def build(self) -> tuple[str, list[tuple[int, int]]]:
        """The prompt and its request spans (adjacent request pieces merge into one span)."""
        spans: list[tuple[int, int]] = []
        position = 0
        for text, is_request in self.pieces:
            end = position + len(text)
            if is_request:
                if spans and spans[-1][1] == position:
                    spans[-1] = (spans[-1][0], end)
                else:
                    spans.append((position, end))
            position = end
        return "".join(text for text, _ in self.pieces), spans


# ----------------------------------------------------- wrapper vocabularies: (request label, material label)
VOCABULARIES: Mapping[str, tuple[str, str]] = {
    "question_context": ("Question", "Context"), "query_documents": ("Query", "Documents"),
    "task_material": ("Task", "Material"), "ask_notes": ("Ask", "Notes"), "input_reference": ("Input", "Reference"),
    "request_background": ("Request", "Background"), "q_passage": ("Q", "Passage"),
    "user_question_sources": ("User question", "Sources"), "prompt_text": ("Prompt", "Text"),
    "inquiry_excerpt": ("Inquiry", "Excerpt"),
}
CASINGS: tuple[str, ...] = ("title", "upper", "lower", "bold", "bracket")


def cased(label: str, casing: str) -> str:
    """A field label in one casing: ``Question``, ``QUESTION``, ``question``, ``**Question**``, ``[Question]``."""
    return {"title": label, "upper": label.upper(), "lower": label.lower(), "bold": f"**{label}**",
            "bracket": f"[{label}]"}[casing]


def key_name(label: str) -> str:
    """A label as a key or tag name: ``User question`` -> ``user_question``."""
    return label.lower().replace(" ", "_")


# ------------------------------------------------------------------ header and metadata lines
NAMES: tuple[str, ...] = ("Dana Wu", "Sam Ortiz", "Lee Park", "Priya Nair", "Tom Becker", "Ana Silva", "Omar Haddad",
                          "Jo Evans", "Mei Lin", "Kofi Mensah")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
HEADER_LINES: Mapping[str, str] = {
    "id": "ID: {n}{c}", "ref": "Ref: {C}{C}-{n}", "ticket": "Ticket #{n}", "date": "Date: {d} {m} 20{y}",
    "sent": "Sent: {m} {d}, 20{y} {h}:{mm}", "priority": "Priority: {priority}", "tags": "Tags: {tags}",
    "from": "From: {name}", "to": "To: {team}", "cc": "Cc: {name}", "status": "Status: {status}",
    "category": "Category: {category}", "channel": "Channel: {channel}", "version": "Version: {d}.{y}",
    "language": "Language: en", "customer": "Customer: {name}", "assignee": "Assigned to: {name}",
    "form": "Form: {category} enquiry", "order": "Order number: {n}{n}", "account": "Account: {c}{n}",
}


def header_line(name: str, rng: random.Random) -> str:
    """One metadata line of kind ``name`` (a key of :data:`HEADER_LINES`) with made-up values."""
    letters = "ABCDEFGHKLMNPRSTUVWXYZ"
    return HEADER_LINES[name].format(
        n=rng.randint(100, 99999), c=rng.choice(letters), C=rng.choice(letters), d=rng.randint(1, 28),
        m=rng.choice(_MONTHS), y=rng.randint(19, 27), h=rng.randint(7, 19), mm=f"{rng.randint(0, 59):02d}",
        priority=rng.choice(("High", "Low", "Normal", "P1", "P2", "P3", "urgent")), name=rng.choice(NAMES),
        tags=", ".join(rng.sample(("research", "follow-up", "billing", "docs", "history", "urgent", "q3"), 2)),
        team=rng.choice(("research-desk", "support", "the team", "editorial", "ops")),
        status=rng.choice(("Open", "Pending", "New", "In progress")),
        category=rng.choice(("General", "Research", "Billing", "Facts", "Reference")),
        channel=rng.choice(("web", "email", "chat", "phone")))


# ------------------------------------------------------------------ text around a request that is not the request
#: Notes and imperatives a prompt carries besides its request (a distractor must not be taken for it).
DISTRACTOR_NOTES: tuple[str, ...] = (
    "Internal notes: check the docs first.", "Please reply by Friday.", "Do not forward this outside the team.",
    "Remember to log your time on this.", "Note: the office is closed on Monday.",
    "Check the attachments before replying.", "Keep this confidential.", "Let me know if anything is unclear.",
    "Please update the ticket status when done.", "Sent from my phone", "FYI the wiki is down until noon.",
    "Reminder: submit your expense report.", "Don't forget to cc Lee on the reply.", "Call me if this is urgent.",
    "Please close the ticket once answered.", "Escalate to tier 2 if the customer writes again.",
)
#: Instructions about the answer's form: they are not the request (they name nothing to find).
FORMAT_INSTRUCTIONS: tuple[str, ...] = (
    "Answer in one word.", "Keep it under twenty words.", "Reply in English.", "Cite the passage you used.",
    "Use bullet points.", "Answer with a short phrase only.", "If the material does not say, reply unknown.",
    "Do not use outside knowledge.", "Be concise.", "Give the answer first, then one line of explanation.",
    "Respond in JSON with the key answer.", "No more than two sentences.",
)
SYSTEM_PROMPTS: tuple[str, ...] = (
    "You are a helpful assistant.", "You are a careful research assistant. Answer only from the material provided.",
    "You are an expert analyst. Be concise and accurate.", "You answer questions about documents.",
    "You are a friendly support agent for an online encyclopedia.", "Follow the user's instructions exactly.",
    "You are a meticulous fact checker.", "Always be polite. Never make things up.",
)
#: Lines that introduce material (not requests).
READ_LINES: tuple[str, ...] = ("Here is the material:", "Please read the following.", "Some context for you:",
                               "Use these notes:", "Reference material below.", "I pasted the text below.",
                               "Here's what I found so far:", "Background reading:")
#: Role-play openings: (the role the assistant plays, who asks).
ROLES: tuple[tuple[str, str], ...] = (
    ("a travel agent", "A customer writes"), ("a librarian", "A patron asks"), ("a support agent", "A user writes in"),
    ("a history tutor", "Your student asks"), ("a fact checker", "An editor asks"),
    ("a research assistant", "Your manager asks"), ("a museum guide", "A visitor asks"),
    ("a quiz master's helper", "A contestant asks"),
)

