"""LangChain v1 agents: TPCContextMiddleware inside a real ``create_agent`` graph, driven by a fake chat model that
calls tools, with the real tpc-mini compressing; what the model receives is recorded and checked."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import threading
import time
import warnings

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool

from tests.conversation_helpers import counted, is_selection
from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION, SYSTEM
from tests.notice_helpers import logged_only
from tpc_core.conversation import emptied_note, kept_nothing
from tpc_integrations._agent_context import AgentContext
from tpc_integrations.langchain_agents import AGENT_EVENT, TPCContextMiddleware

ARCHIVE = "\n\n".join(PARAGRAPHS[:3])
NOTES = "\n\n".join(PARAGRAPHS[3:])


class ToolCallingFake(GenericFakeChatModel):
    """A chat model that answers from a script (tool calls, then a reply) and records what it was sent."""

    sent: list = []

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.sent.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def scripted(*calls: tuple[str, dict]) -> ToolCallingFake:
    script = [AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{k}"}]) for k, (name, args)
              in enumerate(calls)]
    return ToolCallingFake(messages=iter([*script, AIMessage("The colonies are absolved of allegiance.")]), sent=[])


@tool
def read_archive(part: str) -> str:
    """Read a part of the archive."""
    return ARCHIVE if part == "archive" else NOTES


@tool
def short_status() -> str:
    """A short status line."""
    return "The archive is open."


class Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.data: list[dict] = []

    def on_custom_event(self, name, data, **kwargs) -> None:
        if name == AGENT_EVENT:
            self.data.append(data)


def run_agent(compressor, model, middleware, tools=(read_archive, short_status), callbacks=()):
    agent = create_agent(model, list(tools), middleware=[middleware], system_prompt=SYSTEM)
    return agent.invoke({"messages": [HumanMessage(QUESTION, id="user-1")]}, {"callbacks": list(callbacks)})


def test_the_model_receives_tool_results_compressed_within_the_budget(compressor):
    model = scripted(("read_archive", {"part": "archive"}), ("read_archive", {"part": "notes"}))
    middleware = TPCContextMiddleware(compressor=compressor, target_tokens=500)
    events = Events()
    state = run_agent(compressor, model, middleware, callbacks=[events])
    counter = compressor.engine.default_counter
    last = model.sent[-1]
    assert [type(m) for m in last] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage, ToolMessage]
    assert last[0].content == SYSTEM and last[1].content == QUESTION
    assert counted(last, counter) <= 500
    originals = {"call_0": ARCHIVE, "call_1": NOTES}
    for message in last[3::2]:
        assert message.content != originals[message.tool_call_id]
        assert is_selection(originals[message.tool_call_id], message.content, compressor.engine.splitter())
    assert [m.tool_calls[0]["id"] for m in last[2::2]] == ["call_0", "call_1"]
    # the agent's state keeps the tool results whole
    stored = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in stored] == [ARCHIVE, NOTES]
    assert [event["tool_results"] for event in events.data] == [0, 1, 2]
    assert events.data[1]["compressed"] == 1 and events.data[2]["compressed"] == 1
    assert all(event["sent_tokens"] <= 500 for event in events.data)


def test_a_result_sent_once_is_re_sent_as_the_same_bytes(compressor):
    model = scripted(("read_archive", {"part": "archive"}), ("short_status", {}), ("short_status", {}))
    events = Events()
    run_agent(compressor, model, TPCContextMiddleware(compressor=compressor, target_tokens=500), callbacks=[events])
    first = [m.content for m in model.sent[1] if isinstance(m, ToolMessage)][0]
    assert first != ARCHIVE
    for later in model.sent[2:]:
        assert [m.content for m in later if isinstance(m, ToolMessage)][0] == first
    assert [event["reused"] for event in events.data] == [0, 0, 1, 2]
    assert events.data[-1]["whole"] == 1 and events.data[-1]["recompressed"] == 0


def test_each_result_is_compressed_toward_its_tool_call(compressor):
    @tool
    def search(query: str) -> str:
        """Search the archive."""
        return ARCHIVE

    kept = {}
    for query, sentence in (("the history of the present King of Great Britain", "The history of the present King"),
                            ("Laws of Nature and of Nature's God", "the Laws of Nature and of Nature's God")):
        model = scripted(("search", {"query": query}))
        middleware = TPCContextMiddleware(compressor=compressor, target_tokens=160, plan_ahead=0)
        run_agent(compressor, model, middleware, tools=[search])
        kept[query] = [m.content for m in model.sent[-1] if isinstance(m, ToolMessage)][0]
        assert sentence in kept[query]
    assert len(set(kept.values())) == 2


def test_write_back_replaces_the_stored_results_by_id(compressor):
    model = scripted(("read_archive", {"part": "archive"}), ("read_archive", {"part": "notes"}))
    state = run_agent(compressor, model, TPCContextMiddleware(compressor=compressor, target_tokens=500,
                                                              write_back=True))
    stored = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in stored] == ["call_0", "call_1"]
    assert len(state["messages"]) == 6  # replaced, not appended
    assert stored[0].content != ARCHIVE and is_selection(ARCHIVE, stored[0].content, compressor.engine.splitter())
    assert stored[0].content in [m.content for m in model.sent[-1]]


def test_json_and_csv_results_lose_whole_records_only(compressor):
    people = [{"name": f"Delegate {k}", "colony": colony, "note": PARAGRAPHS[k][:160]}
              for k, colony in enumerate(["Virginia", "Massachusetts", "New York", "Georgia", "Delaware", "Maryland"])]
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(["name", "colony", "note"])
    writer.writerows([p.values() for p in people])

    @tool
    def delegates(fmt: str) -> str:
        """The delegates, as JSON or CSV."""
        return json.dumps(people, indent=2) if fmt == "json" else table.getvalue()

    model = scripted(("delegates", {"fmt": "json"}), ("delegates", {"fmt": "csv"}))
    run_agent(compressor, model, TPCContextMiddleware(compressor=compressor, target_tokens=260), tools=[delegates])
    as_json, as_csv = [m.content for m in model.sent[-1] if isinstance(m, ToolMessage)]
    kept = json.loads(as_json)
    assert 0 < len(kept) < len(people) and all(record in people for record in kept)
    rows = list(csv.reader(io.StringIO(as_csv)))
    assert rows[0] == ["name", "colony", "note"] and 0 < len(rows) - 1 < len(people)
    assert all(row in [list(p.values()) for p in people] for row in rows[1:])


def test_async_gives_what_sync_gives(compressor):
    sync_model = scripted(("read_archive", {"part": "archive"}), ("read_archive", {"part": "notes"}))
    run_agent(compressor, sync_model, TPCContextMiddleware(compressor=compressor, target_tokens=450))
    async_model = scripted(("read_archive", {"part": "archive"}), ("read_archive", {"part": "notes"}))
    agent = create_agent(async_model, [read_archive], system_prompt=SYSTEM,
                         middleware=[TPCContextMiddleware(compressor=compressor, target_tokens=450)])
    asyncio.run(agent.ainvoke({"messages": [HumanMessage(QUESTION)]}))
    assert [m.content for m in async_model.sent[-1]] == [m.content for m in sync_model.sent[-1]]


def test_langchain_message_counter_is_accepted(compressor):
    model = scripted(("read_archive", {"part": "archive"}), ("read_archive", {"part": "notes"}))
    middleware = TPCContextMiddleware(compressor=compressor, target_tokens=700,
                                      token_counter=count_tokens_approximately)
    run_agent(compressor, model, middleware)
    assert count_tokens_approximately(model.sent[1]) > 0
    assert count_tokens_approximately(model.sent[-1]) <= 700
    assert count_tokens_approximately([ToolMessage(ARCHIVE, tool_call_id="x")]) > 700


class FailingSplitter:
    def spans(self, text):
        raise RuntimeError("splitter down")


def test_a_fault_passes_the_call_through_with_an_operator_record(compressor, caplog):
    model = scripted(("read_archive", {"part": "archive"}))
    middleware = TPCContextMiddleware(compressor=compressor, target_tokens=300, splitter=FailingSplitter(),
                                      cache=None)
    events = Events()
    with logged_only(caplog, "TPCContextMiddleware failed .RuntimeError: splitter down"):
        run_agent(compressor, model, middleware, callbacks=[events])
    assert [m.content for m in model.sent[-1] if isinstance(m, ToolMessage)] == [ARCHIVE]
    assert events.data[-1]["fallback"] == "error"
    with pytest.raises(RuntimeError, match="splitter down"), warnings.catch_warnings():
        run_agent(compressor, scripted(("read_archive", {"part": "archive"})),
                  TPCContextMiddleware(compressor=compressor, target_tokens=300, splitter=FailingSplitter(),
                                       cache=None, on_error="raise"))


@pytest.mark.parametrize("settings, message", [
    ({"rate": 0.3}, "rate does not apply"),
    ({}, "Give one budget"),
    ({"target_tokens": 100, "target_fraction": 0.5}, "Give one budget"),
    ({"target_fraction": 1.5}, "target_fraction must be in"),
    ({"target_tokens": 100, "trigger_tokens": 150, "trigger_fraction": 0.5}, "not both"),
    ({"target_tokens": 100, "trigger_tokens": 50}, "below target_tokens"),
])
def test_bad_settings_are_refused(compressor, settings, message):
    with pytest.raises(ValueError, match=message):
        TPCContextMiddleware(compressor=compressor, **settings)


def test_a_fraction_needs_the_models_context_window(compressor):
    middleware = TPCContextMiddleware(compressor=compressor, target_fraction=0.5, on_error="raise")
    with pytest.raises(ValueError, match="context window"):
        run_agent(compressor, scripted(("read_archive", {"part": "archive"})), middleware)


def test_a_result_read_once_is_never_read_again(compressor):
    @tool
    def page(number: int) -> str:
        """One page of the archive."""
        return PARAGRAPHS[number]

    model = scripted(*[("page", {"number": k}) for k in range(4)])
    events = Events()
    run_agent(compressor, model, TPCContextMiddleware(compressor=compressor, target_tokens=400), tools=[page],
              callbacks=[events])
    assert len(events.data) == 5
    # each result is read by the encoder at most once (a result sent whole is read when a shrink first needs it);
    # older ones squeezed again come from the cache
    assert sum(event["cache_misses"] for event in events.data) <= 4
    assert sum(event["recompressed"] for event in events.data) > 0


class SlowSplitter:
    """The compressor's splitter, a quarter of a second late."""

    def __init__(self, splitter) -> None:
        self.splitter = splitter

    def spans(self, text):
        time.sleep(0.25)
        return self.splitter.spans(text)


def test_past_its_deadline_a_call_goes_on_uncompressed(compressor, caplog):
    model = scripted(("read_archive", {"part": "archive"}))
    events = Events()
    splitter = SlowSplitter(compressor.engine.splitter())
    middleware = TPCContextMiddleware(compressor=compressor, target_tokens=300, deadline_ms=50, splitter=splitter)
    with logged_only(caplog, "passed its deadline"):
        run_agent(compressor, model, middleware, callbacks=[events])
    assert [m.content for m in model.sent[-1] if isinstance(m, ToolMessage)] == [ARCHIVE]
    assert events.data[-1]["fallback"] == "deadline"
    for thread in threading.enumerate():  # the work left behind is cancelled at its next model step: it ends
        if thread.name == "tpc-deadline":
            thread.join(60)
            assert not thread.is_alive()


def test_excluded_tools_and_a_trigger_leave_results_whole(compressor):
    model = scripted(("read_archive", {"part": "archive"}), ("short_status", {}))
    events = Events()
    run_agent(compressor, model, TPCContextMiddleware(compressor=compressor, target_tokens=100, scope="tools",
                                                      exclude_tools=("read_archive",)), callbacks=[events])
    sent = [m.content for m in model.sent[-1] if isinstance(m, ToolMessage)]
    # no room left for the other result: it is sent whole, being shorter than a note saying it was left out
    assert sent[0] == ARCHIVE and sent[1] == "The archive is open."
    assert events.data[-1]["tool_results"] == 1 and events.data[-1]["over_budget"] > 0
    roomy = scripted(("read_archive", {"part": "archive"}))
    run_agent(compressor, roomy, TPCContextMiddleware(compressor=compressor, target_tokens=100, trigger_tokens=5000))
    assert [m.content for m in roomy.sent[-1] if isinstance(m, ToolMessage)] == [ARCHIVE]


def test_a_tiny_budget_is_named_as_the_users_budget_in_the_warnings(compressor):
    """At a budget that leaves a few tokens for a tool result, its sentences are larger than that room; the warning
    names the caller's budget and what took the rest, never an internal share as 'the whole budget'."""
    model = scripted(("read_archive", {"part": "archive"}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_agent(compressor, model, TPCContextMiddleware(compressor=compressor, target_tokens=30))
    larger = [str(w.message) for w in caught if "larger than" in str(w.message)]
    assert larger, [str(w.message) for w in caught]
    assert all("whole budget" not in message for message in larger)
    assert all("left of the budget of 30 after the rest of the view (system prompt, request, other turns:"
               in message for message in larger), larger


def test_a_result_with_no_room_says_so_and_is_never_empty(compressor):
    counter = compressor.engine.default_counter
    budget = counter(SYSTEM) + counter(QUESTION) + 3  # three tokens left for the result: none of its sentences fits
    model = scripted(("read_archive", {"part": "archive"}))
    events = Events()
    run_agent(compressor, model, TPCContextMiddleware(compressor=compressor, target_tokens=budget, scope="tools"),
              callbacks=[events])
    result = [m for m in model.sent[-1] if isinstance(m, ToolMessage)][0]
    assert result.content.strip()
    assert "left out" in result.content and str(counter(ARCHIVE)) in result.content
    assert events.data[-1]["compressed"] == 1


def test_plan_ahead_is_a_count_of_results(compressor):
    with pytest.raises(ValueError, match="plan_ahead"):
        TPCContextMiddleware(compressor=compressor, target_tokens=500, plan_ahead=-1)
    assert TPCContextMiddleware(compressor=compressor, target_tokens=500).settings.plan_ahead == 2


REPORT = ("The northern branch reported that quarterly revenue grew by twelve percent after the new logistics contract "
          "was signed in March. Costs in the southern warehouses fell because the older forklifts were finally "
          "replaced with the electric fleet ordered last year.")
HITS = json.dumps([{"title": f"Result {k}", "snippet": "The quarterly revenue of the northern branch grew by twelve "
                    "percent after the new logistics contract was signed with the regional carrier in March."}
                   for k in range(6)], indent=1)


def one_result_view(compressor, result: str, target_tokens: int, **settings):
    messages = [SystemMessage("You are a helpful assistant."),
                HumanMessage("How did the northern branch revenue change?", id="u"),
                AIMessage("", tool_calls=[{"name": "search", "args": {"q": "northern branch"}, "id": "c0"}], id="a0"),
                ToolMessage(result, tool_call_id="c0", id="t0")]
    context = AgentContext(compressor, label="test", target_tokens=target_tokens, on_error="raise", scope="tools",
                           **settings)
    return context.view(messages)


@pytest.mark.parametrize("target_tokens", [40, 50])
def test_a_first_result_keeps_what_fits_whatever_the_plan(compressor, target_tokens):
    # the plan keeps room for results that may never come: it must not leave out a sentence that fits now
    view = one_result_view(compressor, REPORT, target_tokens)
    sent = view.messages[-1].content
    assert sent.startswith("The northern branch reported") and sent in REPORT
    assert view.data["over_budget"] == 0


@pytest.mark.parametrize("target_tokens", [60, 100])
def test_a_structured_result_is_never_sent_as_its_bare_frame(compressor, target_tokens):
    view = one_result_view(compressor, HITS, target_tokens)
    sent = view.messages[-1].content
    assert '"title": "Result' in sent  # a whole record, not "[ ]" that reads as "no results"
    assert json.loads(sent) and all(record in json.loads(HITS) for record in json.loads(sent))
    assert view.data["over_budget"] == 0


def test_a_structured_result_with_no_room_for_a_record_says_so(compressor):
    counter = compressor.engine.default_counter
    view = one_result_view(compressor, HITS, 45, plan_ahead=0)
    sent = view.messages[-1].content
    assert kept_nothing(HITS, "[\n \n]") and kept_nothing(HITS, " ") and not kept_nothing(HITS, HITS)
    assert sent == emptied_note(counter(HITS))  # no record fits: a note, not the frame
