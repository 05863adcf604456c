"""The options of ``compress`` / ``compress_batch``, declared once: :class:`CompressOptions`.

* :mod:`.model`: :class:`CompressOptions`, one field per option (type, default, documentation, check);
* :mod:`.checks`: the check of each option, pure functions;
* :mod:`.keywords`: :class:`CompressKeywords`, the typed ``**options``, generated from the model;
* :mod:`.surfaces`: the other surfaces derived from the model (an option as a settings class's field, the CLI's
  flags, the README's table); ``python -m tpc_core.options --write`` regenerates the generated texts, ``--check``
  compares them.
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
from tpc_core.options.model import CompressOptions, Reach
from tpc_core.options.surfaces import option_field, option_field_drift, options_for

__all__ = ["BUDGET_SCOPES", "CompressKeywords", "CompressOptions", "Reach", "Unpack", "check_splitter",
           "compile_patterns", "option_field", "option_field_drift", "options_for", "validate_budget_args",
           "validate_filter_args"]
