import math

import pytest

from tpc_core.engine.selection.budget import resolve_budget, top_k_within_budget


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
    assert top_k_within_budget(scores, counts, 10) == [1, 3]
    assert top_k_within_budget(scores, counts, 15) == [1, 2, 3]


def test_oversized_sentence_is_skipped_and_smaller_ones_fill_the_room():
    assert top_k_within_budget([0.9, 0.5, 0.4], [50, 4, 4], 10) == [1, 2]


def test_forced_sentences_first_but_never_over_budget():
    assert top_k_within_budget([0.1, 0.9, 0.8], [4, 4, 4], 8, force_keep=[True, False, False]) == [0, 1]
    assert top_k_within_budget([0.1, 0.9], [20, 4], 8, force_keep=[True, False]) == [1]


def test_ties_broken_by_position_and_separator_cost():
    assert top_k_within_budget([0.5, 0.5, 0.5], [3, 3, 3], 6) == [0, 1]
    assert top_k_within_budget([0.5, 0.5, 0.5], [3, 3, 3], 6, separator_tokens=1) == [0]


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError):
        top_k_within_budget([0.1], [1, 2], 5)


# ---------------------------------------------------------------------------------------------- budget policy
from tpc_core.engine.selection.budget import allocate, document_budgets, fit_to_budget, join_kept  # noqa: E402
from tpc_core.engine.tokens import TokenCounter  # noqa: E402

CHARS = TokenCounter(len, name="chars")


def test_document_budgets_global_and_proportional_shares():
    assert document_budgets(30, [10, 20, 30], 62, "global") == [30]
    shares = document_budgets(30, [10, 20, 30], 62, "per_document")
    assert shares == [30 * 10 // 62, 30 * 20 // 62, 30 * 30 // 62] and sum(shares) <= 30
    assert document_budgets(5, [0], 0, "per_document") == [0]
    with pytest.raises(ValueError, match="budget_scope"):
        document_budgets(5, [1], 1, "per_doc")


def test_allocate_runs_the_picker_per_group():
    seen = []

    def pick(members, budget):
        seen.append((members, budget))
        return [0]  # the first member of each group

    assert allocate([0, 0, 1, 1, 1], [7, 9], pick) == frozenset({0, 2})
    assert seen == [([0, 1], 7), ([2, 3, 4], 9)]


def test_join_kept_uses_the_whitespace_after_each_kept_sentence():
    document = "One.\r\nTwo.\tThree. Four."
    spans = [(0, 4), (6, 10), (11, 17), (18, 23)]
    assert join_kept(document, spans, [0, 1, 3]) == "One.\r\nTwo.\tFour."
    assert join_kept(document, spans, [2]) == "Three."
    assert join_kept("A.B.", [(0, 2), (2, 4)], [0, 1]) == "A.B."  # no gap in the original: none added


def test_fit_to_budget_counts_the_separator_and_drops_the_weakest():
    documents = ["Alice went to Paris. Bob stayed home.", "Carol flew to Rome. Rome is in Italy."]
    spans = [[(0, 20), (21, 37)], [(0, 19), (20, 37)]]
    priority = [(False, 0.9), (False, 0.1), (False, 0.8), (False, 0.2)]
    # 20 + 19 characters fit 40 only without the "\n\n" between the documents: the weakest kept one goes.
    joined = fit_to_budget(documents, spans, {0, 2}, priority, 40, CHARS, "\n\n")
    assert joined.prompt("\n\n") == "Alice went to Paris." and joined.total == 20 and joined.kept == ((0,), ())
    roomy = fit_to_budget(documents, spans, {0, 2}, priority, 41, CHARS, "\n\n")
    assert roomy.prompt("\n\n") == "Alice went to Paris.\n\nCarol flew to Rome." and roomy.total == 41
    forced = fit_to_budget(documents, spans, {0, 2}, [(False, 0.9), (False, 0.1), (True, 0.0), (False, 0.2)], 40,
                           CHARS, "\n\n")
    assert forced.kept == ((), (0,))  # a forced sentence outlives a higher-scored free one
    assert fit_to_budget(documents, spans, {0}, priority, 5, CHARS, "\n\n").total == 0
