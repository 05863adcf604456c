"""Thin framework adapters over :mod:`tpc_core`; each framework is imported only when its adapter is asked for.

* ``tpc_integrations.langchain.TPCDocumentCompressor`` (query time) and ``TPCDocumentTransformer`` (index time)
  (``pip install tpc-langchain[langchain]``)
* ``tpc_integrations.llama_index.TPCNodePostprocessor`` (query time) and ``TPCTransform`` (index time)
  (``pip install tpc-langchain[llamaindex]``)
* chains: ``tpc_integrations.langchain.TPCInputCompressor`` (a runnable on a chain's input dict: the context
  variables compressed toward the question variable, before the prompt template)
* conversations: ``tpc_integrations.langchain.TPCMessagesCompressor`` (a runnable between a prompt and a chat
  model) and ``tpc_integrations.llama_index.TPCChatMemory`` (a memory for chat engines and agents)
* agents: ``tpc_integrations.langchain_agents.TPCContextMiddleware`` (``create_agent``) and ``TPCContextHook``
  (LangGraph) (``pip install tpc-langchain[agents]``), ``tpc_integrations.llama_index_agents.TPCFunctionAgent``
  (``pip install tpc-langchain[llamaindex]``)
* ``tpc_integrations.embeddings``: the PyPI-shipped MiniLM as an offline embedding for either framework.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tpc_core.diagnostics import register_library_path
from tpc_core.lazy import lazy_exports

# Warnings raised by tpc_core point past these adapters too, at the user's own line.
register_library_path(Path(__file__).resolve().parent)

# Each adapter and the module that defines it, imported on first use (its framework with it).
_EXPORTS = {
    "TPCDocumentCompressor": "tpc_integrations.langchain",
    "TPCDocumentTransformer": "tpc_integrations.langchain",
    "TPCInputCompressor": "tpc_integrations.langchain",
    "TPCMessagesCompressor": "tpc_integrations.langchain",
    "TPCNodePostprocessor": "tpc_integrations.llama_index",
    "TPCTransform": "tpc_integrations.llama_index",
    "TPCChatMemory": "tpc_integrations.llama_index",
    "TPCContextMiddleware": "tpc_integrations.langchain_agents",
    "TPCContextHook": "tpc_integrations.langchain_agents",
    "TPCFunctionAgent": "tpc_integrations.llama_index_agents",
    "TPCSettingsError": "tpc_integrations._checks",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["TPCChatMemory", "TPCContextHook", "TPCContextMiddleware", "TPCDocumentCompressor", "TPCDocumentTransformer",
           "TPCFunctionAgent", "TPCInputCompressor", "TPCMessagesCompressor", "TPCNodePostprocessor",
           "TPCSettingsError", "TPCTransform"]

if TYPE_CHECKING:
    from tpc_integrations._checks import TPCSettingsError as TPCSettingsError
    from tpc_integrations.langchain import TPCDocumentCompressor as TPCDocumentCompressor
    from tpc_integrations.langchain import TPCDocumentTransformer as TPCDocumentTransformer
    from tpc_integrations.langchain import TPCInputCompressor as TPCInputCompressor
    from tpc_integrations.langchain import TPCMessagesCompressor as TPCMessagesCompressor
    from tpc_integrations.langchain_agents import TPCContextHook as TPCContextHook
    from tpc_integrations.langchain_agents import TPCContextMiddleware as TPCContextMiddleware
    from tpc_integrations.llama_index import TPCChatMemory as TPCChatMemory
    from tpc_integrations.llama_index import TPCNodePostprocessor as TPCNodePostprocessor
    from tpc_integrations.llama_index import TPCTransform as TPCTransform
    from tpc_integrations.llama_index_agents import TPCFunctionAgent as TPCFunctionAgent
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
