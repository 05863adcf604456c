"""An agent's tool results sharing the budget by relevance (``ToolResultLedger(shares="relevance")``, the real
tpc-mini): the result that holds the answer keeps it however early it was read, later results that answer nothing
give their room away, and the view keeps its shape and its budget on every call; the default even shares split the
room whatever the results hold."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tests.conversation_helpers import counted
from tpc_core.conversation import ToolResultLedger, emptied_note
from tpc_integrations._agent_context import AgentContext

ANSWER = "The treaty that ended the war was signed in Paris in September 1783 by the American and British envoys."
EVIDENCE = ("The war had dragged on for years after the last great battle at Yorktown. " + ANSWER + " Congress "
            "ratified it in January of the following year. The last British troops left New York in November, and "
            "the army was disbanded soon after. Veterans returned to farms that had gone untended for years.")
UNRELATED = [
    ("Knead the dough for ten minutes until it is smooth and elastic. Leave it to rise in a warm place for an hour. "
     "Shape the loaves gently so the air stays in. Bake them at two hundred degrees until the crust sounds hollow "
     "when tapped. Let them cool on a rack before slicing."),
    ("Tomatoes need six hours of sun a day and steady watering. Pinch out the side shoots as the plants grow. Feed "
     "them weekly once the first fruits appear on the lower trusses. Stake the tall varieties before the wind "
     "bends them. Pick the fruit when it is evenly red."),
    ("The bus timetable changes on the first Monday of the month. Night buses run every half hour on weekends. "
     "Tickets bought on the driver's machine cost more than those bought in advance. Children under five travel "
     "free with an adult. Bicycles are allowed on the last carriage only."),
]
QUESTION = "Where and when was the treaty that ended the war signed?"


def tight_budget(counter) -> int:
    """Room for the answer and the notes of the three unrelated results emptied, and little more: an even share of
    it is smaller than the answer."""
    notes = sum(counter(emptied_note(counter(text))) for text in UNRELATED)
    return counted(view_at(1), counter) - counter(EVIDENCE) + counter(ANSWER) + notes + 5


def view_at(n: int) -> list:
    """What the agent holds after ``n`` search results (the evidence first)."""
    messages = [SystemMessage("You are a research assistant."), HumanMessage(QUESTION, id="u")]
    for k, text in enumerate([EVIDENCE, *UNRELATED][:n]):
        call = {"name": "search", "args": {"query": "treaty end of war", "page": k + 1}, "id": f"c{k}"}
        messages += [AIMessage("", tool_calls=[call], id=f"a{k}"), ToolMessage(text, tool_call_id=f"c{k}", id=f"t{k}")]
    return messages


@pytest.mark.parametrize("plan_ahead", [0, 2])
def test_the_result_read_first_keeps_the_answer_as_unrelated_results_arrive(compressor, plan_ahead):
    counter = compressor.engine.default_counter
    budget = tight_budget(counter)
    context = AgentContext(compressor, label="test", target_tokens=budget, on_error="raise", scope="tools",
                           plan_ahead=plan_ahead)
    context.ledger = ToolResultLedger(shares="relevance")
    for n in range(1, len(UNRELATED) + 2):
        held = view_at(n)
        view = context.view(held)
        sent = view.messages
        assert view.data["over_budget"] == 0 and counted(sent, counter) <= budget
        assert [(type(m), m.id) for m in sent] == [(type(m), m.id) for m in held]
        assert [m.tool_call_id for m in sent if isinstance(m, ToolMessage)] == [f"c{k}" for k in range(n)]
        assert sent[1].content == QUESTION
        assert ANSWER in sent[3].content, (n, sent[3].content)


def test_an_even_share_leaves_the_answer_out_where_relevance_keeps_it(compressor):
    counter = compressor.engine.default_counter
    budget = tight_budget(counter)
    context = AgentContext(compressor, label="test", target_tokens=budget, on_error="raise", scope="tools",
                           plan_ahead=0)
    assert context.ledger.shares == "even"  # the default
    for n in range(1, len(UNRELATED) + 2):
        sent = context.view(view_at(n)).messages
        assert counted(sent, counter) <= budget
    results = [m.content for m in sent if isinstance(m, ToolMessage)]
    assert ANSWER not in results[0]  # the room split four ways: each share is smaller than the answer
