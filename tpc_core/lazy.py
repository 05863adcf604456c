"""A package's public names, imported on first use.

A package's ``__init__`` lists its public names in a table (name -> the module that defines it) and takes its
``__getattr__`` and ``__dir__`` from :func:`lazy_exports`, so ``from tpc_core.engine import TokenCounter`` works
without ``import tpc_core.engine`` importing every module of the engine (and torch with them), and without an import
cycle between a package's ``__init__`` and its modules. Type checkers read the same names from the ``__init__``'s
``if TYPE_CHECKING:`` imports (tests/architecture/test_exports.py holds the two equal).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (its ``__name__``) for the names of ``exports``.

    Args:
        package: The package's ``__name__``.
        exports: Each public name and the module that defines it.

    Returns:
        ``(__getattr__, __dir__)``: the first imports a name's module on first use and keeps the value in the
        package; the second lists the package's public names.

    Example:
        >>> _EXPORTS = {"TokenCounter": "tpc_core.engine.tokens"}
        >>> __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
    """

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
