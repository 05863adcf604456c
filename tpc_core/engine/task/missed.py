"""Saying so when prompt-agnostic compression may have missed the request.

A prompt whose task falls back (no request placed), or that only points at a request it never writes, although a
sentence outside the material asks the reader (:func:`~tpc_core.engine.task.asking.unplaced`), is compressed for
no specific question, and that sentence competes as an ordinary one. The caller should pass the question
(``question=``): :class:`MissedRequestWarning` says so, once per call, at the caller's line, giving the sentence's
character offsets and never its text (prompts do not reach logs). Index-time compression of documents
(:func:`index_time`: the corpus job, the adapters that compress documents at ingestion) compresses material, not
requests, and does not warn.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["MissedRequestWarning", "index_time", "missed_message", "warns_missed"]

_INDEX_TIME: contextvars.ContextVar[bool] = contextvars.ContextVar("tpc_index_time", default=False)


class MissedRequestWarning(UserWarning):
    """A prompt with no question may ask something the finder did not place (see the module's docstring)."""


@contextmanager
def index_time() -> Iterator[None]:
    """Compress documents at index time inside this block: no :class:`MissedRequestWarning` is given."""
    token = _INDEX_TIME.set(True)
    try:
        yield
    finally:
        _INDEX_TIME.reset(token)


def warns_missed() -> bool:
    """Whether a possibly missed request is reported here (``False`` inside :func:`index_time`)."""
    return not _INDEX_TIME.get()


def missed_message(missed: Sequence[tuple[int, tuple[int, int, int]]]) -> str:
    """The warning for ``missed``: ``(prompt, (document, start, end))`` of each prompt whose request may be missed.

    >>> missed_message([(0, (0, 120, 171))])[:80]
    'Prompt 0 has no request found, but the sentence at characters 120-171 of documen'
    """
    prompt, (document, start, end) = missed[0]
    more = f" ({len(missed) - 1} more prompt(s) in this call alike)" if len(missed) > 1 else ""
    return (f"Prompt {prompt} has no request found, but the sentence at characters {start}-{end} of document "
            f"{document} asks the reader something{more}; it was compressed as an ordinary sentence. Pass the "
            f"question as question= to compress for it.")
