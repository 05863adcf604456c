"""Warnings at the user's line (:mod:`.caller`) and runtime notices of what a call did less well than asked
(:mod:`.notices`): the lowest package, used by every other."""

from __future__ import annotations

from tpc_core.diagnostics.caller import register_library_path, warn_at_caller
from tpc_core.diagnostics.language import LanguageNotice, language_scripts
from tpc_core.diagnostics.notices import TPCRuntimeWarning, caller_warning, operator_notice

__all__ = ["LanguageNotice", "TPCRuntimeWarning", "caller_warning", "language_scripts", "operator_notice",
           "register_library_path", "warn_at_caller"]
