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
from typing import Any

from tpc_core.diagnostics import register_library_path

# Warnings raised by tpc_core point past these adapters too, at the user's own line.
register_library_path(Path(__file__).resolve().parent)

__all__ = ["TPCChatMemory", "TPCContextHook", "TPCContextMiddleware", "TPCDocumentCompressor", "TPCDocumentTransformer",
           "TPCFunctionAgent", "TPCInputCompressor", "TPCMessagesCompressor", "TPCNodePostprocessor",
           "TPCSettingsError", "TPCTransform"]

_LAZY = {"TPCDocumentCompressor": "tpc_integrations.langchain",
         "TPCDocumentTransformer": "tpc_integrations.langchain",
         "TPCNodePostprocessor": "tpc_integrations.llama_index",
         "TPCTransform": "tpc_integrations.llama_index",
         "TPCMessagesCompressor": "tpc_integrations.langchain",
         "TPCInputCompressor": "tpc_integrations.langchain",
         "TPCChatMemory": "tpc_integrations.llama_index",
         "TPCContextMiddleware": "tpc_integrations.langchain_agents",
         "TPCContextHook": "tpc_integrations.langchain_agents",
         "TPCFunctionAgent": "tpc_integrations.llama_index_agents",
         "TPCSettingsError": "tpc_integrations._checks"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tpc_integrations' has no attribute {name!r}")
