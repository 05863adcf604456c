"""The warnings' caller: library paths, and the deprecated ``library_paths``."""

from __future__ import annotations

import pytest

from tpc_core.diagnostics import caller


def test_library_paths_still_answers_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="register_library_path"):
        paths = caller.library_paths()
    assert paths[0].endswith("tpc_core")


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        caller.no_such_name  # noqa: B018
