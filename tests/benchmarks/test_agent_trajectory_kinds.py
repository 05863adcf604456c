"""The agent benchmark's trajectory kinds: where the evidence lands (one result, or spread over two to four), a
result repeated verbatim, a result that answers nothing, short and long results mixed; every kind a valid sequence
of tool calls whose results hold the row's supporting sentences verbatim."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage, ToolMessage

from benchmarks.agents import KINDS, build_trajectory, evidence_units, spreadable
from data_access.loaders import Sample

SUPPORT = ("The bridge over the river opened to traffic in 1932.", "Its architect was Marta Ruiz of Seville.",
           "The bridge was widened in 1978 to carry four lanes.")
CONTEXT = "\n\n".join([
    "The town grew around a ford. " + SUPPORT[0] + " Tolls were charged until 1950.",
    "Local markets sold wool and grain every Thursday in the square.",
    SUPPORT[1] + " She trained in Madrid. " + SUPPORT[2],
    "The river floods most springs, and the lower streets are closed for a week or two.",
])
SAMPLE = Sample(id="bridge", dataset="qa_dev", source="fixture", context=CONTEXT,
                question="Who designed the bridge that opened in 1932?", answers=("Marta Ruiz",),
                template="{context}\n\n{input}", metric="qa_f1", max_new_tokens=8, supporting_sentences=SUPPORT)
PADDING = [f"Padding paragraph {k} about unrelated matters, long enough to count for something here." * 3
           for k in range(40)]


def words(text: str) -> int:
    return len(text.split())


def test_a_paragraph_holding_several_supporting_sentences_is_cut_between_them():
    evidence, rest = evidence_units(SAMPLE)
    assert len(evidence) == 3 and all(sum(s in unit for s in SUPPORT) == 1 for unit in evidence)
    assert len(rest) == 2 and spreadable(SAMPLE)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_is_a_valid_sequence_that_holds_the_evidence(kind):
    trajectory = build_trajectory(SAMPLE, PADDING, words, seed=7, kind=kind)
    body = trajectory.messages[2:]
    calls = [m for m in body if isinstance(m, AIMessage)]
    results = [m for m in body if isinstance(m, ToolMessage)]
    assert [type(m) for m in body] == [AIMessage, ToolMessage] * len(results)
    assert [m.tool_call_id for m in results] == [c.tool_calls[0]["id"] for c in calls]
    assert [m.content for m in results] == trajectory.results
    assert all(any(s in text for text in trajectory.results) for s in SUPPORT)
    holders = trajectory.evidence_call
    if kind in ("spread", "empty", "mixed"):
        assert 2 <= len(holders) <= 4
    if kind in ("single", "repeat"):
        assert len({trajectory.results[k] for k in holders}) == 1
    if kind == "repeat":
        assert len(set(trajectory.results)) == len(trajectory.results) - 1
    if kind == "empty":
        assert sum(text.startswith("No results found") for text in trajectory.results) == 1
    if kind == "mixed":
        assert all(words(text) < 400 or words(text) >= 3000 or any(s in text for s in SUPPORT)
                   for text in trajectory.results)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="Unknown trajectory kind"):
        build_trajectory(SAMPLE, PADDING, words, seed=7, kind="nested")
