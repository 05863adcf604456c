"""A package's public names, listed once and imported on first use.

A package's ``__init__`` lists its public names in one table, ``_EXPORTS`` (name -> the module that defines it), and
takes its ``__getattr__`` and ``__dir__`` from :func:`lazy_exports`, so ``from tpc_core.engine import TokenCounter``
works without ``import tpc_core.engine`` importing every module of the engine (and torch with them), and without an
import cycle between a package's ``__init__`` and its modules.

The two other readers of a package get the names from the table: the ``__all__`` of star imports and linters, and the
``if TYPE_CHECKING:`` imports of type checkers, are GENERATED below the table's marker line by
``python -m tpc_core.options --write`` (with the other generated texts; ``--check`` exits 1 where a package differs,
and tests/architecture/test_exports.py checks it).
"""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["GENERATED_BEGIN", "GENERATED_END", "generated_names", "lazy_exports", "lazy_packages", "with_names"]

GENERATED_BEGIN = "# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit"
GENERATED_END = "# end of the generated names"
_ROOT = Path(__file__).resolve().parents[1]


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


def generated_names(exports: Mapping[str, str]) -> str:
    """The text generated from ``exports``: ``__all__`` (sorted, wrapped at 120 characters) and the
    ``if TYPE_CHECKING:`` imports, one per name (an ``X as X`` import is an explicit re-export to strict type
    checkers), in the import sorter's order."""
    names = sorted(exports)
    listed = textwrap.wrap(f"__all__ = [{', '.join(map(repr, names))}]".replace("'", '"'), width=120,
                           subsequent_indent=" " * 11, break_long_words=False, break_on_hyphens=False)
    lines = [GENERATED_BEGIN, *listed, "", "if TYPE_CHECKING:"]
    by_module = sorted(exports.items(), key=lambda item: (item[1], _sort_key(item[0])))
    lines.extend(f"    from {module} import {name} as {name}" for name, module in by_module)
    lines.append(GENERATED_END)
    return "\n".join(lines) + "\n"


def _sort_key(name: str) -> tuple[int, str]:
    """The import sorter's order within one module: constants, then classes, then the rest, each by name."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def _exports(source: str) -> dict[str, str] | None:
    """The ``_EXPORTS`` table written in ``source``, or ``None`` where it has none."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            table = ast.literal_eval(node.value)
            return dict(table)
    return None


def with_names(source: str) -> str:
    """``source`` (a package's ``__init__``) with its generated text replaced by :func:`generated_names` of its table.

    Raises:
        ValueError: The source has no ``_EXPORTS`` or no generated block.
    """
    exports = _exports(source)
    start = source.find(GENERATED_BEGIN)
    end = source.find(GENERATED_END)
    if exports is None or start < 0 or end < start:
        raise ValueError(f"a lazy package's __init__ needs _EXPORTS and the lines {GENERATED_BEGIN!r} ... "
                         f"{GENERATED_END!r} below it.")
    return source[:start] + generated_names(exports) + source[end + len(GENERATED_END) + 1:]


def lazy_packages() -> list[Path]:
    """The ``__init__.py`` of every package of ``tpc_core`` and ``tpc_integrations`` that has an ``_EXPORTS`` table."""
    found = []
    for top in ("tpc_core", "tpc_integrations"):
        for path in sorted((_ROOT / top).rglob("__init__.py")):
            if _exports(path.read_text(encoding="utf-8")) is not None:
                found.append(path)
    return found
