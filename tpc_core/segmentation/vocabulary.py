"""The one vocabulary of chat roles and chat-template markers: two tables that every reader of a chat derives from.

* :data:`ROLE_NAMES`: every role name the library reads (a message's ``role``, the role a template token names,
  a ``User:`` label), the canonical role it means, and where it counts.
* :data:`CHAT_TEMPLATES`: each chat template's markers (the special tokens that open and close its turns), what
  each one does (:class:`MarkerKind`) and the role it opens.

Their readers: the splitters cut every marker out as a span of its own (:mod:`tpc_core.segmentation.markers`),
turn parsing reads each sentence's speaker and a flattened chat's turns (:mod:`tpc_core.engine.task.turns`),
request placement finds the latest user turn (:mod:`tpc_core.engine.task.placement`), and the conversation package
maps a message's role to its canonical one (:mod:`tpc_core.conversation.messages`). A new chat template is one
:class:`ChatTemplate` entry (:func:`register_chat_template` adds one at run time); a new role name is one
:class:`RoleName` row. Pure data and regular expressions built from it; no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

__all__ = ["CHAT_TEMPLATES", "ROLE_NAMES", "ChatTemplate", "LabelUse", "Marker", "MarkerKind", "MarkerReading",
           "RoleName", "Vocabulary", "chat_template", "label_names", "literal", "message_roles", "read_marker",
           "register_chat_template", "registered", "speaker_role", "unregister_chat_template", "vocabulary"]


class LabelUse(int, Enum):
    """How a plain-text ``Name:`` label at a line's start counts (ordered: each use includes the ones below it).

    Attributes:
        NONE: Not a label (the name counts only inside a template token or as a message's role).
        SPEAKER: A speaker's label that turn parsing reads (``Customer:``, ``Bot:``).
        MARKER: Also a chat-template marker the splitters cut out (in a text that labels two roles) and a template
            label that starts a line of its own.
    """

    NONE = 0
    SPEAKER = 1
    MARKER = 2


@dataclass(frozen=True)
class RoleName:
    """One role name and where it counts.

    Attributes:
        name: The name, lower case (names are read case-insensitively).
        role: The canonical role it means: ``"system"``, ``"developer"``, ``"user"``, ``"assistant"``, ``"tool"``
            or ``"function"``.
        message: A message's role (a dict's ``role``, a LangChain ``ChatMessage``'s, a LlamaIndex ``MessageRole``).
        speaker: A speaker of a flattened chat (the role a template token names: ``<|im_start|>NAME``).
        label: How a ``Name:`` line counts (:class:`LabelUse`).
        asks: A ``Name:`` line is the user's own words (request placement reads past the label).
        written: How a :attr:`LabelUse.MARKER` label is written besides upper case (default: capitalised).
    """

    name: str
    role: str
    message: bool = False
    speaker: bool = False
    label: LabelUse = LabelUse.NONE
    asks: bool = False
    written: str = ""


_SPEAKING = LabelUse.SPEAKER
_MARKED = LabelUse.MARKER

#: Every role name, in order (a message's accepted roles are listed in this order).
ROLE_NAMES: tuple[RoleName, ...] = (
    RoleName("system", "system", message=True, speaker=True, label=_MARKED),
    RoleName("developer", "developer", message=True, speaker=True, label=_SPEAKING),
    RoleName("sys", "system", speaker=True, label=_SPEAKING),
    RoleName("user", "user", message=True, speaker=True, label=_MARKED, asks=True),
    RoleName("human", "user", message=True, speaker=True, label=_MARKED, asks=True),
    RoleName("customer", "user", speaker=True, label=_SPEAKING, asks=True),
    RoleName("client", "user", speaker=True, label=_SPEAKING, asks=True),
    RoleName("me", "user", speaker=True, label=_SPEAKING, asks=True),
    RoleName("prompter", "user", speaker=True, label=_SPEAKING),
    RoleName("assistant", "assistant", message=True, speaker=True, label=_MARKED),
    RoleName("ai", "assistant", message=True, speaker=True, label=_MARKED, written="AI"),
    RoleName("chatbot", "assistant", message=True, speaker=True, label=_SPEAKING),
    RoleName("model", "assistant", message=True, speaker=True, label=_SPEAKING),
    RoleName("bot", "assistant", speaker=True, label=_SPEAKING),
    RoleName("agent", "assistant", speaker=True, label=_SPEAKING),
    RoleName("gpt", "assistant", speaker=True, label=_SPEAKING),
    RoleName("answer", "assistant", speaker=True),
    RoleName("response", "assistant", speaker=True),
    RoleName("tool", "tool", message=True),
    RoleName("function", "function", message=True),
)
# The three speakers of a flattened chat: a developer's instructions are the system's.
_SPEAKER_ROLES = {"developer": "system"}


def message_roles() -> dict[str, str]:
    """Every name a message's role may have, with the canonical role it means, in table order."""
    return {row.name: row.role for row in ROLE_NAMES if row.message}


def label_names(use: LabelUse = LabelUse.SPEAKER, *, role: str | None = None, asks: bool = False) -> tuple[str, ...]:
    """The names (lower case) of the labels that count at least as ``use``, of one canonical ``role`` if given, and
    only the user's own (``asks``) if asked.

    >>> label_names(LabelUse.MARKER)
    ('system', 'user', 'human', 'assistant', 'ai')
    """
    return tuple(row.name for row in ROLE_NAMES if row.label >= use and (role is None or row.role == role)
                 and (row.asks or not asks))


def speaker_role(name: str) -> str | None:
    """The speaker (``"system"``, ``"user"`` or ``"assistant"``) a role name of a flattened chat means, or ``None``.

    >>> speaker_role("Human"), speaker_role("developer"), speaker_role("tool")
    ('user', 'system', None)
    """
    return _VOCABULARY.speakers.get(name.lower())


class MarkerKind(str, Enum):
    """What a chat-template marker does.

    Attributes:
        OPEN: Opens a turn: it names its role (a ``role`` group in its pattern) or implies one (:attr:`Marker.role`).
        CLOSE: Ends a turn.
        START: Begins a text (a BOS token): neither opens nor ends a turn.
        SEPARATOR: Ends a turn, and may begin a text as a :attr:`START` marker does (``<|endoftext|>``).
        RESUME: Ends a block inside a turn and goes on with the turn's role (:attr:`Marker.role`): Llama 2's
            ``<</SYS>>`` ends the system prompt written inside the user's ``[INST]``. A turn parser reads it as
            the start of that role's text; it opens no new message (request placement looks for an opener).
    """

    OPEN = "open"
    CLOSE = "close"
    START = "start"
    SEPARATOR = "separator"
    RESUME = "resume"


@dataclass(frozen=True)
class Marker:
    """One marker of a chat template.

    Attributes:
        pattern: A regular expression for the whole marker, starting with one literal character; an opener that
            names its role holds the name in a group ``role``.
        kind: What it does.
        role: The role an opener implies when it names none (``[INST]`` opens the user's turn).
        only_with: The marker counts only in a text that holds this string (``<s>`` is also HTML's strike-through,
            so it counts only in a text that holds ``INST]``).
    """

    pattern: str
    kind: MarkerKind
    role: str | None = None
    only_with: str = ""


def literal(token: str, kind: MarkerKind, role: str | None = None, only_with: str = "") -> Marker:
    """A marker written exactly as ``token``."""
    return Marker(re.escape(token), kind, role, only_with)


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template: its name and its markers.

    Attributes:
        name: Its name (the key of :data:`CHAT_TEMPLATES`).
        markers: Its markers.
    """

    name: str
    markers: tuple[Marker, ...]


_OPEN = MarkerKind.OPEN
_CLOSE = MarkerKind.CLOSE
_START = MarkerKind.START
_SEPARATOR = MarkerKind.SEPARATOR
_NAME = r"(?:[ \t]*(?P<role>[A-Za-z_][\w.-]*))?"  # a role name after an opening token, on its line

_TEMPLATES: dict[str, ChatTemplate] = {template.name: template for template in (
    ChatTemplate("chatml", (Marker(r"<\|im_start\|>" + _NAME, _OPEN), literal("<|im_end|>", _CLOSE))),
    ChatTemplate("llama3", (
        literal("<|begin_of_text|>", _START),
        Marker(r"<\|start_header_id\|>(?P<role>[^<>\n]{0,40})<\|end_header_id\|>", _OPEN),
        literal("<|eot_id|>", _CLOSE), literal("<|eom_id|>", _CLOSE), literal("<|end_of_text|>", _CLOSE))),
    ChatTemplate("gemma", (literal("<bos>", _START), Marker(r"<start_of_turn>" + _NAME, _OPEN),
                           literal("<end_of_turn>", _CLOSE), literal("<eos>", _CLOSE))),
    ChatTemplate("phi3", (Marker(r"<\|(?P<role>system|user|assistant|tool)\|>", _OPEN), literal("<|end|>", _CLOSE),
                          literal("<|endoftext|>", _SEPARATOR))),
    ChatTemplate("llama2", (
        literal("[INST]", _OPEN, "user"), literal("[/INST]", _OPEN, "assistant"),
        literal("<<SYS>>", _OPEN, "system"), literal("<</SYS>>", MarkerKind.RESUME, "user"),
        literal("<s>", _START, only_with="INST]"), literal("</s>", _CLOSE, only_with="INST]"))),
)}
#: Every chat template the library reads, by name (read-only: :func:`register_chat_template` adds one).
CHAT_TEMPLATES: Mapping[str, ChatTemplate] = MappingProxyType(_TEMPLATES)

# A "User:" label at a line's start ("### Assistant:", "**Human:**"): the label is the marker.
_LABEL = r"[ \t]{{0,3}}(?P<marker>(?:\#{{1,4}}[ \t]*)?(?:\*\*)?(?P<name>{names})(?:\*\*)?[ \t]*:(?:\*\*)?)"


@dataclass(frozen=True)
class MarkerReading:
    """What one whole marker is (:func:`read_marker`).

    Attributes:
        kind: What it does (a ``User:`` label opens a turn).
        role: The role whose text it starts, as written (``"human"``) or implied (``"user"``); ``None`` for a marker
            that starts none, or an opener that names no role.
        label: Whether it is a ``User:`` label rather than a template's token.
    """

    kind: MarkerKind
    role: str | None
    label: bool = False


class Vocabulary:
    """The regular expressions and maps derived from :data:`ROLE_NAMES` and :data:`CHAT_TEMPLATES` (built again
    when a template is registered).

    Attributes:
        tokens: Every template token that counts in any text (no ``only_with``), each alternative in a group of its
            own.
        gated: ``(only_with, pattern)`` for the tokens that count only in a text holding ``only_with``.
        first_label: A ``User:`` label at the text's start; ``line_label``: one after a ``"\\n"``.
        whole: Exactly one marker: any template token or a label.
        lead: The start and separator tokens (and whitespace) a sentence may begin with before its turn opens.
        first_chars: The first character of every template token (a text with none of them holds none).
        speakers: Each speaker name (lower case) and the speaker it means.
        label_roles: Each :attr:`LabelUse.MARKER` label name (lower case) and its canonical role.
    """

    def __init__(self, templates: Mapping[str, ChatTemplate]) -> None:
        markers = [marker for template in templates.values() for marker in template.markers]
        self._markers = markers
        self.tokens = re.compile("|".join(_grouped(k, marker.pattern) for k, marker in enumerate(markers)))
        self.gated = [(marker.only_with, re.compile(marker.pattern)) for marker in markers if marker.only_with]
        self._ungated = _by_first_char([marker.pattern for marker in markers if not marker.only_with])
        forms = [form for row in ROLE_NAMES if row.label >= LabelUse.MARKER
                 for form in dict.fromkeys((row.written or row.name.capitalize(), row.name.upper()))]
        label = _LABEL.format(names="|".join(forms))
        self.first_label = re.compile(label)
        self.line_label = re.compile("\n" + label)
        self.whole = re.compile(f"{self.tokens.pattern}|{label}")
        starts = [marker.pattern for marker in markers if marker.kind in (MarkerKind.START, MarkerKind.SEPARATOR)]
        self.lead = re.compile(r"^(?:\s|" + "|".join(starts) + ")*")
        self.first_chars = frozenset(_first_char(marker.pattern) for marker in markers)
        self.speakers = {row.name: _SPEAKER_ROLES.get(row.role, row.role) for row in ROLE_NAMES if row.speaker}
        self.label_roles = {row.name: row.role for row in ROLE_NAMES if row.label >= LabelUse.MARKER}

    def ungated_spans(self, text: str) -> Iterator[tuple[int, int]]:
        """The spans of the tokens that count in any text (in order for each first character, not overall)."""
        return (match.span() for first, pattern in self._ungated if first in text for match in pattern.finditer(text))

    def reading(self, match: re.Match[str]) -> MarkerReading:
        """What a match of :attr:`tokens` or :attr:`whole` is."""
        if match.lastgroup == "marker":  # a "User:" label
            return MarkerReading(MarkerKind.OPEN, match.group("name").lower(), label=True)
        index = int((match.lastgroup or "m0")[1:])
        marker = self._markers[index]
        named = match.group(f"r{index}") if f"r{index}" in match.re.groupindex else None  # it names its role
        role = named.strip().lower() if named is not None and named.strip() else marker.role
        return MarkerReading(marker.kind, role if marker.kind in _TURN_STARTS else None)

    def openers(self, text: str) -> Iterator[tuple[int, str | None]]:
        """``(offset, role)`` of every template token in ``text`` that starts a role's text (an opener, or a
        marker that resumes a turn; ``role`` as in :class:`MarkerReading`)."""
        for match in self.tokens.finditer(text):
            reading = self.reading(match)
            if reading.kind in _TURN_STARTS:
                yield match.start(), reading.role


_TURN_STARTS = (MarkerKind.OPEN, MarkerKind.RESUME)


def _grouped(index: int, pattern: str) -> str:
    """A marker's pattern as an alternative of a union: in a group ``m<index>``, its ``role`` group ``r<index>``."""
    return f"(?P<m{index}>{pattern.replace('(?P<role>', f'(?P<r{index}>')})"


def _by_first_char(patterns: list[str]) -> list[tuple[str, re.Pattern[str]]]:
    """One expression per first character of ``patterns``, which starts with it as a literal: the regex engine scans
    for that character quickly, and a text without it is not scanned at all (marker detection stays a small part of
    a split)."""
    groups: dict[str, list[str]] = {}
    for pattern in patterns:  # each pattern whole (its own alternation or a quantifier after its first character kept)
        groups.setdefault(_first_char(pattern), []).append(f"(?:{pattern.replace('(?P<role>', '(?:')})")
    return [(first, re.compile("|".join(group))) for first, group in groups.items()]


def _first_char(pattern: str) -> str:
    """The literal character every match of a marker's pattern starts with.

    Raises:
        ValueError: The pattern starts with no literal, makes its first one optional (``a?``, ``a*``, ``a{0,1}``), or
            has alternatives at its top level (write each as a marker of its own).
    """
    escaped = pattern.startswith("\\")
    first = pattern[1:2] if escaped else pattern[:1]
    after = pattern[2 if escaped else 1:][:1]
    if not first or (first.isalnum() if escaped else first in ".^$*+?{}[]|()\\") or after in ("?", "*", "{"):
        raise ValueError(f"A marker's pattern must start with one literal character that every match holds; "
                         f"{pattern!r} does not.")
    if _top_level_bar(pattern):
        raise ValueError(f"A marker's pattern must be one alternative; {pattern!r} has several at its top level: "
                         "write each as a marker of its own.")
    return first


def _top_level_bar(pattern: str) -> bool:
    """Whether ``pattern`` has a ``|`` outside every group and character class."""
    depth = 0
    in_class = False
    k = 0
    while k < len(pattern):
        char = pattern[k]
        if char == "\\":
            k += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            k += 2 if pattern[k + 1:k + 2] in ("]", "^") else 1
            continue
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return True
        k += 1
    return False


_VOCABULARY = Vocabulary(CHAT_TEMPLATES)


def vocabulary() -> Vocabulary:
    """The derived expressions of the tables as they stand (after any registered template)."""
    return _VOCABULARY


def read_marker(marker: str) -> MarkerReading | None:
    """What ``marker`` is when it is exactly one chat-template token or ``User:`` label (whitespace around it
    ignored), else ``None``.

    >>> read_marker("<|im_start|>user"), read_marker("<|im_end|>").kind
    (MarkerReading(kind=<MarkerKind.OPEN: 'open'>, role='user', label=False), <MarkerKind.CLOSE: 'close'>)
    >>> read_marker("[INST]").role, read_marker("**Human:**").role, read_marker("Who won?")
    ('user', 'human', None)
    """
    match = _VOCABULARY.whole.fullmatch(marker.strip())
    return None if match is None else _VOCABULARY.reading(match)


def chat_template(name: str) -> ChatTemplate:
    """The template registered as ``name``.

    Raises:
        KeyError: No template has that name.
    """
    return CHAT_TEMPLATES[name]


def register_chat_template(template: ChatTemplate) -> None:
    """Add a chat template (or replace the one of its name): every reader recognises its markers from now on.

    Raises:
        ValueError: A marker's pattern does not start with a literal character, or does not compile.
    """
    global _VOCABULARY
    for marker in template.markers:
        _first_char(marker.pattern)
        re.compile(marker.pattern)
    _TEMPLATES[template.name] = template
    _VOCABULARY = Vocabulary(CHAT_TEMPLATES)


def unregister_chat_template(name: str) -> None:
    """Remove the template registered as ``name`` (nothing when none is)."""
    global _VOCABULARY
    _TEMPLATES.pop(name, None)
    _VOCABULARY = Vocabulary(CHAT_TEMPLATES)


@contextmanager
def registered(template: ChatTemplate) -> Iterator[ChatTemplate]:
    """``template`` registered for the ``with`` block only (a template it replaces comes back afterwards)."""
    previous = _TEMPLATES.get(template.name)
    register_chat_template(template)
    try:
        yield template
    finally:
        if previous is None:
            unregister_chat_template(template.name)
        else:
            register_chat_template(previous)
