"""The structure of the code: no import cycles, one-way folders, private names kept private.

Read from the source with ``ast`` (nothing is imported), so every module is covered, whatever it is named,
including ones added later. Every import counts: one inside a function (a lazy import is still a dependency) and
one under ``if TYPE_CHECKING:`` (a type-only import is still a dependency of the code's meaning: a circle of them is
a circle a reader must follow). ``from tpc_core import Name`` is resolved through the package's lazy ``_EXPORTS``
table to the module that defines ``Name``, and so is ``from tpc_core.engine import Name``.

The rules, each a test below:

* no import cycle in the whole tree, nor among the modules of any of the code folders (``tpc_core``,
  ``tpc_integrations``, ``synthesis``, ``data_access``, ``evaluation``, ``benchmarks``, ``training``), and the
  folders import one way only, as :data:`ALLOWED_FOLDER_IMPORTS` lists: ``training`` and ``benchmarks`` ->
  ``evaluation`` -> ``data_access`` -> ``synthesis`` -> ``tpc_core``; ``evaluation`` and the ``benchmarks`` that
  measure the adapters import ``tpc_integrations``' public names (no ``_`` module or name); the core knows none of
  the others;
* training and the benchmarks share the evaluation protocol (``evaluation``: methods, metrics, one sample through
  one method) and their data access (``data_access``); neither imports the other, and training takes no data name
  through the protocol;
* nothing imports ``experiments/`` (one-off research scripts: they may use the code, the code never uses them);
* no private name of another module used: neither ``module._name`` nor ``obj._name`` on an object that the
  using module did not define (``self`` / ``cls`` inside a class of the module are its own).

The layer order inside the packages is tests/architecture/test_architecture_layers.py's. Size is ruff's complexity
rules' concern (C901, PLR0912, PLR0915), not a cap on lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "tpc_core"
# Code outside tpc_core that must use only its public names (tests may reach inside; they test it).
CLIENTS = ("tpc_integrations", "synthesis", "data_access", "evaluation", "benchmarks", "training", "examples",
           "experiments")
# The code folders (examples and experiments are scripts that use them; tests may reach inside).
CODE_FOLDERS = ("tpc_core", "tpc_integrations", "synthesis", "data_access", "evaluation", "benchmarks", "training")
# Which other code folders each one may import (the layering; anything else is a test failure).
ALLOWED_FOLDER_IMPORTS = {
    "tpc_core": set(),
    "tpc_integrations": {"tpc_core"},
    "synthesis": {"tpc_core"},
    "data_access": {"tpc_core", "synthesis"},
    "evaluation": {"tpc_core", "synthesis", "data_access", "tpc_integrations"},
    "benchmarks": {"tpc_core", "synthesis", "data_access", "evaluation", "tpc_integrations"},
    "training": {"tpc_core", "synthesis", "data_access", "evaluation"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(top: str) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((ROOT / top).rglob("*.py"))}


PACKAGE_MODULES = _modules(PACKAGE)


def _lazy_exports(path: Path) -> dict[str, str]:
    """A package's ``_EXPORTS`` (public name -> defining module), read from its ``__init__.py``; ``{}`` without one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


EXPORTS = _lazy_exports(ROOT / PACKAGE / "__init__.py")
# Every package with a lazy table (tpc_core, tpc_core.engine, ...): ``from package import Name`` is an import of the
# module that defines ``Name``.
LAZY_EXPORTS = {module: table for module, path in PACKAGE_MODULES.items()
                if path.name == "__init__.py" and (table := _lazy_exports(path))}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _longest_module(dotted: str, modules: dict[str, Path]) -> str | None:
    """The longest module of ``modules`` that ``dotted`` names or lies in, or ``None``."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _package_module(dotted: str) -> str | None:
    """The longest ``tpc_core`` module that ``dotted`` names or lies in, or ``None`` outside the package."""
    return _longest_module(dotted, PACKAGE_MODULES)


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class _Imports:
    """What one module imports from ``tpc_core`` and which private names of other modules it reaches."""

    def __init__(self, module: str, path: Path) -> None:
        self.module = module
        self.edges: dict[str, int] = {}  # imported tpc_core module -> its first import's line
        self.private: list[str] = []  # "line N: what", in line order
        self._found: list[tuple[int, str]] = []
        self._aliases: dict[str, str] = {}  # local name -> the tpc_core module (or package) it is bound to
        self._is_package = path.name == "__init__.py"
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))))
        for node in nodes:
            if isinstance(node, ast.Import):
                self._import(node)
            elif isinstance(node, ast.ImportFrom):
                self._import_from(node)
            elif isinstance(node, ast.Call) and _is_import_module(node):
                target = _package_module(node.args[0].value)
                if target is not None:
                    self._edge(target, node.lineno)
        for node in nodes:
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                self._private_attribute(node)
        self.private = [f"line {line}: {use}" for line, use in sorted(self._found)]

    def _import(self, node: ast.Import) -> None:
        """``import tpc_core.x`` / ``import tpc_core.x as y``: an edge, and the name it binds."""
        for alias in node.names:
            target = _package_module(alias.name)
            if target is None:
                continue
            self._edge(target, node.lineno)
            if alias.asname:
                self._aliases[alias.asname] = target
            else:
                self._aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]

    def _import_from(self, node: ast.ImportFrom) -> None:
        """``from tpc_core.x import y``: a sub-module, a lazily exported name, or a name of the module itself."""
        source = _absolute(self.module, node, self._is_package)
        source_module = _package_module(source)
        if source_module is None:
            return
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            if submodule in PACKAGE_MODULES:  # from tpc_core.corpus import io as corpus_io
                self._edge(submodule, node.lineno)
                self._aliases[alias.asname or alias.name] = submodule
            elif alias.name in LAZY_EXPORTS.get(source, {}):  # from tpc_core import TPCCompressor
                self._edge(LAZY_EXPORTS[source][alias.name], node.lineno)
            else:
                self._edge(source_module, node.lineno)
                if _is_private(alias.name) and source_module != self.module:
                    self._found.append((node.lineno, f"from {source} import {alias.name}"))

    def _private_attribute(self, node: ast.Attribute) -> None:
        """``tpc_core.x._name`` / ``m._name`` through a name bound to another tpc_core module."""
        dotted = _dotted(node.value)
        if dotted is None or dotted.split(".")[0] not in self._aliases:
            return
        head, *rest = dotted.split(".")
        named = ".".join([self._aliases[head], *rest])
        target = _package_module(named)
        if target is not None and target != self.module and named == target:
            self._found.append((node.lineno, f"{dotted}.{node.attr}"))

    def _edge(self, target: str, line: int) -> None:
        if target != self.module:
            self.edges[target] = min(line, self.edges.get(target, line))


def _is_import_module(node: ast.Call) -> bool:
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    return (name in ("import_module", "__import__") and bool(node.args) and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> list[str]:
    """Pop Tarjan's stack down to ``root``: the members of ``root``'s strongly connected component."""
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == root:
            return component


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = _pop_component(stack, on_stack, node)
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def _describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    members = set(component)
    return "; ".join(f"{source} -> {target} (line {line})" for source in component
                     for target, line in sorted(graph[source].items()) if target in members)


GRAPH = {module: _Imports(module, path).edges for module, path in PACKAGE_MODULES.items()}


def test_the_walk_sees_the_package_and_its_lazy_imports():
    """Guards the test itself: it must find the modules and the function-level imports it is about."""
    assert {"tpc_core.compressor", "tpc_core.loading.checkpoint", "tpc_core.corpus.local"} <= set(GRAPH)
    assert ("tpc_core.compressor" in GRAPH["tpc_core.loading.checkpoint"]
            or "tpc_core.loading.checkpoint" in GRAPH["tpc_core.compressor"])
    assert "tpc_core.corpus.ray_engine" in GRAPH["tpc_core.corpus.local"]  # imported inside a function only


def test_tpc_core_has_no_import_cycles():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles in tpc_core (move what both need into a lower module):\n" + "\n".join(
        _describe(component, GRAPH) for component in cycles)


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}, "e": {"e": 5}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("top", [PACKAGE, *CLIENTS])
def test_no_module_uses_a_private_name_of_a_tpc_core_module(top):
    if not (ROOT / top).is_dir():
        pytest.skip(f"{top}/ is not in this checkout")
    found = {module: uses for module, path in _modules(top).items() if (uses := _Imports(module, path).private)}
    assert not found, "private tpc_core names used outside their module (make them public or move them):\n" + \
        "\n".join(f"{module}: {use}" for module, uses in found.items() for use in uses)


def test_private_name_detection(tmp_path):
    source = ("import tpc_core.loading.checkpoint\nimport tpc_core.loading.offline as offline\n"
              "from tpc_core import segmentation\n"
              "from tpc_core.loading.checkpoint import _detect_architecture, resolve_base\n"
              "def f():\n    tpc_core.loading.checkpoint._from_pretrained\n    offline._package_dir\n"
              "    segmentation._split\n    offline.__name__\n    segmentation.public._private_attr\n")
    path = tmp_path / "client.py"
    path.write_text(source, encoding="utf-8")
    uses = _Imports("client", path).private
    assert uses == ["line 4: from tpc_core.loading.checkpoint import _detect_architecture",
                    "line 6: tpc_core.loading.checkpoint._from_pretrained", "line 7: offline._package_dir",
                    "line 8: segmentation._split"]


# ---------------------------------------------------------------------------------------------- all five folders
ALL_MODULES = {name: path for folder in CODE_FOLDERS for name, path in _modules(folder).items()}


def _known_module(dotted: str) -> str | None:
    """The longest module of the five code folders that ``dotted`` names or lies in."""
    return _longest_module(dotted, ALL_MODULES)


def _code_imports(module: str, path: Path) -> dict[str, int]:
    """Every module of the five folders that ``module`` imports at run time (type-only imports aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    edges: dict[str, int] = {}
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node, is_package)
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in ALL_MODULES
                       else LAZY_EXPORTS.get(source, {}).get(alias.name, source) for alias in node.names]
        elif isinstance(node, ast.Call) and _is_import_module(node):
            targets = [node.args[0].value]
        for dotted in targets:
            target = _known_module(dotted)
            if target is not None and target != module:
                edges[target] = min(node.lineno, edges.get(target, node.lineno))
    return edges


CODE_GRAPH = {module: _code_imports(module, path) for module, path in ALL_MODULES.items()}


@pytest.mark.parametrize("folder", CODE_FOLDERS)
def test_no_import_cycles_inside_a_code_folder(folder):
    graph = {module: {target: line for target, line in edges.items() if target.split(".")[0] == folder}
             for module, edges in CODE_GRAPH.items() if module.split(".")[0] == folder}
    cycles = _cycles(graph)
    assert not cycles, f"import cycles in {folder}/ (move what both need into a lower module):\n" + "\n".join(
        _describe(component, graph) for component in cycles)


def test_no_import_cycles_in_the_whole_tree():
    cycles = _cycles(CODE_GRAPH)
    assert not cycles, "import cycles across the code folders (move what both need into a lower module):\n" + \
        "\n".join(_describe(component, CODE_GRAPH) for component in cycles)


def test_type_only_imports_count(tmp_path):
    source = ("from typing import TYPE_CHECKING\nimport typing\nif TYPE_CHECKING:\n"
              "    from tpc_core.engine.selection.budget import Joined\nif typing.TYPE_CHECKING:\n"
              "    import tpc_core.engine.tokens\n")
    path = tmp_path / "values.py"
    path.write_text(source, encoding="utf-8")
    assert _code_imports("tpc_core.engine.values", path) == {"tpc_core.engine.selection.budget": 4,
                                                              "tpc_core.engine.tokens": 6}
    assert _Imports("tpc_core.engine.values", path).edges == {"tpc_core.engine.selection.budget": 4,
                                                               "tpc_core.engine.tokens": 6}


def test_the_code_folders_are_one_way():
    folders: dict[str, dict[str, int]] = {folder: {} for folder in CODE_FOLDERS}
    where: dict[tuple[str, str], str] = {}
    for module, edges in CODE_GRAPH.items():
        for target, line in edges.items():
            source_folder, target_folder = module.split(".")[0], target.split(".")[0]
            if source_folder != target_folder:
                folders[source_folder].setdefault(target_folder, line)
                where.setdefault((source_folder, target_folder), f"{module} -> {target} (line {line})")
    cycles = _cycles(folders)
    assert not cycles, "code folders that import each other both ways:\n" + "\n".join(
        "; ".join(where[(a, b)] for a in component for b in component if (a, b) in where) for component in cycles)
    assert "benchmarks" not in folders["tpc_core"] and "training" not in folders["tpc_core"]
    assert "tpc_integrations" not in folders["tpc_core"], "the engine must not know its adapters"
    wrong = [where[(source, target)] for source, targets in folders.items() for target in targets
             if target not in ALLOWED_FOLDER_IMPORTS[source]]
    assert not wrong, "imports against the layering (ALLOWED_FOLDER_IMPORTS):\n" + "\n".join(wrong)


@pytest.mark.parametrize("folder", ["evaluation", "benchmarks"])
def test_the_measurements_use_only_public_names_of_the_adapters(folder):
    """The protocol and the benchmarks that measure the adapters import ``tpc_integrations``' public modules and
    names, nothing else."""
    found = []
    for module, path in _modules(folder).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and node.level == 0
                    and (node.module or "").startswith("tpc_integrations")):
                names = [*(node.module or "").split("."), *(alias.name for alias in node.names)]
            elif isinstance(node, ast.Import):
                names = [part for alias in node.names if alias.name.startswith("tpc_integrations")
                         for part in alias.name.split(".")]
            else:
                continue
            found.extend(f"{module} line {node.lineno}" for name in names if _is_private(name))
    assert not found, f"private tpc_integrations names imported by {folder}:\n" + "\n".join(found)


def _top(dotted: str) -> str:
    """The top-level package of a dotted module name."""
    return dotted.split(".")[0]


def _imports_experiments(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "experiments" for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _top(node.module or "") == "experiments":
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and _is_import_module(node) and _top(node.args[0].value) == "experiments":
            lines.append(node.lineno)
    return lines


def test_nothing_imports_the_experiments():
    """``experiments/`` holds one-off research scripts; no code folder, example or test depends on them."""
    found = [f"{path.relative_to(ROOT)} line {line}" for top in (*CODE_FOLDERS, "examples", "tests")
             for path in sorted((ROOT / top).rglob("*.py")) for line in _imports_experiments(path)]
    assert not found, "imports of experiments/ (move what is needed into a code folder):\n" + "\n".join(found)


def _defined_private_names(tree: ast.AST) -> set[str]:
    """Private names this module defines: functions, classes, assignments, ``self._x = ...``, parameters, imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if not isinstance(node, ast.ClassDef):
                names.update(arg.arg for arg in [*node.args.args, *node.args.kwonlyargs])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "getattr") \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            names.add(str(node.args[1].value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)  # __slots__, _CACHES tables, dataclass field names
    return {name for name in names if _is_private(name)}


def foreign_private_uses(path: Path) -> list[str]:
    """``obj._name`` where this module defines no ``_name``: another module's private attribute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    own = _defined_private_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _known_module(node.module or "") is not None:
            found.extend((node.lineno, f"from {node.module} import {alias.name}") for alias in node.names
                         if _is_private(alias.name))
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in own:
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                found.append((node.lineno, f"{base.id}.{node.attr} (inherited from another module)"))
            elif not (isinstance(base, ast.Name) and base.id in ("sys", "os")):  # sys._getframe, os._exit
                found.append((node.lineno, f"{_dotted(base) or '<expr>'}.{node.attr}"))
    return [f"line {line}: {use}" for line, use in sorted(found)]


@pytest.mark.parametrize("folder", [*CODE_FOLDERS, "examples"])
def test_no_private_attribute_of_another_modules_object(folder):
    found = {module: uses for module, path in _modules(folder).items() if (uses := foreign_private_uses(path))}
    assert not found, "private attributes of objects from other modules (give them a public name):\n" + "\n".join(
        f"{module}: {use}" for module, uses in found.items() for use in uses)


def test_foreign_private_detection(tmp_path):
    source = ("class A:\n    def __init__(self):\n        self._own = 1\n    def f(self, other):\n"
              "        return self._own, other._own, other._theirs, self._inherited\n"
              "from evaluation.evaluate import _tpc_method\n"
              "def g(compressor):\n    return compressor._splitter(None), sys._getframe(1)\n")
    path = tmp_path / "client.py"
    path.write_text(source, encoding="utf-8")
    assert foreign_private_uses(path) == ["line 5: other._theirs",
                                          "line 5: self._inherited (inherited from another module)",
                                          "line 6: from evaluation.evaluate import _tpc_method",
                                          "line 8: compressor._splitter"]


def test_the_tree_shows_the_three_concerns():
    """The algorithm, the loading of models and the corpus job each have their own package."""
    for package in ("engine", "loading", "corpus", "segmentation", "cache"):
        assert (ROOT / PACKAGE / package / "__init__.py").is_file(), package
    assert not [path.name for path in (ROOT / PACKAGE).glob("*.py")
                if path.stem not in ("__init__", "__main__", "version", "compressor", "cli", "config", "lazy")]


def _path_literals(path: Path) -> list[tuple[int, str]]:
    """String constants of ``path`` outside docstrings (a docstring or a help text may name the default)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("folder", ["synthesis", "data_access", "evaluation", "benchmarks", "training"])
def test_data_and_dated_paths_come_from_one_place(folder):
    """The data root (``../shared/data``, ``$TPC_DATA``) and the held-out ids' dated path are written once, in
    ``data_access/paths.py``; every other module asks it (research scripts live in ``experiments/``)."""
    import re

    home = ROOT / "data_access" / "paths.py"
    pattern = re.compile(r"^\.\./shared|^shared$|(^|/)results/20\d\d-\d\d-\d\d|^20\d\d-\d\d-\d\d$")
    found = [f"{path.relative_to(ROOT)} line {line}: {value!r}" for path in sorted((ROOT / folder).rglob("*.py"))
             if path != home and "results" not in path.relative_to(ROOT).parts
             for line, value in _path_literals(path) if pattern.search(value)]
    assert not found, "hard-coded data or dated paths (use data_access.paths):\n" + "\n".join(found)
    assert not [path for path in (ROOT / folder).rglob("*.py") if "results" in path.relative_to(ROOT).parts], \
        f"scripts under {folder}/**/results/ (move them to experiments/)"


def _public_names(folder: str) -> set[str]:
    """The names in the ``__all__`` of every module of ``folder``."""
    names: set[str] = set()
    for path in _modules(folder).values():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                names.update(ast.literal_eval(node.value))  # type: ignore[attr-defined]
    return names


DATA_NAMES = frozenset(_public_names("data_access"))
"""What ``data_access`` offers (the data root, the loaders, the token counter): training reads it there."""


def data_names_through(path: Path, folder: str) -> list[str]:
    """The data names a module imports from ``folder`` (directly or as a re-export), each as ``line N: ...``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == folder:
            names = sorted(alias.name for alias in node.names if alias.name in DATA_NAMES)
            found += [f"line {node.lineno}: from {node.module} import {name}" for name in names]
    return found


def _folder_edges(graph: dict[str, dict[str, int]], source: str, target: str) -> list[str]:
    """Every import of a ``target`` folder's module by a ``source`` folder's module, as ``a -> b (line N)``."""
    return [f"{module} -> {imported} (line {line})" for module, edges in sorted(graph.items())
            if module.split(".")[0] == source for imported, line in sorted(edges.items())
            if imported.split(".")[0] == target]


def test_training_and_the_benchmarks_do_not_import_each_other():
    """Both use the evaluation protocol (``evaluation``) and read data through ``data_access``: neither folder
    imports the other, and the protocol and the data access import neither of them."""
    found = [*_folder_edges(CODE_GRAPH, "training", "benchmarks"), *_folder_edges(CODE_GRAPH, "benchmarks", "training")]
    assert not found, "training and benchmarks import each other (move what both need into evaluation/):\n" + \
        "\n".join(found)
    for lower in ("evaluation", "data_access"):
        assert not [*_folder_edges(CODE_GRAPH, lower, "training"), *_folder_edges(CODE_GRAPH, lower, "benchmarks")]


def test_the_folder_edges_are_found():
    graph = {"training.evaluate": {"evaluation.evaluate": 3, "benchmarks.run": 7}, "benchmarks.run": {"tpc_core": 1},
             "evaluation.budget": {"data_access.tokens": 2}}
    assert _folder_edges(graph, "training", "benchmarks") == ["training.evaluate -> benchmarks.run (line 7)"]
    assert _folder_edges(graph, "benchmarks", "training") == []


def test_training_takes_no_data_name_through_the_protocol():
    """Training reads data from ``data_access``, never a data name the protocol hands on."""
    assert {"data_file", "HELDOUT_IDS", "load_qa_dev", "minilm_token_counter"} <= DATA_NAMES
    found = [f"{path.relative_to(ROOT)} {hit}" for path in _modules("training").values()
             for hit in data_names_through(path, "evaluation")]
    assert not found, "training imports data through evaluation (import it from data_access):\n" + "\n".join(found)


def test_data_names_through_the_protocol_are_found(tmp_path):
    source = ("from evaluation.budget import budget_for, minilm_token_counter\n"
              "from evaluation.evaluate import compress_one\n"
              "def f():\n    from evaluation import budget\n    from data_access.paths import data_file\n")
    path = tmp_path / "module.py"
    path.write_text(source, encoding="utf-8")
    assert data_names_through(path, "evaluation") == [
        "line 1: from evaluation.budget import minilm_token_counter"]


# Files at the top of tests/: fixtures and helpers shared by several folders; every test sits in a folder that mirrors
# the code it tests (tests/core/<package>/ for tpc_core, tests/integrations/, tests/benchmarks/, ...).
TOP_LEVEL_TEST_HELPERS = {"conftest.py", "checkpoint_helpers.py", "conversation_helpers.py", "golden_cases.py",
                          "notice_helpers.py", "subprocess_helpers.py"}


def test_tests_mirror_the_packages():
    tests = ROOT / "tests"
    top = sorted(path.name for path in tests.glob("*.py"))
    assert set(top) <= TOP_LEVEL_TEST_HELPERS, (
        f"files at the top of tests/ that are not shared helpers: {sorted(set(top) - TOP_LEVEL_TEST_HELPERS)} "
        "(move a test beside the tests of the package it covers)")
    folders = {path.name for path in tests.iterdir() if path.is_dir() and not path.name.startswith((".", "__"))}
    # tests/docs holds docs/ (its tree, signatures and config excerpt) against the code
    assert folders <= {"architecture", "core", "data", "docs", *CODE_FOLDERS[1:]} | {"integrations"}, folders
    core = {path.name for path in (tests / "core").iterdir() if path.is_dir() and not path.name.startswith("__")}
    packages = {path.parent.name for path in (ROOT / PACKAGE).glob("*/__init__.py")}
    assert core <= packages, f"tests/core/ folders that mirror no tpc_core package: {sorted(core - packages)}"
