"""The shipped tpc-mini gives the outputs recorded before the Engine v2 refactor (``tests/golden_cases.py``)."""

from __future__ import annotations

import json

import pytest

from tests.golden_cases import GOLDEN, cases, run_case

RECORDED = json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "context", "options"), cases(), ids=[name for name, _, _ in cases()])
def test_tpc_mini_output_is_unchanged(tpc_mini, name, context, options):
    actual = run_case(tpc_mini, context, options)
    expected = RECORDED[name]
    assert actual["scores"] == pytest.approx(expected["scores"], abs=1e-5)
    assert {k: v for k, v in actual.items() if k != "scores"} == {k: v for k, v in expected.items() if k != "scores"}
