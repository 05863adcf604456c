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


# ------------------------------------------------------------------------------------------ the one budget loop
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tpc_core.engine.selection.budget import join_documents  # noqa: E402
from tpc_core.engine.selection.fitting import drop_to_fit, fill_floors  # noqa: E402


@st.composite
def loop_cases(draw):
    """Parts of sentences (sizes and distinct ranks), some kept, some of those pinned, floors over the parts, a
    separator cost and a budget."""
    sizes = draw(st.lists(st.lists(st.integers(0, 12), max_size=6), min_size=1, max_size=5))
    names = [(p, i) for p, part in enumerate(sizes) for i in range(len(part))]
    ranks = dict(zip(names, draw(st.permutations(range(len(names))))))
    kept = [[i for i in range(len(part)) if draw(st.booleans())] for part in sizes]
    pinned = [{i for i in part if draw(st.integers(0, 4)) == 0} for part in kept]
    floor_parts = draw(st.lists(st.integers(0, len(sizes) - 1), unique=True, max_size=len(sizes)))
    floors = [floor_parts[k:k + 2] for k in range(0, len(floor_parts), 2)]  # disjoint groups of one or two parts
    separator = draw(st.integers(0, 3))
    budget = draw(st.integers(0, sum(map(sum, sizes)) + 10))
    return sizes, ranks, kept, pinned, floors, separator, budget


def _measures(sizes, separator):
    def count(part, kept):
        return sum(sizes[part][i] for i in kept)

    def total(counts, kept):  # parts joined by a separator that costs tokens between non-empty parts
        return sum(counts) + separator * max(sum(1 for part in kept if part) - 1, 0)

    return count, total


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(loop_cases())
def test_the_budget_loop_fits_keeps_pins_floors_and_order(case):
    sizes, ranks, kept, pinned, floors, separator, budget = case
    count, total = _measures(sizes, separator)
    # Sentences are named (part, index) so that their rank is known wherever they are.
    named = [[(p, i) for i in part] for p, part in enumerate(kept)]
    pins = [{(p, i) for i in part} for p, part in enumerate(pinned)]
    fitted = drop_to_fit(named, budget, lambda p, ids: count(p, [i for _, i in ids]), total=total,
                         weakest=lambda s: ranks[s], pinned=pins, floors=floors)
    for p, part in enumerate(fitted.kept):
        assert list(part) == [s for s in named[p] if s in part]  # order preserved: only drops
        assert pins[p] <= set(part)  # pinned sentences kept
        assert fitted.counts[p] == count(p, [i for _, i in part])
    assert fitted.total == total(fitted.counts, fitted.kept)
    for group in floors:  # a floor that kept a sentence keeps one
        if any(named[p] for p in group):
            assert any(fitted.kept[p] for p in group)
    if fitted.total > budget:  # over the budget only when nothing more may go
        locked = {p for group in floors if sum(len(fitted.kept[q]) for q in group) == 1 for p in group}
        assert all(s in pins[p] or p in locked for p, part in enumerate(fitted.kept) for s in part)
    if not floors:  # the weakest go first: every dropped sentence ranks below every kept free one
        dropped = [s for p, part in enumerate(named) for s in part if s not in fitted.kept[p]]
        free = [s for p, part in enumerate(fitted.kept) for s in part if s not in pins[p]]
        assert all(ranks[d] < ranks[f] for d in dropped for f in free)
    assert fitted == drop_to_fit(named, budget, lambda p, ids: count(p, [i for _, i in ids]), total=total,
                                 weakest=lambda s: ranks[s], pinned=pins, floors=floors)  # deterministic


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(loop_cases())
def test_a_floor_that_kept_nothing_gets_its_strongest_sentence(case):
    sizes, ranks, kept, _, floors, _, _ = case
    named = [[(p, i) for i in part] for p, part in enumerate(kept)]
    everything = [[(p, i) for i in range(len(part))] for p, part in enumerate(sizes)]
    filled = fill_floors(named, everything, floors, lambda s: ranks[s])
    for group in floors:
        options = [s for p in group for s in everything[p]]
        if any(named[p] for p in group) or not options:
            assert all(filled[p] == named[p] for p in group)
        else:
            added = [s for p in group for s in filled[p]]
            assert added == [max(options, key=lambda s: ranks[s])]
    assert all(filled[p] == named[p] for p in range(len(sizes)) if not any(p in group for group in floors))


def _fit_to_budget_as_it_was(documents, spans, chosen, priority, budget, counter, separator, counts, protected):
    """The loop fit_to_budget ran before it became a call of drop_to_fit: every document recounted each turn."""
    flat = [(d, i) for d, doc_spans in enumerate(spans) for i in range(len(doc_spans))]
    remaining = set(chosen)
    while True:
        kept = [[] for _ in documents]
        for k in sorted(remaining):
            kept[flat[k][0]].append(flat[k][1])
        joined = join_documents(documents, spans, kept, counter, separator, counts)
        droppable = remaining - protected
        if joined.total <= budget or not droppable:
            return joined
        remaining.discard(min(droppable, key=lambda k: (priority[k][0], priority[k][1], -k)))


SENTENCES = ["Alice went to Paris.", "Bob stayed home.", "Rome is old.", "It rained.", "Pasta!", "The end."]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(documents=st.lists(st.lists(st.sampled_from(SENTENCES), max_size=4), min_size=1, max_size=4),
       data=st.data(), separator=st.sampled_from(["\n\n", " ", ""]), budget=st.integers(0, 120))
def test_fit_to_budget_is_the_loop_it_was(documents, data, separator, budget):
    texts = [" ".join(document) for document in documents]
    spans = []
    for document in documents:
        position, doc_spans = 0, []
        for sentence in document:
            doc_spans.append((position, position + len(sentence)))
            position += len(sentence) + 1
        spans.append(doc_spans)
    size = sum(map(len, spans))
    chosen = data.draw(st.sets(st.integers(0, size - 1))) if size else set()
    priority = [(data.draw(st.booleans()), data.draw(st.floats(-1, 1))) for _ in range(size)]
    protected = frozenset(k for k in chosen if data.draw(st.integers(0, 5)) == 0)
    counts = [[len(text[a:b]) for a, b in doc_spans] for text, doc_spans in zip(texts, spans)]
    for sentence_counts in (None, counts):
        assert fit_to_budget(texts, spans, chosen, priority, budget, CHARS, separator, sentence_counts, protected) \
            == _fit_to_budget_as_it_was(texts, spans, chosen, priority, budget, CHARS, separator, sentence_counts,
                                        protected)
