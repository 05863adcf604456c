"""Each package of ``tpc_core`` says what it offers, and the adapters use only that.

* every sub-package's ``__init__`` declares ``__all__``, the names other code takes from it;
* a lazy one (``tpc_core.lazy``) lists its names once, in ``_EXPORTS`` (name -> the module that defines it); its
  ``__all__`` (star imports, linters) and ``if TYPE_CHECKING:`` imports (type checkers) are generated from the table
  (``python -m tpc_core.options --write``) and must be what it generates, and each module must define the name it
  is said to;
* ``tpc_integrations`` imports from ``tpc_core`` only through ``tpc_core`` or a sub-package's ``__init__``, and
  only the names its ``__all__`` declares: a module moved or split inside the core changes one table, not the
  adapters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.architecture.test_architecture import EXPORTS, PACKAGE, PACKAGE_MODULES, _modules
from tpc_core.lazy import lazy_packages, with_names

SUB_PACKAGES = sorted(module for module, path in PACKAGE_MODULES.items()
                      if path.name == "__init__.py" and module != PACKAGE and "checkpoints" not in module)


def _tree(module: str) -> ast.Module:
    return ast.parse(PACKAGE_MODULES[module].read_text(encoding="utf-8"))


def _assigned(tree: ast.Module, name: str) -> ast.expr | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
    return None


def declared_names(module: str) -> list[str]:
    """A package's ``__all__``, read from its ``__init__`` (a list of strings, written out)."""
    value = _assigned(_tree(module), "__all__")
    assert value is not None, f"{module} declares no __all__"
    names = ast.literal_eval(value)
    assert isinstance(names, list) and all(isinstance(name, str) for name in names), module
    return names


def type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """Name -> module of the imports under a top-level ``if TYPE_CHECKING:``."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    found.update({alias.asname or alias.name: statement.module or "" for alias in statement.names})
    return found


def top_level_names(module: str) -> set[str]:
    """What ``module`` binds at its top (or in a top-level ``try`` / ``if``): definitions, assignments, imports."""
    names: set[str] = set()
    body = list(_tree(module).body)
    for node in body:
        if isinstance(node, ast.Try):
            body.extend([*node.body, *(line for handler in node.handlers for line in handler.body), *node.orelse])
        elif isinstance(node, ast.If):
            body.extend([*node.body, *node.orelse])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


@pytest.mark.parametrize("package", SUB_PACKAGES)
def test_every_sub_package_declares_its_public_names(package):
    names = declared_names(package)
    assert names, f"{package}'s __all__ is empty"
    assert len(names) == len(set(names)), f"{package}'s __all__ repeats a name"
    table = _assigned(_tree(package), "_EXPORTS")
    if table is None:  # eager: the names are imported or defined in the __init__ itself
        missing = set(names) - top_level_names(package)
        assert not missing, f"{package}'s __all__ names what it does not bind: {sorted(missing)}"
        return
    exports = ast.literal_eval(table)
    assert sorted(exports) == sorted(names), f"{package}: _EXPORTS and __all__ differ"
    assert type_checking_imports(_tree(package)) == exports, \
        f"{package}: the TYPE_CHECKING imports and _EXPORTS differ"
    undefined = [f"{name} (in {module})" for name, module in exports.items()
                 if module not in PACKAGE_MODULES or name not in top_level_names(module)]
    assert not undefined, f"{package}'s _EXPORTS names what its modules do not define: {undefined}"


def test_every_lazy_package_has_the_names_its_table_generates():
    packages = lazy_packages()
    assert {path.parent.name for path in packages} >= {"tpc_core", "tpc_integrations", "engine", "loading"}
    stale = [str(path) for path in packages if with_names(path.read_text(encoding="utf-8")) !=
             path.read_text(encoding="utf-8")]
    assert not stale, f"run python -m tpc_core.options --write: {stale}"


def test_the_package_exports_what_a_user_or_a_checkpoint_author_needs():
    import tpc_core

    assert set(tpc_core.__all__) == {"CSEConfig", "CTDConfig", "CompressionResult", "DEFAULT_MODEL", "REGISTRY",
                                     "SentenceRecord", "TPCCompressor", "TPCConfig", "TaskSource", "__version__"}
    for name in tpc_core.__all__:
        assert getattr(tpc_core, name) is not None


def deep_imports(path: Path, public: dict[str, set[str]]) -> list[str]:
    """Imports of ``path`` from ``tpc_core`` other than a name ``public`` lists for the module imported from."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(f"line {node.lineno}: import {alias.name}" for alias in node.names
                         if alias.name.split(".")[0] == PACKAGE and alias.name != PACKAGE)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == PACKAGE:
            offered = public.get(node.module or "")
            if offered is None:
                found.append(f"line {node.lineno}: from {node.module} (not a package's __init__)")
            else:
                found.extend(f"line {node.lineno}: {alias.name} from {node.module} (not in its __all__)"
                             for alias in node.names if alias.name not in offered)
    return found


def public_names() -> dict[str, set[str]]:
    # tpc_core.lazy is the one lazy-export mechanism, which tpc_integrations' __init__ uses too
    return {PACKAGE: set(EXPORTS), "tpc_core.lazy": {"lazy_exports"},
            **{package: set(declared_names(package)) for package in SUB_PACKAGES}}


def test_the_adapters_import_only_public_names_of_the_core():
    public = public_names()
    found = {module: uses for module, path in _modules("tpc_integrations").items()
             if (uses := deep_imports(path, public))}
    assert not found, "tpc_integrations imports from inside tpc_core (import from tpc_core or a sub-package, add the " \
        "name to its __all__):\n" + "\n".join(f"{module}: {use}" for module, uses in found.items() for use in uses)


def test_deep_import_detection(tmp_path):
    source = ("import tpc_core\nfrom tpc_core import TPCCompressor\nfrom tpc_core.engine import TokenCounter\n"
              "from tpc_core.engine.tokens import TokenCounter\nfrom tpc_core.cache import reveal, _private\n"
              "def f():\n    import tpc_core.engine.values\n")
    path = tmp_path / "adapter.py"
    path.write_text(source, encoding="utf-8")
    public = {"tpc_core": {"TPCCompressor"}, "tpc_core.engine": {"TokenCounter"}, "tpc_core.cache": {"reveal"}}
    assert sorted(deep_imports(path, public)) == [
        "line 4: from tpc_core.engine.tokens (not a package's __init__)",
        "line 5: _private from tpc_core.cache (not in its __all__)",
        "line 7: import tpc_core.engine.values"]
