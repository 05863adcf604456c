"""Runtime warnings: what a call did less well than asked, reported the one way every part of the library does.

A call that succeeds but cannot do all it was asked (a sentence larger than the budget skipped, a conversation
whose protected messages exceed its budget, a damaged cache entry, a store that fails, an adapter that fell back
to its input) says so twice, in the same words: a ``warnings.warn`` pointing at the user's line (the developer
sees it where the call was made; :mod:`tpc_core.diagnostics.caller`) and a ``WARNING`` record on the module's logger (a
deployment's logs keep it). Settings errors are exceptions raised before any work; per-call figures are events.
"""

from __future__ import annotations

import logging

from tpc_core.diagnostics.caller import warn_at_caller

__all__ = ["TPCRuntimeWarning", "runtime_warning"]


class TPCRuntimeWarning(UserWarning):
    """A call succeeded but did less than it was asked (see the module's docstring)."""


def runtime_warning(logger: logging.Logger, message: str, *, warn: bool = True) -> None:
    """Report ``message`` on ``logger`` at WARNING and, with ``warn``, as a :class:`TPCRuntimeWarning` at the first
    frame outside the library (``warn=False``: logged only, where the warning was already shown once)."""
    logger.warning(message)
    if warn:
        warn_at_caller(message, TPCRuntimeWarning)
