"""The options of ``compress`` / ``compress_batch``, declared once: :class:`CompressOptions`.

* :mod:`.model`: :class:`CompressOptions`, one field per option (type, default, documentation, check);
* :mod:`.checks`: the check of each option, pure functions;
* :mod:`.keywords`: :class:`CompressKeywords`, the typed ``**options``, generated from the model;
* :mod:`.surfaces`: the other surfaces derived from the model (the CLI's flags, the README's table) and the one
  table of defaults that differ by surface; ``python -m tpc_core.options --write`` regenerates the generated texts,
  ``--check`` compares them.
"""

from __future__ import annotations

from tpc_core.options.checks import (
    BUDGET_SCOPES,
    check_splitter,
    compile_patterns,
    validate_budget_args,
    validate_filter_args,
)
from tpc_core.options.keywords import CompressKeywords, Unpack
from tpc_core.options.model import (
    BatchOptions,
    BudgetOptions,
    CompressOptions,
    ConversationOptions,
    Emptied,
    FilterOptions,
    Reach,
    ReadingOptions,
    ScopeOptions,
)
from tpc_core.options.surfaces import SURFACE_DEFAULTS, SurfaceDefault, surface_defaults, surface_defaults_table

__all__ = ["BUDGET_SCOPES", "SURFACE_DEFAULTS", "BatchOptions", "BudgetOptions", "CompressKeywords", "CompressOptions",
           "ConversationOptions", "Emptied", "FilterOptions", "Reach", "ReadingOptions", "ScopeOptions",
           "SurfaceDefault", "Unpack", "check_splitter", "compile_patterns", "surface_defaults",
           "surface_defaults_table", "validate_budget_args", "validate_filter_args"]
