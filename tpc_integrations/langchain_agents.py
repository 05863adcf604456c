"""LangChain v1 agents and LangGraph graphs: what the model reads on each call, compressed toward the user's task.

With ``create_agent``::

    from langchain.agents import create_agent
    from tpc_integrations.langchain_agents import TPCContextMiddleware

    agent = create_agent(model, tools, middleware=[TPCContextMiddleware(target_tokens=8000)])

In a LangGraph graph of your own (a ``pre_model_hook``, or a node before the model's)::

    from tpc_integrations.langchain_agents import TPCContextHook

    hook = TPCContextHook(target_tokens=8000)    # state -> {"llm_input_messages": compressed view}

Each tool result is compressed once, when it first reaches the model, toward the user's latest request and the
tool call that asked for it, and is then sent as the same bytes on every later call, so a provider's prompt cache
keeps its prefix; earlier results are compressed further only when the budget demands it, all together and by
enough that ``plan_ahead`` more results fit without another change (:mod:`tpc_core.conversation.tool_results`).
Needs ``pip install tpc-langchain[agents]``.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

try:
    from langchain.agents.middleware import AgentMiddleware, ExtendedModelResponse, ModelRequest, ModelResponse
    from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.runnables.config import run_in_executor
    from langgraph.types import Command
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCContextMiddleware needs langchain>=1.0: pip install 'tpc-langchain[agents]'") from error

from tpc_core.diagnostics import register_library_path
from tpc_integrations._agent_context import AGENT_EVENT, AgentContext, AgentView, TPCAgentContextSettings

__all__ = ["AGENT_EVENT", "TPCContextHook", "TPCContextMiddleware"]

logger = logging.getLogger("tpc_integrations")

# The agent's graph calls the middleware from inside langchain, langgraph and langsmith: warnings name the user's line.
for _package in ("langchain", "langgraph", "langsmith"):
    _spec = importlib.util.find_spec(_package)
    for _location in (_spec.submodule_search_locations or ()) if _spec is not None else ():
        register_library_path(Path(_location))


def _written_back(view: AgentView, write_back: bool) -> list[BaseMessage]:
    """With ``write_back``, the changed tool messages that have an id (``add_messages`` replaces a stored message by
    its id); else none."""
    if not write_back:
        return []
    return [view.messages[m] for m in view.changed
            if isinstance(view.messages[m], ToolMessage) and view.messages[m].id]


def _emit(data: dict[str, Any]) -> None:
    try:
        dispatch_custom_event(AGENT_EVENT, data)
    except RuntimeError:  # called outside a run (a direct call in a test or a script): nothing listens
        pass


async def _aemit(data: dict[str, Any]) -> None:
    try:
        await adispatch_custom_event(AGENT_EVENT, data)
    except RuntimeError:
        pass


class TPCContextMiddleware(AgentMiddleware):
    """Agent middleware (``create_agent(..., middleware=[...])``) that compresses what the model receives on each
    call, through ``wrap_model_call`` (not ``before_model``: the agent's state stays whole and only the model's
    view changes, and the system prompt is counted in the budget).

    Behaviour:
        * The view (system prompt and messages) is counted with ``token_counter``; past ``trigger_tokens`` it is
          brought within ``target_tokens``: tool results first, each toward the latest user request and its tool
          call's arguments, compressed once and then re-sent as the same bytes; then, where ``scope="all"`` and the
          results alone cannot do it, older turns (the tool results left as they were sent). The system prompt,
          every tool call, the latest user request and the results of ``exclude_tools`` are never altered; every
          message keeps its place, class, id, name and ``tool_call_id``.
        * Structured results (JSON, CSV, Markdown tables, code) lose whole records only, and stay valid.
        * ``write_back=True``: the compressed tool results also replace the stored ones (same ids).
        * Sync and async (``awrap_model_call`` runs the compression in a worker thread). Each call emits a
          ``tpc_agent_context`` custom event with its figures (``astream_events``, callbacks' ``on_custom_event``).
        * A fault passes the call through unchanged with a warning (``on_error="passthrough"``, the default);
          ``deadline_ms`` bounds the time spent.

    Args:
        compressor: A ready :class:`tpc_core.TPCCompressor` (else the shared one of ``model_name_or_path``).
        **settings: :class:`tpc_integrations._agent_context.TPCAgentContextSettings`' fields: ``target_tokens``
            or ``target_fraction``, ``trigger_tokens`` / ``trigger_fraction``, ``token_counter`` (a text counter or
            ``count_tokens_approximately``), ``scope``, ``exclude_tools``, ``plan_ahead``, ``write_back``, ``cache``,
            ``on_error``, ``deadline_ms``, and the model settings of the other adapters.
    """

    def __init__(self, compressor: Any = None, **settings: Any) -> None:
        super().__init__()
        self.context = AgentContext(compressor, label=type(self).__name__, **settings)
        self.tools = []

    @property
    def settings(self) -> TPCAgentContextSettings:
        """The checked settings."""
        return self.context.settings

    def _prepare(self, request: ModelRequest) -> tuple[ModelRequest, AgentView]:
        system = [request.system_message] if request.system_message is not None else []
        profile = getattr(request.model, "profile", None) or {}
        view = self.context.view([*system, *request.messages], profile.get("max_input_tokens"))
        return request.override(messages=view.messages[len(system):]), view

    def _respond(self, response: Any, view: AgentView) -> Any:
        stored = _written_back(view, self.settings.write_back)
        if not stored:
            return response
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        if isinstance(response, ModelResponse):
            return ExtendedModelResponse(model_response=response, command=Command(update={"messages": stored}))
        return response

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Compress the request's messages, call the model on them."""
        compressed, view = self._prepare(request)
        _emit(view.data)
        return self._respond(handler(compressed), view)

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        """:meth:`wrap_model_call` with the compression in a worker thread."""
        compressed, view = await run_in_executor(None, self._prepare, request)
        await _aemit(view.data)
        return self._respond(await handler(compressed), view)


class TPCContextHook(AgentContext):
    """The same compression for a LangGraph graph without ``create_agent``: a callable ``state -> update``, to pass
    as ``pre_model_hook`` or to add as a node before the model's.

    It reads ``state["messages"]`` and returns ``{"llm_input_messages": compressed}`` (the key the prebuilt agents'
    model node reads; ``output_key=`` names another for a graph of your own), the state's messages left whole; with
    ``write_back=True`` the update also holds ``"messages"``: the compressed tool results, same ids, which
    ``add_messages`` puts in place of the stored ones. Settings: as :class:`TPCContextMiddleware`'s.
    """

    def __init__(self, compressor: Any = None, *, output_key: str = "llm_input_messages", **settings: Any) -> None:
        super().__init__(compressor, label=type(self).__name__, **settings)
        self.output_key = output_key

    def __call__(self, state: Any) -> dict[str, Any]:
        messages = state["messages"] if isinstance(state, dict) else state.messages
        view = self.view(list(messages))
        _emit(view.data)
        update: dict[str, Any] = {self.output_key: view.messages}
        stored = _written_back(view, self.settings.write_back)
        if stored:
            update["messages"] = stored
        return update

    async def ainvoke(self, state: Any) -> dict[str, Any]:
        """:meth:`__call__` with the compression in a worker thread."""
        return await run_in_executor(None, self.__call__, state)
