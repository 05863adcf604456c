"""Chat turns in a conversation flattened to text: which speaker each sentence belongs to.

A chat rendered to one string keeps its speakers only as markup: ChatML's ``<|im_start|>user``, Llama 3's
``<|start_header_id|>user<|end_header_id|>``, Gemma's ``<start_of_turn>user``, Phi's ``<|user|>``, Llama 2 /
Mistral's ``[INST] ... [/INST]`` and ``<<SYS>>``, or plain ``User:`` / ``Assistant:`` lines. The request finder
reads the speaker of each sentence as a layout feature: a request is written in a user turn, mostly the last,
and a system prompt's "You are ..." or an assistant's reply is not the request.

Pure functions over the sentences' texts; no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Role", "Turns", "read_turns", "sentence_roles"]

Role = Literal["system", "user", "assistant"]

_ROLE_NAMES: dict[str, Role] = {
    "system": "system", "developer": "system", "sys": "system",
    "user": "user", "human": "user", "customer": "user", "client": "user", "me": "user", "prompter": "user",
    "assistant": "assistant", "ai": "assistant", "bot": "assistant", "agent": "assistant", "model": "assistant",
    "chatbot": "assistant", "gpt": "assistant", "answer": "assistant", "response": "assistant",
}
# Markup that opens a turn, anywhere in a sentence; the role is the named group (or implied by the marker).
_MARKERS = re.compile(
    r"<\|im_start\|>\s*(?P<chatml>[A-Za-z]+)"
    r"|<\|start_header_id\|>\s*(?P<header>[A-Za-z]+)\s*<\|end_header_id\|>"
    r"|<start_of_turn>\s*(?P<gemma>[A-Za-z]+)"
    r"|<\|(?P<bar>system|user|assistant)\|>"
    r"|(?P<inst>\[INST\])|(?P<inst_end>\[/INST\])|(?P<sys><<SYS>>)|(?P<sys_end><</SYS>>)",
)
# A plain-text speaker label at the start of a line: "User: ...", "### Assistant:", "**Human**:".
_SPEAKER = re.compile(r"^[\s#*>_-]{0,6}(?P<name>[A-Za-z]{2,9})[*_]{0,2}\s*:", re.MULTILINE)
_IMPLIED: dict[str, Role] = {"inst": "user", "inst_end": "assistant", "sys": "system", "sys_end": "user"}
_LEAD = re.compile(r"^(?:\s|<s>|<bos>|<\|begin_of_text\|>|<\|endoftext\|>)*")


def _turn_starts(sentence: str) -> list[tuple[int, Role]]:
    """Where turns start in one sentence (character offset, role), in order."""
    starts: list[tuple[int, Role]] = []
    if "<" not in sentence and "[" not in sentence and ":" not in sentence:
        return starts  # the common case: prose with no markup at all
    for match in _MARKERS.finditer(sentence) if "<" in sentence or "[" in sentence else ():
        group = match.lastgroup or ""
        role = _IMPLIED.get(group) or _ROLE_NAMES.get(match.group(group).lower())
        if role is not None:
            starts.append((match.start(), role))
    for match in _SPEAKER.finditer(sentence) if ":" in sentence else ():
        role = _ROLE_NAMES.get(match.group("name").lower())
        if role is not None and match.group("name").lower() not in ("answer", "response"):
            starts.append((match.start("name"), role))
    return sorted(starts)


@dataclass(frozen=True)
class Turns:
    """The speakers of a prompt's sentences, read once.

    Attributes:
        roles: Each sentence's speaker (:func:`sentence_roles`).
        texts: Each sentence up to the first turn it opens after its start: a splitter can leave the next
            speaker's marker on a sentence (``"Who won?<end_of_turn>\\n<start_of_turn>model"``), and a request's
            question mark is then not the sentence's last character.
    """

    roles: list[Role | None]
    texts: list[str]


def read_turns(sentences: Sequence[str]) -> Turns:
    """Each sentence's speaker and its text before the next turn, from one scan of its markup."""
    roles: list[Role | None] = []
    texts: list[str] = []
    current: Role | None = None
    speakers: set[Role] = set()
    for sentence in sentences:
        starts = _turn_starts(sentence)
        lead = _LEAD.match(sentence).end()  # type: ignore[union-attr]  # the pattern matches the empty string
        opening = [role for offset, role in starts if offset <= lead + 2]
        later = [offset for offset, _ in starts if offset > lead + 2]
        roles.append(opening[0] if opening else current)
        texts.append(sentence[: min(later)] if later else sentence)
        if starts:
            current = starts[-1][1]
            speakers.update(role for _, role in starts)
    if len(speakers - {"system"}) < 2 and not ({"system", "user"} <= speakers):
        roles = [None] * len(sentences)
    return Turns(roles, texts)


def sentence_roles(sentences: Sequence[str]) -> list[Role | None]:
    """The speaker of each sentence: the role of the last turn opened at or before the sentence's start (a
    sentence that opens a turn belongs to it); ``None`` before any turn, and for every sentence of a prompt that
    marks no turns or only one speaker's (a lone "Answer:" or "User:" line makes no conversation).

    >>> sentence_roles(["<|im_start|>system", "Be brief.<|im_end|>", "<|im_start|>user", "Who won?",
    ...                 "<|im_start|>assistant"])
    ['system', 'system', 'user', 'user', 'assistant']
    >>> sentence_roles(["Question: who won?", "Answer:"])
    [None, None]
    """
    return read_turns(sentences).roles
