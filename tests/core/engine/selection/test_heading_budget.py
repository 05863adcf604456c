"""Bare headings have no standing of their own: a heading is kept only as context for a kept sentence of its
section, inside the one budget loop, so the budget still holds for the caller's counter and a heading never takes
the budget from the sentences that answer (``segmentation.headings``, ``selection.assembly.apply_budget``,
``selection.fitting.drop_to_fit``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.output.result import to_result
from tpc_core.engine.reading import segment
from tpc_core.engine.selection.assembly import compress_scored
from tpc_core.engine.selection.fitting import drop_to_fit
from tpc_core.engine.tokens import TokenCounter
from tpc_core.engine.values import Scored, Selection, Task, TaskSource
from tpc_core.segmentation import get_splitter, split_sentences

# A postmortem in the shape of the one a user compressed: sections under bare headings of every kind, three
# sentences that state a deadline, one per section, and the request written at the end.
POSTMORTEM = """Postmortem: checkout outage on 14 March

Summary.
On 14 March the checkout service returned errors for 47 minutes after a configuration push set the payment \
gateway's connection pool to zero. About 3,200 orders failed and customers saw a generic error page.

## Impact
Roughly 18 percent of checkout attempts failed during the window. Support received 412 tickets, most of them \
asking whether cards had been charged twice. Refunds for every failed pre-authorisation must reach customers by \
21 March, the deadline set by the card network.

Timeline.
The configuration change was merged at 08:55 without a second reviewer. Alerts on the error rate fired at 09:07, \
five minutes after the first failures. The on-call engineer rolled back the change at 09:51.

Root cause.
The client library reads a pool size of zero as no connections at all. Our validation accepted the value because \
the schema only checks that it is an integer. The gateway vendor committed to a deadline of 28 March for a client \
release that rejects a zero pool size.

What went well.
The rollback itself took under two minutes once the cause was known. Status page updates went out every ten \
minutes.

What went wrong.
The alert threshold was too high for a partial failure. The runbook for the payment gateway still pointed at the \
retired dashboard.

**Action items**
The payments team must add a schema check for the pool size before the deadline of 4 April. The runbook will point \
at the new dashboard from the next rotation on.

List every deadline mentioned in this postmortem."""

DEADLINES = ["Refunds for every failed pre-authorisation must reach customers by 21 March, the deadline set by the "
             "card network.",
             "The gateway vendor committed to a deadline of 28 March for a client release that rejects a zero pool "
             "size.",
             "The payments team must add a schema check for the pool size before the deadline of 4 April."]
REQUEST = "List every deadline mentioned in this postmortem."


# Each heading of the postmortem and the sentences of its section, as a reader sees them.
SECTIONS = {
    "Summary.": ["On 14 March the checkout service returned errors for 47 minutes after a configuration push set the "
                 "payment gateway's connection pool to zero.",
                 "About 3,200 orders failed and customers saw a generic error page."],
    "## Impact": ["Roughly 18 percent of checkout attempts failed during the window.",
                  "Support received 412 tickets, most of them asking whether cards had been charged twice.",
                  DEADLINES[0]],
    "Timeline.": ["The configuration change was merged at 08:55 without a second reviewer.",
                  "Alerts on the error rate fired at 09:07, five minutes after the first failures.",
                  "The on-call engineer rolled back the change at 09:51."],
    "Root cause.": ["The client library reads a pool size of zero as no connections at all.",
                    "Our validation accepted the value because the schema only checks that it is an integer.",
                    DEADLINES[1]],
    "What went well.": ["The rollback itself took under two minutes once the cause was known.",
                        "Status page updates went out every ten minutes."],
    "What went wrong.": ["The alert threshold was too high for a partial failure.",
                         "The runbook for the payment gateway still pointed at the retired dashboard."],
    "**Action items**": [DEADLINES[2], "The runbook will point at the new dashboard from the next rotation on.",
                         REQUEST],
}


def _orphans(kept: list[str]) -> list[str]:
    """The kept headings of the postmortem none of whose section's sentences is kept."""
    return [heading for heading, section in SECTIONS.items() if heading in kept and not set(section) & set(kept)]


# ----------------------------------------------------------------------------------------- selection, no model
def test_every_heading_of_the_postmortem_is_found_with_its_section():
    from tpc_core.segmentation.headings import heading_sections  # here only: the other tests run on older trees

    spans = split_sentences(POSTMORTEM)
    found = {POSTMORTEM[slice(*spans[h])]: [POSTMORTEM[slice(*spans[k])] for k in section]
             for h, section in heading_sections(POSTMORTEM, spans).items()}
    assert found == SECTIONS


def _scored(text: str, scores_by_text: dict[str, float], options: CompressionOptions, counter: TokenCounter,
            task: Task) -> Scored:
    segmented = segment((text,), get_splitter("nupunkt"), counter, options)
    return Scored(segmented, tuple(scores_by_text.get(s, 0.0) for s in segmented.sentences), task)


WORDS = TokenCounter(lambda text: len(text.split()))


@pytest.mark.parametrize("extracted", [False, True])
def test_headings_scored_above_the_answers_take_no_budget_from_them(extracted):
    # The scorer ranks the short headings above the deadline sentences, as tpc-mini does with bare labels: on their
    # own standing they would fill the budget and push two deadlines out.
    scores = {heading: 0.9 for heading in SECTIONS} | {deadline: 0.6 for deadline in DEADLINES} | {REQUEST: 0.95}
    options = CompressionOptions(target_tokens=70)
    sentences = split_sentences(POSTMORTEM)
    request = tuple(k for k, span in enumerate(sentences) if POSTMORTEM[slice(*span)] == REQUEST)
    task = (Task(REQUEST, TaskSource.EXTRACTED, Selection.RELEVANCE, request=request) if extracted
            else Task.from_question("Which deadlines are mentioned?"))
    result = to_result(compress_scored(_scored(POSTMORTEM, scores, options, WORDS, task), options, WORDS), "\n\n")
    kept = [s.text for s in result.kept_sentences()]

    assert all(deadline in kept for deadline in DEADLINES) and REQUEST in kept
    assert _orphans(kept) == []
    # No heading displaced a sentence: the title (6 words) took the 6 the deadlines and the request left.
    assert [h for h in SECTIONS if h in kept] == []
    assert result.compressed_tokens == WORDS(result.compressed_prompt) <= result.budget == 70


def test_a_heading_fills_only_the_room_left_and_is_the_first_to_go():
    text = "Impact.\nOrders failed for an hour.\nRefunds are due by 21 March.\n\nAction items.\nAdd a check."
    counter = TokenCounter(len)  # characters: the line breaks the join keeps count too
    scores = {"Impact.": 0.95, "Orders failed for an hour.": 0.2, "Refunds are due by 21 March.": 0.9,
              "Action items.": 0.9, "Add a check.": 0.3}
    task = Task.from_question("When are refunds due?")

    def compressed(budget: int) -> str:
        options = CompressionOptions(target_tokens=budget)
        result = to_result(compress_scored(_scored(text, scores, options, counter, task), options, counter), "\n\n")
        assert result.compressed_tokens == len(result.compressed_prompt) <= budget
        return result.compressed_prompt

    # The sentences take 28 + 12 of 50 ("Orders failed ..." does not fit); of the 10 left, "Impact." (7) fills some,
    # "Action items." (13) does not fit. The join's line breaks make it 50.
    assert compressed(50) == "Impact.\nRefunds are due by 21 March.\n\nAdd a check."
    # At 49 the line breaks of the join overrun by one: the heading goes, not the weaker sentence.
    assert compressed(49) == "Refunds are due by 21 March.\n\nAdd a check."


def test_the_label_right_above_a_request_keeps_its_own_standing():
    text = "Impact.\nOrders failed for an hour.\n\n### Your job\nList every deadline."
    options = CompressionOptions(target_tokens=6)
    segmented = segment((text,), get_splitter("nupunkt"), WORDS, options)
    request = (segmented.sentences.index("List every deadline."),)
    label = segmented.sentences.index("### Your job")
    scores = tuple(0.9 if k == label else 0.1 for k in range(len(segmented.sentences)))
    task = Task("List every deadline.", TaskSource.EXTRACTED, Selection.RELEVANCE, request=request)
    result = to_result(compress_scored(Scored(segmented, scores, task), options, WORDS), "\n\n")
    assert result.compressed_prompt == "### Your job\nList every deadline."


# ------------------------------------------------------------------------------------------- the loop itself
def test_the_loop_drops_context_first_and_a_heading_without_its_section_before_counting():
    sizes = {"H": 2, "a": 5, "b": 5, "G": 2, "c": 5}
    ranks = {"H": 9, "a": 3, "b": 1, "G": 8, "c": 2}

    def count(_, kept):
        return sum(sizes[s] for s in kept)

    serves = {"H": {"a", "b"}, "G": {"c"}}
    # 19 > 17: a heading goes first (G, the weaker one), not the weakest sentence (b): 17 fits.
    fitted = drop_to_fit([["H", "a", "b", "G", "c"]], 17, count, weakest=ranks.__getitem__, serves=serves)
    assert fitted.kept == (("H", "a", "b", "c"),) and fitted.total == 17
    # 19 > 12: both headings go before any sentence, then b (the weakest): a and c remain, 10.
    fitted = drop_to_fit([["H", "a", "b", "G", "c"]], 12, count, weakest=ranks.__getitem__, serves=serves)
    assert fitted.kept == (("a", "c"),) and fitted.total == 10
    # A heading whose section kept nothing is dropped before the first count, within budget or not.
    fitted = drop_to_fit([["H", "G", "c"]], 100, count, weakest=ranks.__getitem__, serves=serves)
    assert fitted.kept == (("G", "c"),) and fitted.total == 7


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(sizes=st.lists(st.integers(0, 9), min_size=1, max_size=12), data=st.data())
def test_the_loop_never_keeps_context_without_a_kept_sentence_it_serves(sizes, data):
    names = list(range(len(sizes)))
    context = [k for k in names if data.draw(st.booleans())]
    serves = {k: set(data.draw(st.lists(st.sampled_from(names), max_size=3))) - set(context) for k in context}
    kept = sorted(data.draw(st.sets(st.sampled_from(names))))
    pinned = {k for k in kept if k not in serves and data.draw(st.integers(0, 4)) == 0}
    budget = data.draw(st.integers(0, sum(sizes) + 3))
    ranks = dict(zip(names, data.draw(st.permutations(names))))

    fitted = drop_to_fit([kept], budget, lambda _, ids: sum(sizes[k] for k in ids), weakest=ranks.__getitem__,
                         pinned=[pinned], serves=serves)
    survivors = set(fitted.kept[0])
    assert list(fitted.kept[0]) == [k for k in kept if k in survivors] and pinned <= survivors
    assert all(serves[k] & survivors for k in survivors & set(serves))
    assert fitted.total == sum(sizes[k] for k in survivors)
    assert fitted.total <= budget or survivors <= pinned  # over only with nothing left to drop
    dropped_sentences = [k for k in kept if k not in survivors and k not in serves]
    assert not dropped_sentences or not survivors & set(serves)  # context goes before any sentence


# ------------------------------------------------------------------------------------------ the real tpc-mini
@pytest.mark.parametrize("rate", [0.2, 0.35])
@pytest.mark.parametrize("question", [None, "Which deadlines are mentioned?"])
def test_tpc_mini_keeps_no_bare_heading_of_the_postmortem(tpc_mini, rate, question):
    result = tpc_mini.compress(POSTMORTEM, rate=rate, question=question)
    kept = [s.text for s in result.kept_sentences()]
    assert _orphans(kept) == []
    assert result.compressed_tokens == tpc_mini.token_counter(result.compressed_prompt) <= result.budget
    if question is None:
        assert REQUEST in kept  # the request written in the prompt is kept, and it is the task
        assert result.task_description == REQUEST


@pytest.mark.xfail(strict=True, reason="tpc-mini ranks two of the three deadline sentences below sentences that "
                                       "answer nothing: the budget bare headings took went to those, not to them")
def test_tpc_mini_keeps_every_deadline_of_the_postmortem_at_rate_035(tpc_mini):
    kept = [s.text for s in tpc_mini.compress(POSTMORTEM, rate=0.35).kept_sentences()]
    assert [deadline for deadline in DEADLINES if deadline not in kept] == []
