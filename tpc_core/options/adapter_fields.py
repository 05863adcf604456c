"""The adapters' engine-option classes, declared statically for type checkers: one class per
:data:`tpc_core.options.adapters.ADAPTER_GROUPS` entry, with each option's type and default.

GENERATED from :class:`tpc_core.options.CompressOptions` and ``ADAPTER_GROUPS`` by ``python -m tpc_core.options
--write``: do not edit (tests/core/options/test_options.py fails when this file drifts from them). At run time the
adapters inherit the classes ``tpc_integrations`` builds from the same groups (with each option's check,
documentation and peer names); these are what type checkers read in their place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tpc_core.segmentation import SentenceSplitter

__all__ = ["AgentContextFields", "ConversationFields", "EveryAdapterFields", "IndexTimeFields", "QueryTimeFields"]


class EveryAdapterFields(BaseModel):
    """The static declaration of ``EveryAdapterOptions``: the engine options of every adapter."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    target_tokens: int | None = None
    rate: float | None = None
    force_keep_patterns: str | re.Pattern[str] | Iterable[str | re.Pattern[str]] = ()
    keep_first_sentence: bool = False
    keep_request: bool = True
    splitter: str | SentenceSplitter | None = None
    cache: Any = None


class QueryTimeFields(BaseModel):
    """The static declaration of ``QueryTimeOptions``: the engine options of the query-time adapters (document
    compressors, node postprocessors, the chain-input compressor): the budget's scope and the reranker-style filters
    applied after it."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    budget_scope: Literal["global", "per_document"] = "global"
    min_score: float | None = None
    top_n: int | None = None


class ConversationFields(BaseModel):
    """The static declaration of ``ConversationOptions``: the query-time option a conversation adapter has (the
    filters have no meaning for messages)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    budget_scope: Literal["global", "per_document"] = "global"


class IndexTimeFields(BaseModel):
    """The static declaration of ``IndexTimeOptions``: the engine options of the index-time transformers: batching,
    the progress bar, whether bare documents are described (not by default: stored documents ask nothing)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    batch_size: int = 16
    show_progress: bool | None = None
    describe_bare: bool = False


class AgentContextFields(BaseModel):
    """The static declaration of ``AgentContextOptions``: the option an agent's context adapter sets apart from
    every adapter: the sentence cache, on in memory by default (a tool result read again on a later call costs
    almost nothing)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    cache: Any = "memory"
