"""Fail-safe adapter calls: ``on_error`` and ``deadline_ms``, the same for every adapter (neither framework imported).

A production chain must not fail a query because compression failed, nor wait on it past a deadline:

* ``on_error="passthrough"``: any exception inside compression (the model fails to load, the device runs out of
  memory, a store or a splitter raises, a document cannot be read) returns the input unchanged; one WARNING record
  on ``tpc_integrations`` (:mod:`tpc_core.diagnostics.notices`: an operator's event, not a warning) names the error,
  and the call's event carries ``fallback="error"`` and ``error="TypeName: message"``. ``"raise"`` (the default)
  lets the original exception through.
* ``deadline_ms``: the compression runs in a worker thread and the call waits at most that long. A call that
  passes it returns what it can: its input uncompressed (``returned="input"``), or, for the index-time
  transformers, which compress batch by batch, the documents of the batches already done and the rest whole
  (``returned="partial"``); its event carries ``fallback="deadline"``. Python cannot stop a thread, so the work
  left behind is cancelled cooperatively (:mod:`tpc_core.engine.cancellation`): it stops at its next model step (a
  forward pass, a generated token, a batch), its result dropped. Its thread is not a daemon: at exit the
  interpreter waits for that one step instead of killing the thread inside torch's or the tokenizer's native code
  (which aborts the process).
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from tpc_core.diagnostics import operator_notice
from tpc_core.engine import run_cancellable

__all__ = ["FailSafe", "Fallback", "Progress", "guarded"]

logger = logging.getLogger("tpc_integrations")
T = TypeVar("T")


class FailSafe(Protocol):
    """What :func:`guarded` reads of an adapter: its ``on_error`` and ``deadline_ms`` settings."""

    @property
    def on_error(self) -> str: ...

    @property
    def deadline_ms(self) -> float | None: ...


@dataclass(frozen=True)
class Fallback:
    """Why a call returned its input, or part of it.

    Attributes:
        reason: "error" (``on_error="passthrough"`` caught an exception) or "deadline".
        returned: "input" (everything uncompressed) or "partial" (the first ``done`` documents compressed).
        error: ``"TypeName: message"`` of the exception, for "error".
        done: Documents compressed before the deadline.
        total: Documents of the call.
    """

    reason: str
    returned: str
    error: str | None = None
    done: int = 0
    total: int = 0

    def event_data(self) -> dict[str, Any]:
        """The keys a fallback adds to the call's event / callback tags."""
        return {"fallback": self.reason, "returned": self.returned, "error": self.error,
                "documents_compressed": self.done, "documents_in": self.total}


@dataclass
class Progress(Generic[T]):
    """What a batched work function has done so far (read when the deadline passes) and the flag that stops it
    between batches."""

    done: list[T] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


def guarded(settings: FailSafe, label: str, work: Callable[[Progress[Any]], T], total: int
            ) -> tuple[T | None, Fallback | None, Progress[Any]]:
    """Run ``work`` under the adapter's ``on_error`` and ``deadline_ms``.

    Args:
        settings: The adapter.
        label: The adapter's name, for the warning.
        work: The compression; it may append finished items to ``progress.done`` and stop when ``progress.stop``
            is set.
        total: How many documents (or messages) the call has, for the event.

    Returns:
        ``(value, None, progress)`` when the work finished in time; ``(None, fallback, progress)`` otherwise.

    Raises:
        Exception: The work's own exception, unchanged, with ``on_error="raise"``.
    """
    progress: Progress[Any] = Progress()
    try:
        if settings.deadline_ms is None:
            return work(progress), None, progress
        finished, value = _within(settings.deadline_ms / 1000.0, work, progress)
    except Exception as error:
        if settings.on_error == "raise":
            raise
        fallback = Fallback("error", "input", f"{type(error).__name__}: {error}", 0, total)
        operator_notice(logger, f"{label} failed ({fallback.error}); on_error='passthrough' returns its input "
                                "unchanged.")
        return None, fallback, progress
    if finished:
        return value, None, progress
    progress.stop.set()
    done = len(progress.done)
    fallback = Fallback("deadline", "partial" if done else "input", None, done, total)
    operator_notice(logger, f"{label} passed its deadline of {settings.deadline_ms:g} ms: "
                            + (f"{done} of {total} documents compressed, the rest returned whole." if done else
                               "its input is returned uncompressed."))
    return None, fallback, progress


def _within(seconds: float, work: Callable[[Progress[Any]], T], progress: Progress[Any]) -> tuple[bool, T | None]:
    """``work(progress)`` in a worker thread, waited for at most ``seconds``: ``(True, value)``, ``(False, None)``
    past the deadline; the work's exception is raised here, unchanged.

    The work runs cancellably on ``progress.stop``, which the caller sets past the deadline. The thread is not a
    daemon: a daemon thread still inside native code when the interpreter shuts down is killed there, and that
    aborts the process ("terminate called without an active exception"); this one is joined at exit, after its
    current model step."""
    box: dict[str, Any] = {}
    finished = threading.Event()
    context = contextvars.copy_context()

    def target() -> None:
        try:
            box["value"] = context.run(run_cancellable, progress.stop, work, progress)
        except BaseException as error:  # noqa: BLE001 - handed to the waiting caller, who decides
            box["error"] = error
        finally:
            finished.set()

    threading.Thread(target=target, name="tpc-deadline", daemon=False).start()
    if not finished.wait(seconds):
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box["value"]
