"""LlamaIndex agents: a ``FunctionAgent`` whose LLM reads tool outputs compressed toward the user's task.

One line, in place of ``FunctionAgent``::

    from tpc_integrations.llama_index_agents import TPCFunctionAgent

    agent = TPCFunctionAgent(tools=tools, llm=llm, target_tokens=8000)
    workflow = AgentWorkflow(agents=[agent, ...], root_agent=agent.name)     # the same in a multi-agent workflow

A function agent keeps the tool outputs of a run in its scratchpad and sends them to the LLM on every step; this
agent compresses what each LLM call receives, as :class:`tpc_integrations.langchain_agents.TPCContextMiddleware`
does (:mod:`tpc_core.conversation.tool_results`): each tool output compressed once toward the user's request and its
tool call, then re-sent as the same bytes. The memory and the scratchpad keep every output whole. Needs
``pip install tpc-langchain[llamaindex]``.
"""

from __future__ import annotations

import asyncio
from typing import Any, List, Sequence

try:
    import llama_index.core.instrumentation as instrument
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.tools import AsyncBaseTool
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCFunctionAgent needs llama-index-core: pip install 'tpc-langchain[llamaindex]'") from error

from tpc_integrations._agent_context import AGENT_EVENT, AgentContext, TPCAgentContextSettings
from tpc_integrations._checks import TPCSettingsError
from tpc_integrations.llama_index_memory import TPCEvent

__all__ = ["AGENT_EVENT", "TPCFunctionAgent"]

dispatcher = instrument.get_dispatcher(__name__)


class TPCFunctionAgent(FunctionAgent):
    """A ``FunctionAgent`` that compresses what its LLM receives on each step (tool outputs first, each toward the
    user's latest request and its tool call; then, with ``scope="all"``, older turns), within ``target_tokens``.

    Takes ``FunctionAgent``'s arguments and, beside them, the TPC settings of
    :class:`tpc_integrations._agent_context.TPCAgentContextSettings` (``target_tokens`` / ``target_fraction`` of the
    LLM's ``context_window``, ``trigger_tokens``, ``token_counter``, ``scope``, ``exclude_tools``, ``cache``,
    ``on_error`` (default "passthrough"), ``deadline_ms``, the model settings) and ``compressor=``. ``write_back`` is
    refused: the agent's scratchpad is its own. Each step emits a :class:`TPCEvent` (``name="tpc_agent_context"``)
    with the step's figures; the compression runs in a worker thread.
    """

    _tpc: AgentContext = PrivateAttr()

    def __init__(self, *, compressor: Any = None, **kwargs: Any) -> None:
        tpc = {name: kwargs.pop(name) for name in list(kwargs) if name in TPCAgentContextSettings.model_fields}
        if tpc.get("write_back"):
            raise TPCSettingsError("write_back does not apply to TPCFunctionAgent: its tool outputs live in the "
                                   "agent's scratchpad and memory, which stay whole.")
        super().__init__(**kwargs)
        self._tpc = AgentContext(compressor, label=type(self).__name__, **tpc)

    @property
    def tpc_settings(self) -> TPCAgentContextSettings:
        """The checked TPC settings."""
        return self._tpc.settings

    async def _compressed(self, messages: List[ChatMessage]) -> List[ChatMessage]:
        window = getattr(self.llm.metadata, "context_window", None)
        view = await asyncio.to_thread(self._tpc.view, list(messages), window)
        dispatcher.event(TPCEvent(name=AGENT_EVENT, data=view.data))
        return view.messages

    async def _get_response(self, current_llm_input: List[ChatMessage], tools: Sequence[AsyncBaseTool]
                            ) -> ChatResponse:
        return await super()._get_response(await self._compressed(current_llm_input), tools)

    async def _get_streaming_response(self, ctx: Any, current_llm_input: List[ChatMessage],
                                      tools: Sequence[AsyncBaseTool]) -> ChatResponse:
        return await super()._get_streaming_response(ctx, await self._compressed(current_llm_input), tools)
