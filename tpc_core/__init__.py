"""tpc_core: Task-agnostic Prompt Compression (TPC, ICML 2025) inference engine.

Public names are imported lazily, so ``import tpc_core.segmentation`` (or the CLI's ``--help``) does not
pay for importing torch and transformers. Importing this package never imports LangChain or LlamaIndex.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tpc_core.version import __version__

_EXPORTS = {
    "TPCCompressor": "tpc_core.compressor",
    "CompressionResult": "tpc_core.engine.output.result",
    "SentenceRecord": "tpc_core.engine.output.sentence",
    "TPCConfig": "tpc_core.config",
    "CSEConfig": "tpc_core.config",
    "CTDConfig": "tpc_core.config",
    "DEFAULT_MODEL": "tpc_core.loading.registry",
    "REGISTRY": "tpc_core.loading.registry",
    "Task": "tpc_core.engine.values",
    "TaskSource": "tpc_core.engine.values",
    "Selection": "tpc_core.engine.values",
    "CompressOptions": "tpc_core.options",
}

__all__ = [*_EXPORTS, "__version__"]

if TYPE_CHECKING:  # "X as X": an explicit re-export, so strict type checkers see the public names
    from tpc_core.compressor import TPCCompressor as TPCCompressor
    from tpc_core.config import CSEConfig as CSEConfig
    from tpc_core.config import CTDConfig as CTDConfig
    from tpc_core.config import TPCConfig as TPCConfig
    from tpc_core.engine.output.result import CompressionResult as CompressionResult
    from tpc_core.engine.output.sentence import SentenceRecord as SentenceRecord
    from tpc_core.engine.values import Selection as Selection
    from tpc_core.engine.values import Task as Task
    from tpc_core.engine.values import TaskSource as TaskSource
    from tpc_core.loading.registry import DEFAULT_MODEL as DEFAULT_MODEL
    from tpc_core.loading.registry import REGISTRY as REGISTRY
    from tpc_core.options import CompressOptions as CompressOptions


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tpc_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
