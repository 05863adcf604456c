"""Tool results sharing the room by relevance: a shrink compresses every result together, so a result that holds
what the task needs keeps it however early it was read, and one that answers nothing gives its room away. The
ledger's planning is checked with plain functions (no model); the joint compression with the real tpc-mini."""

from __future__ import annotations

import pytest

from tests.conversation_helpers import is_selection
from tpc_core.conversation.tool_results import (
    ToolResult,
    ToolResultLedger,
    compress_tool_texts_together,
    emptied_note,
    fair_share,
    joint_question,
)

SIZE = 1000


def results_of(ledger: ToolResultLedger, texts: list[str]) -> list[ToolResult]:
    return [ToolResult(ledger.key_of(f"c{k}", text), text, None, len(text)) for k, text in enumerate(texts)]


def relevant(result: ToolResult) -> bool:
    return result.text[0] in "rs"


class Together:
    """Stands for the engine's joint read: the relevant results ("r..." and "s...") share the total evenly, the
    others are emptied (their note); it records each call's results and total."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, chosen, total):
        self.calls.append((len(chosen), total))
        keep = [result for result in chosen if relevant(result)]
        each = fair_share([result.tokens for result in keep], total)
        return [result.text[:each] if relevant(result) else emptied_note(result.tokens) for result in chosen]


def cut(chosen, share):
    return [result.text[:share] for result in chosen]


def test_a_shrink_keeps_the_earlier_result_that_holds_the_answer():
    texts = ["r" * SIZE, "i" * SIZE, "s" * SIZE]
    by_relevance = ToolResultLedger(shares="relevance")
    together = Together()
    results = results_of(by_relevance, texts)
    first = by_relevance.fit(results[:1], 1500, cut, len, 0, together)
    second = by_relevance.fit(results[:2], 1500, cut, len, 0, together)
    # the result read first keeps its bytes; the one that answers nothing gives its room away
    assert [fate for _, fate in first] == ["whole"]
    assert [fate for _, fate in second] == ["reused", "compressed"]
    assert [entry.text for entry, _ in second] == [texts[0], emptied_note(SIZE)]
    evenly = ToolResultLedger(shares="even")
    evenly.fit(results[:1], 1500, cut, len)
    even = evenly.fit(results[:2], 1500, cut, len)
    assert [entry.tokens for entry, _ in even] == [750, 750]  # an even share starves it
    third = by_relevance.fit(results, 1500, cut, len, 0, together)
    # a later shrink shares the room between the two that answer: the total lowered once by the note's overrun
    note = len(emptied_note(SIZE))
    assert [entry.tokens for entry, _ in third] == [(1500 - note) // 2, note, (1500 - note) // 2]
    assert sum(entry.tokens for entry, _ in third) <= 1500
    assert together.calls == [(2, 1500), (3, 1500), (3, 1500 - note)]


def test_a_new_result_changes_nothing_before_it_until_a_shrink_shares_the_room_again():
    texts = ["r" * SIZE, "i" * SIZE, "s" * SIZE, "j" * SIZE]
    note = emptied_note(SIZE)
    ledger = ToolResultLedger(shares="relevance")
    together = Together()
    results = results_of(ledger, texts)
    calls = [ledger.fit(results[:n], 1800, cut, len, 2, together) for n in range(1, 5)]
    assert [[fate for _, fate in call] for call in calls[1:3]] == [["reused", "compressed"],
                                                                  ["reused", "reused", "compressed"]]
    assert [entry.text for entry, _ in calls[2]] == [texts[0], note, "s" * 450]
    # each new result alone within its planned share (the one that answers nothing tried at the room at hand too)
    assert together.calls[:3] == [(1, 450), (1, 800), (1, 450)]
    # the fourth no longer fits: every result together, and the third regains what the first gives up
    assert together.calls[3:] == [(4, 1200)]
    assert [(entry.tokens, fate) for entry, fate in calls[3]] == [(600, "recompressed"), (len(note), "reused"),
                                                                  (600, "recompressed"), (len(note), "compressed")]
    assert all(sum(entry.tokens for entry, _ in call) <= 1800 for call in calls)


def test_texts_that_do_not_fit_together_fall_back_to_even_shares():
    texts = ["r" * SIZE, "s" * SIZE]
    ledger = ToolResultLedger(shares="relevance")
    results = results_of(ledger, texts)

    def overrunning(chosen, total):
        return [result.text for result in chosen]

    fates = ledger.fit(results, 1200, cut, len, 0, overrunning)
    assert [(entry.tokens, fate) for entry, fate in fates] == [(600, "compressed"), (600, "compressed")]


def test_a_plan_that_would_leave_out_everything_uses_the_room_at_hand():
    # the plan keeps room for two more results; a sentence longer than that share must still be sent now
    ledger = ToolResultLedger(shares="relevance")
    text = "r" * SIZE

    def whole_sentences(chosen, total):
        return [result.text[:total] if total >= 600 else emptied_note(result.tokens) for result in chosen]

    fates = ledger.fit(results_of(ledger, [text]), 900, cut, len, 2, whole_sentences)
    assert fates[0][0].text == text[:900] and fates[0][1] == "compressed"


def test_without_a_joint_compression_every_share_is_even():
    ledger = ToolResultLedger(shares="relevance")
    results = results_of(ledger, ["r" * SIZE, "i" * SIZE])
    fates = ledger.fit(results, 1000, cut, len)
    assert [entry.tokens for entry, _ in fates] == [500, 500]


def test_even_shares_are_the_default():
    ledger = ToolResultLedger()
    results = results_of(ledger, ["r" * SIZE, "i" * SIZE])
    fates = ledger.fit(results, 1000, cut, len, 0, Together())
    assert ledger.shares == "even" and [entry.tokens for entry, _ in fates] == [500, 500]


def test_an_unknown_sharing_rule_is_refused():
    with pytest.raises(ValueError, match="shares must be one of"):
        ToolResultLedger(shares="fair")


def test_results_are_compressed_together_toward_the_lines_their_questions_share():
    assert joint_question(["Who won?\nsearch final 1", "Who won?\nsearch final 2"]) == "Who won?"
    assert joint_question(["read_file a.md", "search b"]) == "read_file a.md\nsearch b"
    assert joint_question([None, None]) is None


ANSWER = "The treaty that ended the war was signed in Paris in September 1783 by the American and British envoys."
HISTORY = ("The war had dragged on for years after the last great battle. " + ANSWER + " Congress ratified it in "
           "January of the following year, and the last British troops left New York in November.")
COOKING = ("Knead the dough for ten minutes until it is smooth and elastic. Leave it to rise in a warm place for an "
           "hour. Bake the loaves at two hundred degrees until the crust sounds hollow when tapped.")
GARDEN = ("Tomatoes need six hours of sun a day and steady watering. Pinch out the side shoots as the plants grow. "
          "Feed them weekly once the first fruits appear on the lower trusses.")


def test_the_joint_compression_keeps_the_evidence_wherever_it_is(tpc_mini):
    counter = tpc_mini.engine.default_counter
    question = "Where and when was the treaty that ended the war signed?"
    texts = [COOKING, HISTORY, GARDEN]
    items = [(text, f"{question}\nsearch treaty {k + 1}", counter(text)) for k, text in enumerate(texts)]
    budget = counter(ANSWER) + 3  # less than any other sentence
    kept = compress_tool_texts_together(tpc_mini.engine, items, budget, counter, {})
    assert ANSWER in kept[1]
    assert sum(counter(text) for text in kept) <= budget
    splitter = tpc_mini.engine.splitter(None)
    assert all(is_selection(text, out, splitter) for text, out in zip(texts, kept))
    assert kept[0] == "" and kept[2] == ""  # what answers nothing gives its room to the evidence
    assert compress_tool_texts_together(tpc_mini.engine, items, 10_000, counter, {}) == texts


def test_a_repeated_result_is_compressed_once_and_sent_as_the_same_bytes():
    ledger = ToolResultLedger(shares="relevance")
    together = Together()
    text = "r" * SIZE
    results = [ToolResult(ledger.key_of(call_id, text), text, None, SIZE) for call_id in ("c0", "c1", "c0")]
    fates = ledger.fit(results, 1200, cut, len, 0, together)
    assert together.calls == [(1, 400)]  # one text, sent three times: each copy its own share
    assert [entry.text for entry, _ in fates] == ["r" * 400] * 3
    assert ledger.fit(results, 1200, cut, len, 0, together) == [(entry, "reused") for entry, _ in fates]
