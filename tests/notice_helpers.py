"""One channel per runtime notice: a helper that checks an operator's event is logged and not warned."""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Iterator
from typing import Any

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


_OVERSIZED = "larger than the whole budget"

# The golden Declaration cases keep about a tenth of a 1096-token text (a 109-token budget): some of its long
# sentences are larger than the whole budget, skipped, and said so in a UserWarning. No other golden case has one.
GOLDEN_OVERSIZED = frozenset({"aware_declaration", "agnostic_declaration"})


def oversized() -> pytest.WarningsRecorder:
    """Within the block, the compressions warn that sentences larger than the whole budget were skipped."""
    return pytest.warns(UserWarning, match=_OVERSIZED)


def compress_warning_when_oversized(compressor: Any, *args: Any, **options: Any) -> Any:
    """``compressor.compress(*args, **options)``, checking that it warns of sentences larger than the whole budget
    exactly when its result counts some (``oversized_sentences``): for inputs made up by the test, where either may
    happen. Every other warning is warned again, for the suite to report."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compressor.compress(*args, **options)
    said = [w for w in caught if issubclass(w.category, UserWarning) and _OVERSIZED in str(w.message)]
    assert bool(said) == (result.oversized_sentences > 0), ([str(w.message) for w in said], result.oversized_sentences)
    for other in caught:
        if other not in said:
            warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    return result
