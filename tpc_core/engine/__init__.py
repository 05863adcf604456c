"""The algorithm: one prompt in, one :class:`~tpc_core.engine.output.result.CompressionResult` out.

Nothing here imports the loading package above it (which finds checkpoints and builds the models and heads
this package runs), and nothing here reads the network. The route of one prompt through it is written once, in
docs/ARCHITECTURE.md ("The route of one prompt"); its parts:

* :mod:`.cancellation` (work its caller abandoned stops at its next model step);
* :mod:`.options` (every compress keyword, checked once), :mod:`.tokens` (token counters), :mod:`.fast_encoder`
  (the token ids the default counter and the CSE read), :mod:`.values` (the stage values and the task);
* :mod:`.reading` (split, count and embed a batch of prompts; a cache wraps its per-document step);
* :mod:`.task` (finding the task of a prompt with no question: request heads, layout features, the CTD);
* :mod:`.scoring` (the CSE, the scorers' table, BM25, salience and coverage scores);
* :mod:`.selection` (the budget, MMR, who is kept and the kept text);
* :mod:`.output` (the result, its sentence records, the HTML view);
* :mod:`.pipeline` (the batch loop that runs them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (tpc_core.lazy).
_EXPORTS = {
    "Cancelled": "tpc_core.engine.cancellation",
    "run_cancellable": "tpc_core.engine.cancellation",
    "CompressKeywords": "tpc_core.engine.options",
    "CompressionOptions": "tpc_core.engine.options",
    "Unpack": "tpc_core.engine.options",
    "as_documents": "tpc_core.engine.options",
    "as_questions": "tpc_core.engine.options",
    "Engine": "tpc_core.engine.pipeline",
    "Stored": "tpc_core.engine.reading",
    "segment": "tpc_core.engine.reading",
    "TokenCounter": "tpc_core.engine.tokens",
    "TokenCounterSpec": "tpc_core.engine.tokens",
    "resolve_token_counter": "tpc_core.engine.tokens",
    "CountTokens": "tpc_core.engine.values",
    "Joined": "tpc_core.engine.values",
    "Segmented": "tpc_core.engine.values",
    "Selection": "tpc_core.engine.values",
    "Task": "tpc_core.engine.values",
    "TaskSource": "tpc_core.engine.values",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["Cancelled", "CompressKeywords", "CompressionOptions", "CountTokens", "Engine", "Joined", "Segmented",
           "Selection", "Stored", "Task", "TaskSource", "TokenCounter", "TokenCounterSpec", "Unpack", "as_documents",
           "as_questions", "resolve_token_counter", "run_cancellable", "segment"]

if TYPE_CHECKING:
    from tpc_core.engine.cancellation import Cancelled as Cancelled
    from tpc_core.engine.cancellation import run_cancellable as run_cancellable
    from tpc_core.engine.options import CompressionOptions as CompressionOptions
    from tpc_core.engine.options import CompressKeywords as CompressKeywords
    from tpc_core.engine.options import Unpack as Unpack
    from tpc_core.engine.options import as_documents as as_documents
    from tpc_core.engine.options import as_questions as as_questions
    from tpc_core.engine.pipeline import Engine as Engine
    from tpc_core.engine.reading import Stored as Stored
    from tpc_core.engine.reading import segment as segment
    from tpc_core.engine.tokens import TokenCounter as TokenCounter
    from tpc_core.engine.tokens import TokenCounterSpec as TokenCounterSpec
    from tpc_core.engine.tokens import resolve_token_counter as resolve_token_counter
    from tpc_core.engine.values import CountTokens as CountTokens
    from tpc_core.engine.values import Joined as Joined
    from tpc_core.engine.values import Segmented as Segmented
    from tpc_core.engine.values import Selection as Selection
    from tpc_core.engine.values import Task as Task
    from tpc_core.engine.values import TaskSource as TaskSource
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
