"""LangGraph without ``create_agent``: TPCContextHook as the prebuilt agent's ``pre_model_hook`` and as a node of a
graph of one's own (the example), with a fake tool-calling chat model and the real tpc-mini."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import pytest

pytest.importorskip("langgraph.prebuilt")

from integration_helpers import EXAMPLES, REPO
from langchain_core.messages import HumanMessage, ToolMessage

from tests.conversation_helpers import counted, is_selection
from tests.integrations.test_agents_langchain import ARCHIVE, NOTES, QUESTION, read_archive, scripted
from tpc_integrations.langchain_agents import TPCContextHook


def react_agent(model, hook):
    with warnings.catch_warnings():  # create_react_agent is deprecated in favour of create_agent, still shipped
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(model, [read_archive], pre_model_hook=hook)


def test_pre_model_hook_compresses_the_models_view_only(compressor):
    model = scripted(("read_archive", {"part": "archive"}), ("read_archive", {"part": "notes"}))
    state = react_agent(model, TPCContextHook(compressor=compressor, target_tokens=450)).invoke(
        {"messages": [HumanMessage(QUESTION)]})
    last = model.sent[-1]
    assert counted(last, compressor.engine.default_counter) <= 450
    tools = [m for m in last if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in tools] == ["call_0", "call_1"]
    assert all(is_selection(o, m.content, compressor.engine.splitter()) for o, m in zip((ARCHIVE, NOTES), tools))
    assert [m.content for m in state["messages"] if isinstance(m, ToolMessage)] == [ARCHIVE, NOTES]


def test_the_hook_writes_back_by_id_when_asked(compressor):
    model = scripted(("read_archive", {"part": "archive"}), ("read_archive", {"part": "notes"}))
    hook = TPCContextHook(compressor=compressor, target_tokens=450, write_back=True)
    state = react_agent(model, hook).invoke({"messages": [HumanMessage(QUESTION)]})
    stored = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(state["messages"]) == 6 and [m.tool_call_id for m in stored] == ["call_0", "call_1"]
    assert [m.content for m in stored] == [m.content for m in model.sent[-1] if isinstance(m, ToolMessage)]
    assert stored[0].content != ARCHIVE


@pytest.mark.slow
@pytest.mark.shared_data
def test_the_langgraph_example_keeps_every_call_within_its_budget():
    import os

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, str(EXAMPLES / "langgraph_agent_context.py"), "--budget", "500"],
                            cwd=REPO, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    calls = [(int(held), int(sent)) for held, sent in
             re.findall(r"the state holds (\d+) tokens, the model receives (\d+)", result.stdout)]
    assert len(calls) >= 3 and all(sent <= 500 for _, sent in calls)
    assert calls[-1][0] > 500 and "tool results kept whole in the state: 3" in result.stdout
