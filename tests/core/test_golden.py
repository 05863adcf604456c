"""The shipped tpc-mini gives the outputs recorded before the Engine v2 refactor (``tests/golden_cases.py``)."""

from __future__ import annotations

import json
import warnings

import pytest

from tests.golden_cases import GOLDEN, cases, run_case
from tests.notice_helpers import GOLDEN_OVERSIZED

RECORDED = json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "context", "options"), cases(), ids=[name for name, _, _ in cases()])
def test_tpc_mini_output_is_unchanged(tpc_mini, name, context, options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        actual = run_case(tpc_mini, context, options)
    oversized = [str(w.message) for w in caught
                 if issubclass(w.category, UserWarning) and "larger than the whole budget" in str(w.message)]
    assert bool(oversized) == (name in GOLDEN_OVERSIZED), oversized
    for other in caught:  # every other warning is still the suite's to report
        if str(other.message) not in oversized:
            warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    expected = RECORDED[name]
    assert actual["scores"] == pytest.approx(expected["scores"], abs=1e-5)
    assert {k: v for k, v in actual.items() if k != "scores"} == {k: v for k, v in expected.items() if k != "scores"}
