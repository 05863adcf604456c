"""Choosing sentences under a hard budget: the pure budget policy (:mod:`.budget`), maximal marginal relevance
(:mod:`.mmr`), and a scored prompt's kept sentences joined verbatim and recounted (:mod:`.assembly`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (tpc_core.lazy).
_EXPORTS = {
    "compress_scored": "tpc_core.engine.selection.assembly",
    "BUDGET_SCOPES": "tpc_core.engine.selection.budget",
    "CountTokens": "tpc_core.engine.selection.budget",
    "DEFAULT_RATE": "tpc_core.engine.selection.budget",
    "Joined": "tpc_core.engine.selection.budget",
    "fit_to_budget": "tpc_core.engine.selection.budget",
    "join_kept": "tpc_core.engine.selection.budget",
    "joined_count": "tpc_core.engine.selection.budget",
    "resolve_budget": "tpc_core.engine.selection.budget",
    "top_k_within_budget": "tpc_core.engine.selection.budget",
    "validate_budget_args": "tpc_core.engine.selection.budget",
    "validate_filter_args": "tpc_core.engine.selection.budget",
    "mmr_within_budget": "tpc_core.engine.selection.mmr",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["BUDGET_SCOPES", "CountTokens", "DEFAULT_RATE", "Joined", "compress_scored", "fit_to_budget", "join_kept",
           "joined_count", "mmr_within_budget", "resolve_budget", "top_k_within_budget", "validate_budget_args",
           "validate_filter_args"]

if TYPE_CHECKING:
    from tpc_core.engine.selection.assembly import compress_scored as compress_scored
    from tpc_core.engine.selection.budget import BUDGET_SCOPES as BUDGET_SCOPES
    from tpc_core.engine.selection.budget import DEFAULT_RATE as DEFAULT_RATE
    from tpc_core.engine.selection.budget import CountTokens as CountTokens
    from tpc_core.engine.selection.budget import Joined as Joined
    from tpc_core.engine.selection.budget import fit_to_budget as fit_to_budget
    from tpc_core.engine.selection.budget import join_kept as join_kept
    from tpc_core.engine.selection.budget import joined_count as joined_count
    from tpc_core.engine.selection.budget import resolve_budget as resolve_budget
    from tpc_core.engine.selection.budget import top_k_within_budget as top_k_within_budget
    from tpc_core.engine.selection.budget import validate_budget_args as validate_budget_args
    from tpc_core.engine.selection.budget import validate_filter_args as validate_filter_args
    from tpc_core.engine.selection.mmr import mmr_within_budget as mmr_within_budget
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
