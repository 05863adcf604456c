import math

import pytest

from tpc_core.selection import resolve_budget, select_sentences


def test_budget_from_rate_and_tokens():
    assert resolve_budget(1000) == 200
    assert resolve_budget(1000, rate=0.33) == 330
    assert resolve_budget(1000, target_tokens=50) == 50
    assert resolve_budget(7, rate=1.0) == 7


@pytest.mark.parametrize("kwargs, message", [
    ({"target_tokens": 0}, "positive"),
    ({"target_tokens": -5}, "positive"),
    ({"rate": 0.0}, r"\(0, 1\]"),
    ({"rate": 1.5}, r"\(0, 1\]"),
    ({"rate": math.nan}, r"\(0, 1\]"),
    ({"rate": 0.5, "target_tokens": 10}, "not both"),
])
def test_bad_budgets_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        resolve_budget(100, **kwargs)


@pytest.mark.parametrize("kwargs", [{"target_tokens": 1.5}, {"target_tokens": True}, {"rate": "0.2"}])
def test_badly_typed_budgets_raise_type_error(kwargs):
    with pytest.raises(TypeError):
        resolve_budget(100, **kwargs)


def test_topk_under_budget_in_original_order():
    scores = [0.1, 0.9, 0.5, 0.8]
    counts = [5, 5, 5, 5]
    assert select_sentences(scores, counts, 10) == [1, 3]
    assert select_sentences(scores, counts, 15) == [1, 2, 3]


def test_oversized_sentence_is_skipped_and_smaller_ones_fill_the_room():
    assert select_sentences([0.9, 0.5, 0.4], [50, 4, 4], 10) == [1, 2]


def test_forced_sentences_first_but_never_over_budget():
    assert select_sentences([0.1, 0.9, 0.8], [4, 4, 4], 8, force_keep=[True, False, False]) == [0, 1]
    assert select_sentences([0.1, 0.9], [20, 4], 8, force_keep=[True, False]) == [1]


def test_ties_broken_by_position_and_separator_cost():
    assert select_sentences([0.5, 0.5, 0.5], [3, 3, 3], 6) == [0, 1]
    assert select_sentences([0.5, 0.5, 0.5], [3, 3, 3], 6, separator_tokens=1) == [0]


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError):
        select_sentences([0.1], [1, 2], 5)
