"""One channel per runtime notice: a helper that checks an operator's event is logged and not warned."""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Iterator

import pytest


@contextlib.contextmanager
def logged_only(caplog: pytest.LogCaptureFixture, match: str, *, count: int | None = None) -> Iterator[None]:
    """Within the block, a WARNING record matching ``match`` is logged (``count`` of them, where given) and no
    warning says the same (``re.search`` on the message)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    logged = [record for record in caplog.records
              if record.levelno == logging.WARNING and re.search(match, record.getMessage())]
    assert logged, f"no WARNING record matches {match!r}: {[r.getMessage() for r in caplog.records]}"
    if count is not None:
        assert len(logged) == count, [record.getMessage() for record in logged]
    warned = [str(warning.message) for warning in caught if re.search(match, str(warning.message))]
    assert not warned, f"also warned (one channel per notice): {warned}"
