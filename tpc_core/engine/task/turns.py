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
from typing import Literal, cast

from tpc_core.segmentation import marker_spans
from tpc_core.segmentation.vocabulary import LabelUse, MarkerKind, label_names, read_marker, speaker_role, vocabulary

__all__ = ["ChatTurn", "Role", "Turns", "chat_turns", "parse_flattened_chat", "read_turns", "sentence_roles",
           "turn_text"]

Role = Literal["system", "user", "assistant"]

# A plain-text speaker label at the start of a line: "User: ...", "### Assistant:", "**Human**:".
_SPEAKER = re.compile(r"^[\s#*>_-]{0,6}(?P<name>[A-Za-z]{2,9})[*_]{0,2}\s*:", re.MULTILINE)
_SPEAKER_LABELS = frozenset(label_names(LabelUse.SPEAKER))


def _turn_starts(sentence: str) -> list[tuple[int, Role]]:
    """Where turns start in one sentence (character offset, role), in order."""
    starts: list[tuple[int, Role]] = []
    words = vocabulary()
    for offset, name in words.openers(sentence) if any(c in sentence for c in words.first_chars) else ():
        role = speaker_role(name) if name is not None else None
        if role is not None:
            starts.append((offset, cast(Role, role)))
    for match in _SPEAKER.finditer(sentence) if ":" in sentence else ():
        name = match.group("name").lower()
        if name in _SPEAKER_LABELS:
            starts.append((match.start("name"), cast(Role, speaker_role(name))))
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
        lead = vocabulary().lead.match(sentence).end()  # type: ignore[union-attr]  # it matches the empty string
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


def turn_text(sentence: str) -> str:
    """A sentence's own words: the text before the first chat-template marker that follows them, without the
    markers before them (:func:`tpc_core.segmentation.marker_spans`). The built-in splitters already cut every
    marker out; a custom splitter's sentence (or a cached one) can still hold them.

    >>> turn_text("who was nationality?<|eot_id|><|start_header_id|>assistant<|end_header_id|>")
    'who was nationality?'
    >>> turn_text("<|im_start|>user\\nWho won?<|im_end|>"), turn_text("<|im_end|>")
    ('Who won?', '')
    """
    position = 0
    for start, end in marker_spans(sentence):
        if sentence[position:start].strip():
            return sentence[position:start].strip()
        position = end
    return sentence[position:].strip()


@dataclass(frozen=True)
class ChatTurn:
    """One turn of a flattened chat (:func:`chat_turns`).

    Attributes:
        role: ``"system"``, ``"user"``, ``"assistant"``, or the template's own name for another role (``"tool"``);
            ``None`` for text outside every turn.
        start: Where the turn's content starts in the text (right after its opening marker).
        end: Where it ends (at the next marker; a turn with no content has ``start == end``).
        content: ``text[start:end]`` without the surrounding whitespace.
    """

    role: str | None
    start: int
    end: int
    content: str


_LLAMA2_SYSTEM = "<<SYS>>"  # Llama 2 writes the system prompt inside the first [INST]


def _neutral(marker: str) -> bool:
    """Whether a marker begins a text and neither opens nor ends a turn (a BOS token)."""
    reading = read_marker(marker)
    return reading is not None and reading.kind is MarkerKind.START


def _opened_role(marker: str) -> str | None:
    """The role a marker opens (a name the vocabulary does not know, as written), or ``None`` for a closing or
    neutral marker."""
    reading = read_marker(marker)
    if reading is None or reading.role is None:
        return None
    return speaker_role(reading.role) or reading.role


def chat_turns(text: str) -> list[ChatTurn]:
    """The turns of a chat flattened to text with any template the splitters know (ChatML, Llama 3, Llama 2 /
    Mistral, Gemma, Phi-3, ``User:`` / ``Assistant:`` lines: :mod:`tpc_core.segmentation.markers`), in order.

    A turn runs from its opening marker to the next marker. A closing marker ends it; text after a closing marker
    and before the next opening one is outside every turn (role ``None``; whitespace there is ignored). Llama 2's
    ``[INST] <<SYS>> ... <</SYS>> ... [/INST]`` is a system turn, then a user turn, then the assistant's. A turn
    whose content is empty is still a turn: a compressed chat keeps every marker, so a turn all of whose
    sentences were dropped reads as the same role with no content.

    >>> [(t.role, t.content) for t in chat_turns("<|im_start|>user\\nWho won?<|im_end|>\\n<|im_start|>assistant\\n")]
    [('user', 'Who won?'), ('assistant', '')]
    >>> [(t.role, t.content) for t in chat_turns("<s>[INST] <<SYS>>\\nBe brief.\\n<</SYS>>\\n\\nHi [/INST] Hello</s>")]
    [('system', 'Be brief.'), ('user', 'Hi'), ('assistant', 'Hello')]
    """
    turns: list[list] = []  # [role, start, end] while building
    open_turn = False
    position = 0
    for start, end in marker_spans(text):
        if text[position:start].strip() and not open_turn:
            turns.append([None, position, start])
        elif open_turn:
            turns[-1][2] = start
        marker = text[start:end]
        role = _opened_role(marker)
        if role is not None:
            just_opened = bool(turns) and open_turn and turns[-1][0] == "user" and not text[turns[-1][1]:start].strip()
            if marker == _LLAMA2_SYSTEM and just_opened:  # Llama 2 writes the system prompt inside the first [INST]
                turns[-1][0] = "system"
                turns[-1][1] = end
                turns[-1][2] = end
            else:
                turns.append([role, end, end])
            open_turn = True
        elif not _neutral(marker):
            open_turn = False
        position = end
    if open_turn:
        turns[-1][2] = len(text)
    elif text[position:].strip():
        turns.append([None, position, len(text)])
    return [ChatTurn(role, start, end, text[start:end].strip()) for role, start, end in turns]


def parse_flattened_chat(text: str) -> list[tuple[str | None, str]]:
    """``(role, content)`` for each turn of a flattened chat (:func:`chat_turns`), in order.

    >>> parse_flattened_chat("System: Be brief.\\nUser: Who won?\\nAssistant:")
    [('system', 'Be brief.'), ('user', 'Who won?'), ('assistant', '')]
    """
    return [(turn.role, turn.content) for turn in chat_turns(text)]
