"""Long one-time work inside a call (a model converted on its first use), said on a terminal.

A call's ``show_progress`` (:class:`tpc_core.options.CompressOptions`) is its preference for the whole call, bars
of one-time work included: the engine sets it for the call (:func:`progress_preference`); ``None`` (the default)
shows them only when standard error is a terminal, so logs, CI output and piped runs stay silent. The work says
what it does in one line (:func:`progress_notice`) and draws its bar on standard error.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["progress_notice", "progress_preference", "shows_progress"]

_PREFERENCE: contextvars.ContextVar[bool | None] = contextvars.ContextVar("tpc_show_progress", default=None)


@contextmanager
def progress_preference(show: bool | None) -> Iterator[None]:
    """Within the block, :func:`shows_progress` answers ``show`` (``None``: whether standard error is a terminal)."""
    token = _PREFERENCE.set(show)
    try:
        yield
    finally:
        _PREFERENCE.reset(token)


def shows_progress(stream: TextIO | None = None) -> bool:
    """Whether to show progress: the call's ``show_progress`` where it set one, else whether ``stream`` (default
    standard error) is a terminal."""
    preference = _PREFERENCE.get()
    if preference is not None:
        return preference
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def progress_notice(message: str, stream: TextIO | None = None) -> bool:
    """Write ``[tpc] message`` as one line on ``stream`` (default standard error) when :func:`shows_progress`;
    returns whether it did (then the work draws its bar there too)."""
    stream = stream if stream is not None else sys.stderr
    if not shows_progress(stream):
        return False
    print(f"[tpc] {message}", file=stream, flush=True)
    return True
