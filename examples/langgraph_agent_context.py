"""A LangGraph agent loop without ``create_agent``: a TPC node compresses what the model reads on each call.

The graph is ``compress -> model -> tools -> compress -> ...``. The ``compress`` node is ``TPCContextHook``: it
reads the state's messages and writes the model's view to ``llm_input_messages``; the state keeps every tool
result whole. (With the prebuilt ``create_react_agent``, pass the same hook as ``pre_model_hook=``.)

The chat model here is a scripted stand-in that calls the search tool a few times and then answers, so the example
runs offline; put your own tool-calling chat model in its place.

    python examples/langgraph_agent_context.py [--data /work/shared/data/qa_dev.jsonl] [--sample 0] [--budget 600]
"""

from __future__ import annotations

import argparse
from typing import Annotated, TypedDict

from _example_data import add_data_arguments, load_sample, token_counter
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from tpc_integrations.langchain_agents import TPCContextHook


class AgentState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    llm_input_messages: list[AnyMessage]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--budget", type=int, default=600, help="tokens the model may receive on each call")
    args = parser.parse_args(argv)
    sample = load_sample(args.data, args.sample)
    pages = [sample.documents[k::3] for k in range(3)]

    @tool
    def search(query: str, page: int) -> str:
        """Search the archive; returns one page of results."""
        return "\n\n".join(pages[page % len(pages)])

    calls = [AIMessage("", tool_calls=[{"name": "search", "args": {"query": sample.question, "page": k},
                                        "id": f"call_{k}"}]) for k in range(len(pages))]
    model = GenericFakeChatModel(messages=iter([*calls, AIMessage("Done: I have read every page.")]))
    hook = TPCContextHook(target_tokens=args.budget)
    counter = token_counter(hook.settings.compressor)  # how the hook counts by default

    def call_model(state: AgentState) -> dict:
        view = state["llm_input_messages"]
        held = sum(counter(m.text) for m in state["messages"])
        sent = sum(counter(m.text) for m in view)
        print(f"model call {sum(isinstance(m, AIMessage) for m in state['messages']) + 1}: the state holds {held} "
              f"tokens, the model receives {sent}")
        return {"messages": [model.invoke(view)]}

    graph = StateGraph(AgentState)
    graph.add_node("compress", hook)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([search]))
    graph.add_edge(START, "compress")
    graph.add_edge("compress", "model")
    graph.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "compress")
    app = graph.compile()

    state = app.invoke({"messages": [SystemMessage("Answer from the search results only."),
                                      HumanMessage(sample.question)]})
    print(f"question: {sample.question}")
    print(f"tool results kept whole in the state: {sum(m.type == 'tool' for m in state['messages'])}")
    print(f"answer: {state['messages'][-1].text}")


if __name__ == "__main__":
    main()
