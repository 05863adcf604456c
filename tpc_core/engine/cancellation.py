"""Cooperative cancellation: work its caller has abandoned stops at its next model step.

Python cannot stop a thread. A caller that stops waiting for a compression (an adapter's ``deadline_ms``) runs it
under :func:`run_cancellable` with an event, and sets the event when it gives up; the engine calls
:func:`check_cancelled` before each step that runs a model (each forward pass of the context encoder, each batch
of prompts, each generation of task descriptions, and each generated token through :func:`generation_stop`),
which raises :class:`Cancelled` once the event is set. So abandoned work ends within one such step, never midway
through native code. Work not run under :func:`run_cancellable` is never cancelled.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Cancelled", "check_cancelled", "generation_stop", "run_cancellable"]

T = TypeVar("T")

_STOP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("tpc_stop", default=None)


class Cancelled(Exception):
    """The work's caller stopped waiting for it; raised at the engine's next model step."""


def run_cancellable(stop: threading.Event, work: Callable[..., T], *args: Any) -> T:
    """``work(*args)``, stopped at its next model step (:class:`Cancelled`) once ``stop`` is set.

    Args:
        stop: The event the caller sets when it gives up on the work.
        work: The work.
        *args: Its arguments.

    Returns:
        What ``work`` returns.

    Raises:
        Cancelled: ``stop`` was set before the work finished.
    """
    token = _STOP.set(stop)
    try:
        return work(*args)
    finally:
        _STOP.reset(token)


def cancelled() -> bool:
    """Whether the work running in this context was abandoned by its caller."""
    stop = _STOP.get()
    return stop is not None and stop.is_set()


def check_cancelled() -> None:
    """Raise :class:`Cancelled` when the work running in this context was abandoned by its caller.

    Raises:
        Cancelled: The caller set the work's stop event.
    """
    if cancelled():
        raise Cancelled("the caller stopped waiting for this compression (its deadline passed)")


def generation_stop() -> Any:
    """``stopping_criteria`` for a ``generate`` call: a list that ends generation at the next token once the work
    is abandoned (then :func:`check_cancelled` raises), or ``None`` (generate's default) where the work cannot be
    cancelled."""
    if _STOP.get() is None:
        return None
    import torch  # lazy: this module is imported by adapters that may never run a model
    from transformers import StoppingCriteria, StoppingCriteriaList  # lazy: likewise

    class Abandoned(StoppingCriteria):  # type: ignore[misc]
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            return torch.full((input_ids.shape[0],), cancelled(), dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([Abandoned()])
