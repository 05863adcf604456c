"""The engine options each kind of adapter has as settings fields, declared in one class per kind.

Each field is one option of :class:`tpc_core.options.CompressOptions`, declared here with the option's type (what a
caller passes, where the option converts it) and default so that readers, IDEs and type checkers see it, and made by
:func:`engine_option` from the option itself: its check, serialiser and documentation, and its peer names as
validation aliases (noted in its documentation). Which options each kind has is the option's
:class:`~tpc_core.options.Reach` (``adapters="every"``, ``"query"``, ``"index"``); tests/core/options/test_options.py
fails when a class here differs from the model (:func:`tpc_core.options.option_field_drift`). The settings
classes inherit these: every adapter :class:`EveryAdapterOptions`, the query-time ones :class:`QueryTimeOptions`, the
conversation ones :class:`ConversationOptions`, the index-time ones :class:`IndexTimeOptions`, the agents
:class:`AgentContextOptions`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict

from tpc_core.options import option_field
from tpc_core.segmentation import SentenceSplitter
from tpc_integrations._peer_names import PEER_ALIASES, peer_aliases

__all__ = ["AgentContextOptions", "ChatMemoryOptions", "ConversationOptions", "EveryAdapterOptions", "IndexTimeOptions",
           "QueryTimeOptions", "engine_option"]


def engine_option(name: str, default: Any, *, note: str | None = None, repr: bool | None = None) -> Any:
    """Option ``name`` as an adapter's settings field (:func:`tpc_core.options.option_field`), its peer names
    accepted and noted in its documentation after ``note`` (what differs for this kind of adapter)."""
    peers = peer_aliases(name)
    notes = [note, *(f"Peer name: ``{peer}`` ({PEER_ALIASES[peer].note})." for peer in peers)]
    return option_field(name, default, note=" ".join(filter(None, notes)) or None, aliases=peers, repr=repr)


class _OptionFields(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)


class EveryAdapterOptions(_OptionFields):
    """The engine options of every adapter (``Reach(adapters="every")``)."""

    target_tokens: Optional[int] = engine_option("target_tokens", None)
    rate: Optional[float] = engine_option("rate", None)
    force_keep_patterns: Union[str, re.Pattern[str], Iterable[Union[str, re.Pattern[str]]]] = engine_option(
        "force_keep_patterns", ())  # stored compiled, as a tuple
    keep_first_sentence: bool = engine_option("keep_first_sentence", False)
    keep_request: bool = engine_option("keep_request", True)
    splitter: Union[str, SentenceSplitter, None] = engine_option("splitter", None)
    cache: Any = engine_option("cache", None, repr=True, note=(
        "An adapter keeps a URL that holds a password (or a pydantic ``SecretStr``) as a ``tpc_core.cache.SecretURL``: "
        "its repr, dumps and serialised forms show it without the password, so a dump cannot restore it (pass "
        "``SecretURL.from_env()``, which reads ``TPC_CACHE_URL``). Checked at construction: another kind is a "
        "TypeError, a directory that cannot be written a PermissionError naming it."))


class QueryTimeOptions(_OptionFields):
    """The engine options of the query-time adapters (``Reach(adapters="query")``: document compressors, node
    postprocessors, the chain-input compressor): one budget across the retrieved documents and the reranker-style
    filters applied after it."""

    budget_scope: Literal["global", "per_document"] = engine_option("budget_scope", "global")
    min_score: Optional[float] = engine_option("min_score", None, note=(
        "A document left empty is dropped, so an off-topic sentence is not kept just to fill the budget (see "
        "``tpc_relevance_score`` for typical scores)."))
    top_n: Optional[int] = engine_option("top_n", None, note=(
        "As a reranker does: documents come back in input order unless ``sort_by_score``."))


class ConversationOptions(_OptionFields):
    """The query-time option a conversation adapter has: ``budget_scope`` (the filters have no meaning for
    messages)."""

    budget_scope: Literal["global", "per_document"] = engine_option("budget_scope", "global", note=(
        "For a conversation the engine's documents are the compressed parts' paragraphs; under \"per_document\" a "
        "share too small for any of its sentences goes unused (\"global\" keeps more)."))


class IndexTimeOptions(_OptionFields):
    """The engine options of the index-time transformers (``Reach(adapters="index")``): batching, the progress bar,
    whether bare documents are described (not by default: stored documents ask nothing)."""

    batch_size: int = engine_option("batch_size", 16)
    show_progress: Optional[bool] = engine_option("show_progress", None)
    describe_bare: bool = engine_option("describe_bare", False, note=(
        "Off by default at index time: stored documents ask nothing, and on held-out training contexts the CTD's "
        "descriptions did not change what was kept (``benchmarks.ctd_bare_value``) while costing seconds per "
        "document; such documents are selected by salience and coverage under the fallback task."))


class ChatMemoryOptions(_OptionFields):
    """The option a chat memory sets apart from every adapter: the sentence cache, on in memory by default (each
    ``get`` reads the history again, and only the turns added since the last one are new)."""

    cache: Any = engine_option("cache", "memory", repr=True, note=(
        "A chat memory's default is \"memory\": a ``get`` after one more turn reads only that turn; None turns it "
        "off."))


class AgentContextOptions(_OptionFields):
    """The option an agent's context adapter sets apart from every adapter: the sentence cache, on in memory by
    default (a tool result read again on a later call costs almost nothing)."""

    cache: Any = engine_option("cache", "memory", repr=True, note=(
        "An agent's default is \"memory\": a tool result read again on a later call costs almost nothing; None "
        "turns it off."))
