"""Tool results: structured outputs read as records (any selection stays valid), the fair share of a room, the
question a result is compressed toward, and the ledger that re-sends a result as the same bytes. No model here but
in the last tests (the real tpc-mini)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tpc_core.conversation.records import RecordsInProse, read_records, record_blocks
from tpc_core.conversation.tool_results import (
    LedgerEntry,
    ToolResult,
    ToolResultLedger,
    compress_tool_text,
    compress_tool_texts,
    fair_share,
    tool_question,
    tool_share,
)

JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                      max_size=3), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(JSON_VALUES, min_size=2, max_size=8), st.sampled_from([None, 0, 2]), st.data())
def test_any_selection_of_a_json_arrays_records_is_that_array(values, indent, data):
    text = json.dumps(values, indent=indent)
    records = read_records(text)
    assert records is not None and records.kind == "json"
    assert records.text(range(len(values))) == text
    kept = sorted(data.draw(st.sets(st.integers(0, len(values) - 1))))
    assert json.loads(records.text(kept)) == [values[k] for k in kept]


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, min_size=2, max_size=6), st.data())
def test_any_selection_of_a_json_objects_members_is_that_object(value, data):
    text = json.dumps(value, indent=1)
    records = read_records(text)
    keys = list(value)
    kept = sorted(data.draw(st.sets(st.integers(0, len(keys) - 1))))
    assert json.loads(records.text(kept)) == {keys[k]: value[keys[k]] for k in kept}


def test_csv_tables_and_code_keep_their_header_and_whole_rows():
    rows = [["city", "population"], ["Lyon", "522,250"], ["Nice", "342,669"], ["Lille", "236,710"]]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    records = read_records(buffer.getvalue())
    assert records.kind == "csv" and list(csv.reader(io.StringIO(records.text([2])))) == [rows[0], rows[3]]
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    records = read_records(table)
    assert records.kind == "table" and records.text([1]) == "| a | b |\n|---|---|\n| 3 | 4 |\n"
    code = "```python\nimport os\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n```"
    records = read_records(code)
    assert records.kind == "code" and records.text([2]) == "```python\ndef b():\n    return 2\n```"


@pytest.mark.parametrize("text", ["A sentence. Another one.", "not json [1, 2", "a,b\nc,d", "[]", "return x;"])
def test_prose_and_empty_structures_are_not_records(text):
    assert read_records(text) is None


def test_a_structure_of_one_record_keeps_its_frame_without_it():
    assert read_records('[{"only": 1}]').text([]) == "[]"
    assert read_records('{"only": 1}').text([]) == "{}"


def test_fair_share_gives_what_short_results_leave_to_the_others():
    assert fair_share([100, 100, 100], 150) == 50
    assert fair_share([10, 400, 400], 210) == 100
    assert fair_share([10, 20], 100) == 20
    assert fair_share([10, 20], 0) == 0 and fair_share([], 10) == 0


def test_the_question_is_the_request_and_the_tool_call():
    assert tool_question("Who won?", "search", {"query": "1998 final", "page": 2}) == "Who won?\nsearch 1998 final 2"
    assert tool_question(None, "read_file", '{"path": "notes.md"}') == "read_file notes.md"
    assert tool_question(None, None, None) is None


def test_the_ledger_resends_the_same_bytes_and_squeezes_the_oldest_first():
    ledger = ToolResultLedger()
    counter = len
    results = [ToolResult(ledger.key_of(f"c{k}", "x" * 100), "x" * 100, None, 100) for k in range(3)]

    def cut(chosen, share):
        return [result.text[:share] for result in chosen]

    first = ledger.fit(results[:1], 60, cut, counter)
    assert first == [(LedgerEntry("x" * 60, 60, 60), "compressed")]
    assert ledger.fit(results[:1], 60, cut, counter)[0][1] == "reused"
    second = ledger.fit(results[:2], 100, cut, counter)
    assert [fate for _, fate in second] == ["recompressed", "compressed"]
    assert [entry.tokens for entry, _ in second] == [50, 50]
    roomy = ledger.fit(results[:2], 1000, cut, counter)
    assert [fate for _, fate in roomy] == ["reused", "reused"]


def test_a_shrink_plans_ahead_so_the_next_results_change_nothing_before_them():
    counter = len
    texts = [chr(ord("a") + k) * 100 for k in range(5)]

    def fates(ahead):
        ledger = ToolResultLedger()
        results = [ToolResult(ledger.key_of(f"c{k}", text), text, None, 100) for k, text in enumerate(texts)]
        batches = []

        def cut(chosen, share):
            batches.append(len(chosen))
            return [result.text[:share] for result in chosen]

        calls = [ledger.fit(results[:n], 150, cut, counter, ahead=ahead) for n in range(1, 6)]
        return [[fate for _, fate in call] for call in calls], calls, batches

    planned, calls, batches = fates(2)
    # the first is sent whole (it fits); the second gets a share planned for two more; the third shrinks both
    # earlier ones at once, to a share that leaves room for two more, and the last two change nothing before them
    assert [[entry.tokens for entry, _ in call] for call in calls[:3]] == [[100], [100, 37], [30, 30, 30]]
    assert [fate.count("recompressed") for fate in planned] == [0, 0, 2, 0, 0]
    assert [entry.tokens for entry, _ in calls[4]] == [30] * 5
    assert batches == [1, 3, 1, 1]  # one batched compression per call that compresses
    greedy, _, _ = fates(0)
    assert [fate.count("recompressed") for fate in greedy] == [0, 1, 2, 3, 4]
    assert all(sum(entry.tokens for entry, _ in call) <= 150 for call in calls)


def test_a_structured_result_is_compressed_by_whole_records(tpc_mini):
    people = [{"name": f"Person {k}", "city": city, "bio": f"{city} is where person {k} was born and lives now."}
              for k, city in enumerate(["Paris", "Berlin", "Madrid", "Rome", "Vienna", "Prague"])]
    text = json.dumps(people, indent=2)
    counter = tpc_mini.engine.default_counter
    compressed = compress_tool_text(tpc_mini.engine, text, "Who lives in Rome?", 80, counter, {})
    kept = json.loads(compressed)
    assert counter(compressed) <= 80 and 0 < len(kept) < len(people)
    assert all(record in people for record in kept)
    assert any(record["city"] == "Rome" for record in kept)


def test_a_plain_counting_function_budgets_a_tool_result(tpc_mini):
    """``counter`` may be any ``Callable[[str], int]``: the engine, which counts in batches, gets it wrapped."""
    sentences = [f"Fact {k} is about the city of {city}." for k, city in enumerate(["Rome", "Paris", "Oslo"] * 4)]

    def words(value: str) -> int:
        return len(value.split())

    compressed = compress_tool_text(tpc_mini.engine, " ".join(sentences), "Which facts are about Oslo?", 20, words, {})
    kept = compressed.split(" Fact ")
    assert 0 < words(compressed) <= 20 and 0 < len(kept) < len(sentences)
    assert all((sentence if k == 0 else f"Fact {sentence}") in sentences for k, sentence in enumerate(kept))


LONG_SENTENCE = "The archive holds " + ", ".join(f"box {k} of letters from the town of Lyon" for k in range(12)) + "."


def test_a_sentence_larger_than_a_tool_results_share_is_named_against_the_users_budget(tpc_mini):
    """The warning names the caller's budget and what took the rest, not an internal share as a "whole budget"."""
    text = LONG_SENTENCE + " Box 3 is missing. Box 7 was damaged by water."
    counter = tpc_mini.engine.default_counter
    with pytest.warns(UserWarning, match="larger than") as caught:
        compress_tool_text(tpc_mini.engine, text, "Which box is missing?", 12, counter, {},
                           budget_label=lambda tokens: tool_share(20, 8, tokens))
    message = next(str(w.message) for w in caught if "larger than" in str(w.message))
    assert "whole budget" not in message
    assert "share (12 tokens) of the 12 tokens left of the budget of 20" in message
    assert "system prompt, request, other turns: 8 tokens" in message
    with pytest.warns(UserWarning, match="larger than this tool result's budget of 12 tokens"):
        compress_tool_text(tpc_mini.engine, text, "Which box is missing?", 12, counter, {})


def test_parts_kept_as_they_are_count_in_the_conversations_budget(tpc_mini):
    from tests.core.conversation.test_conversations import dict_conversation
    from tpc_core.conversation.compress import compress_conversation

    messages = dict_conversation()  # message 3 is a tool message: its first part is a long text, then an image
    tool_text = messages[3]["content"][0]["text"]
    counter = tpc_mini.engine.default_counter
    budget = counter(tool_text) + 150
    result = compress_conversation(tpc_mini.engine, messages, target_tokens=budget, keep_parts=[(3, 0)])
    assert result.messages[3]["content"][0]["text"] == tool_text
    assert result.messages[1]["content"] != messages[1]["content"] and result.compressed_tokens <= budget
    assert result.protected_tokens >= counter(tool_text)
    with pytest.raises(ValueError, match="smaller than"):
        compress_conversation(tpc_mini.engine, messages, target_tokens=budget - 200, keep_parts=[(3, 0)],
                              strict=True)
    over = compress_conversation(tpc_mini.engine, messages, target_tokens=budget - 200, keep_parts=[(3, 0)])
    assert over.messages[3]["content"][0]["text"] == tool_text
    assert over.over_budget == over.compressed_tokens - over.budget > 0


REPORT = ("The warehouse report for May lists three sites. Lyon shipped the most parcels this month. Nice lost "
          "pallets in a flood.\n\n"
          "| site | parcels | damaged |\n|---|---|---|\n| Lyon | 412 | 0 |\n| Nice | 198 | 2 |\n| Lille | 251 | 1 |\n\n"
          "The raw sensor export follows.\n\n"
          '```json\n{\n  "site": "Nice",\n  "flood": true,\n\n  "pallets_lost": 2\n}\n```\n\n'
          "Lille reopens on Monday. The audit of Nice starts in June. Staff asked for new scanners.")
TABLE = "| site | parcels | damaged |\n|---|---|---|\n| Lyon | 412 | 0 |\n| Nice | 198 | 2 |\n| Lille | 251 | 1 |"
FENCE = '```json\n{\n  "site": "Nice",\n  "flood": true,\n\n  "pallets_lost": 2\n}\n```'


def test_the_records_inside_prose_are_its_blocks():
    assert [REPORT[start:end] for start, end in record_blocks(REPORT)] == [TABLE, FENCE]


@pytest.mark.parametrize("batched", [False, True], ids=["one", "batched"])
def test_a_table_and_a_json_fence_inside_prose_are_kept_or_dropped_whole(tpc_mini, batched):
    counter = tpc_mini.engine.default_counter

    def compress(budget: int) -> str:
        question = "How many pallets did Nice lose?"
        if batched:  # the agents' path: a call's results read in one engine call
            return compress_tool_texts(tpc_mini.engine, [(REPORT, question, counter(REPORT))], budget, counter, {})[0]
        return compress_tool_text(tpc_mini.engine, REPORT, question, budget, counter, {})

    units = [REPORT[start:end] for start, end in RecordsInProse(tpc_mini.engine.splitter()).spans(REPORT)]
    assert TABLE in units and FENCE in units
    fates = set()
    for fraction in (0.2, 0.35, 0.5, 0.65, 0.8, 0.95):
        budget = int(counter(REPORT) * fraction)
        out = compress(budget)
        assert 0 < counter(out) <= budget
        for block in (TABLE, FENCE):
            rows = [line for line in block.split("\n")[1:] if line.strip()]  # its own lines (not a lone "```")
            kept = block in out
            assert kept or not any(row in out for row in rows), (fraction, block, out)
            fates.add(kept)
        kept_units = [unit for unit in units if unit in out]  # verbatim, in order, nothing else
        assert " ".join(out.split()) == " ".join(" ".join(kept_units).split())
        assert [out.index(unit) for unit in kept_units] == sorted(out.index(unit) for unit in kept_units)
    assert fates == {True, False}  # each budget keeps or drops a block whole, and both happen


def test_a_fence_closes_only_on_a_bare_fence_of_its_own_kind():
    # CommonMark: "```json" (an info string) and "~~~" do not close a backtick fence
    text = ("Two snippets came back.\n\n```python\ndef f():\n    return 1\n\nThen it logged.\n\n~~~\n\n"
            "```json\n{\"a\": 1}\n```\n\nThat is all.")
    blocks = [text[start:end] for start, end in record_blocks(text)]
    assert blocks == [text[text.index("```python"):text.index("\n\nThat is all.")]]
    longer = "Intro line here.\n\n````\ncode\n```\nmore\n````\n\nOutro line here."
    assert [longer[start:end] for start, end in record_blocks(longer)] == ["````\ncode\n```\nmore\n````"]
