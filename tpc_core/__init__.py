"""tpc_core: Task-agnostic Prompt Compression (TPC, ICML 2025) inference engine.

Public names are imported lazily (:mod:`tpc_core.lazy`), so ``import tpc_core.segmentation`` (or the CLI's
``--help``) does not pay for importing torch and transformers. Importing this package never imports LangChain or
LlamaIndex.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# What a user or a checkpoint author needs, and the module that defines it, imported on first use.
_EXPORTS = {
    "__version__": "tpc_core.version",
    "TPCCompressor": "tpc_core.compressor",
    "CompressionResult": "tpc_core.engine.output.result",
    "SentenceRecord": "tpc_core.engine.output.sentence",
    "TaskSource": "tpc_core.engine.values",
    "TPCConfig": "tpc_core.config",
    "CSEConfig": "tpc_core.config",
    "CTDConfig": "tpc_core.config",
    "DEFAULT_MODEL": "tpc_core.loading.registry",
    "REGISTRY": "tpc_core.loading.registry",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["CSEConfig", "CTDConfig", "CompressionResult", "DEFAULT_MODEL", "REGISTRY", "SentenceRecord",
           "TPCCompressor", "TPCConfig", "TaskSource", "__version__"]

if TYPE_CHECKING:
    from tpc_core.compressor import TPCCompressor as TPCCompressor
    from tpc_core.config import CSEConfig as CSEConfig
    from tpc_core.config import CTDConfig as CTDConfig
    from tpc_core.config import TPCConfig as TPCConfig
    from tpc_core.engine.output.result import CompressionResult as CompressionResult
    from tpc_core.engine.output.sentence import SentenceRecord as SentenceRecord
    from tpc_core.engine.values import TaskSource as TaskSource
    from tpc_core.loading.registry import DEFAULT_MODEL as DEFAULT_MODEL
    from tpc_core.loading.registry import REGISTRY as REGISTRY
    from tpc_core.version import __version__ as __version__
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
