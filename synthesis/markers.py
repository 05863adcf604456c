"""The chat-template tokens that synthesis writes, taken from the library's marker table.

``tpc_core.segmentation.vocabulary.CHAT_TEMPLATES`` lists every chat template's markers as the regular expressions
the library reads them with. A shell writes the token each one matches: a literal marker as it is escaped there, an
opener that names its role with the role written into its ``role`` group. Every token written is read back by the
library (:func:`~tpc_core.segmentation.vocabulary.read_marker`) as the marker it was taken from, so a generated
prompt holds only markers the library knows; a template the library does not know cannot be written.
"""

from __future__ import annotations

import re

from tpc_core.segmentation.vocabulary import CHAT_TEMPLATES, Marker, MarkerKind, read_marker

__all__ = ["template_token"]

_ROLE_GROUP = "(?P<role>"
# An opener may name its role after optional blanks: "(?:[ \t]*(?P<role>...))?" (ChatML's, Gemma's).
_OPTIONAL_ROLE = "(?:[ \\t]*"


def _unescaped(pattern: str) -> str:
    """A literal pattern's text (``re.escape`` undone)."""
    return re.sub(r"\\(.)", r"\1", pattern)


def _group_end(pattern: str, start: int) -> int:
    """The index just after the group that opens at ``start``."""
    depth = 0
    position = start
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position += 2
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        position += 1
        if depth == 0:
            return position
    raise ValueError(f"unbalanced group in marker pattern {pattern!r}")


def _written(marker: Marker, role: str | None) -> str:
    """The text of ``marker``, with ``role`` in its ``role`` group if it has one."""
    start = marker.pattern.find(_ROLE_GROUP)
    if start < 0:
        return _unescaped(marker.pattern)
    if role is None:
        raise ValueError(f"the marker {marker.pattern!r} names its role: give one")
    end = _group_end(marker.pattern, start)
    wrapper = marker.pattern[:start].endswith(_OPTIONAL_ROLE) and marker.pattern[end:end + 2] == ")?"
    if wrapper:
        start -= len(_OPTIONAL_ROLE)
        end += 2
    return _unescaped(marker.pattern[:start]) + role + _unescaped(marker.pattern[end:])


def _fits(marker: Marker, kind: MarkerKind, role: str | None) -> bool:
    if marker.kind is not kind:
        return False
    if kind is not MarkerKind.OPEN or role is None:
        return True
    return _ROLE_GROUP in marker.pattern or marker.role == role


def template_token(template: str, kind: MarkerKind, role: str | None = None) -> str:
    """The token of the library's chat template ``template`` that does ``kind`` (for an opener: opens ``role``'s
    turn), as a prompt writes it; ``""`` when the template has no marker of that kind.

    >>> template_token("chatml", MarkerKind.OPEN, "user"), template_token("llama2", MarkerKind.OPEN, "assistant")
    ('<|im_start|>user', '[/INST]')

    Raises:
        KeyError: The library has no template of that name.
        ValueError: The token written is not read back as that marker.
    """
    fitting = [marker for marker in CHAT_TEMPLATES[template].markers if _fits(marker, kind, role)]
    if not fitting:
        return ""
    token = _written(fitting[0], role)
    reading = read_marker(token)
    if reading is None or reading.kind is not kind or re.fullmatch(fitting[0].pattern, token) is None:
        raise ValueError(f"{template}: the token {token!r} written for a {kind.value} marker is not read back as one")
    return token
