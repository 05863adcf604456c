"""Runtime notices: what a call did less well than asked, each on the one channel whose reader can act on it.

* :func:`caller_warning`: a ``warnings.warn`` (a :class:`TPCRuntimeWarning`) pointing at the user's line
  (:mod:`tpc_core.diagnostics.caller`), for what the caller's code should change: a budget too small for the
  conversation's protected messages, a prompt in a script the checkpoint was not trained on. (The budget warnings
  of a compression, a sentence larger than the whole budget, are also at the caller's line.)
* :func:`operator_notice`: a ``WARNING`` record on the module's logger, for what an operator should see in a
  deployment's logs: a cache store that fails or a damaged entry, an adapter that fell back to its input or passed
  its deadline, a sentence the splitter cut for length (also counted in ``CompressionResult.truncated_sentences``).

One event is told on one channel, never both. Settings errors are exceptions raised before any work; per-call
figures are events.
"""

from __future__ import annotations

import logging

from tpc_core.diagnostics.caller import warn_at_caller

__all__ = ["TPCRuntimeWarning", "caller_warning", "operator_notice"]


class TPCRuntimeWarning(UserWarning):
    """A call succeeded but did less than it was asked, in a way the caller's code can change (see the module)."""


def caller_warning(message: str) -> None:
    """``message`` as a :class:`TPCRuntimeWarning` at the first frame outside the library."""
    warn_at_caller(message, TPCRuntimeWarning)


def operator_notice(logger: logging.Logger, message: str) -> None:
    """``message`` as a ``WARNING`` record on ``logger``."""
    logger.warning(message)
