"""The import structure of ``tpc_core``: layered (no import cycles) and private names kept private.

Read from the source with ``ast`` (nothing is imported), so every module is covered, whatever it is named,
including ones added later. Imports inside functions count (a lazy import is still a dependency); imports
under ``if TYPE_CHECKING:`` do not (they never run). ``from tpc_core import Name`` is resolved through the
package's lazy ``_EXPORTS`` table to the module that defines ``Name``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "tpc_core"
# Code outside tpc_core that must use only its public names (tests may reach inside; they test it).
CLIENTS = ("tpc_integrations", "benchmarks", "training", "examples")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(top: str) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((ROOT / top).rglob("*.py"))}


PACKAGE_MODULES = _modules(PACKAGE)


def _lazy_exports() -> dict[str, str]:
    """``tpc_core``'s ``_EXPORTS`` (public name -> defining module), read from ``__init__.py``."""
    tree = ast.parse((ROOT / PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


EXPORTS = _lazy_exports()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
                continue
            stack.append(child)


def _package_module(dotted: str) -> str | None:
    """The longest ``tpc_core`` module that ``dotted`` names or lies in, or ``None`` outside the package."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in PACKAGE_MODULES:
            return candidate
    return None


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
        found: list[tuple[int, str]] = []
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        aliases: dict[str, str] = {}  # local name -> the tpc_core module (or package) it is bound to
        is_package = path.name == "__init__.py"
        nodes = list(_runtime_nodes(tree))
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _package_module(alias.name)
                    if target is None:
                        continue
                    self._edge(target, node.lineno)
                    if alias.asname:
                        aliases[alias.asname] = target
                    else:
                        aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(module, node, is_package)
                source_module = _package_module(source)
                if source_module is None:
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in PACKAGE_MODULES:  # from tpc_core import corpus_io
                        self._edge(submodule, node.lineno)
                        aliases[alias.asname or alias.name] = submodule
                        continue
                    if source == PACKAGE and alias.name in EXPORTS:  # from tpc_core import TPCCompressor
                        self._edge(EXPORTS[alias.name], node.lineno)
                        continue
                    self._edge(source_module, node.lineno)
                    if _is_private(alias.name) and source_module != module:
                        found.append((node.lineno, f"from {source} import {alias.name}"))
            elif isinstance(node, ast.Call) and _is_import_module(node):
                target = _package_module(node.args[0].value)
                if target is not None:
                    self._edge(target, node.lineno)
        for node in nodes:  # tpc_core.x._name / m._name through a name bound to another tpc_core module
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                dotted = _dotted(node.value)
                if dotted is None or dotted.split(".")[0] not in aliases:
                    continue
                head, *rest = dotted.split(".")
                target = _package_module(".".join([aliases[head], *rest]))
                if target is not None and target != module and ".".join([aliases[head], *rest]) == target:
                    found.append((node.lineno, f"{dotted}.{node.attr}"))
        self.private = [f"line {line}: {use}" for line, use in sorted(found)]

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
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
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
    assert {"tpc_core.compressor", "tpc_core.loading", "tpc_core.corpus"} <= set(GRAPH)
    assert "tpc_core.compressor" in GRAPH["tpc_core.loading"] or "tpc_core.loading" in GRAPH["tpc_core.compressor"]
    assert "tpc_core.corpus_ray" in GRAPH["tpc_core.corpus"]  # imported inside a function only


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
    source = ("import tpc_core.loading\nimport tpc_core.offline as offline\nfrom tpc_core import segmentation\n"
              "from tpc_core.loading import _detect_architecture, resolve_base\n"
              "def f():\n    tpc_core.loading._from_pretrained\n    offline._package_dir\n"
              "    segmentation._split\n    offline.__name__\n    segmentation.public._private_attr\n")
    path = tmp_path / "client.py"
    path.write_text(source, encoding="utf-8")
    uses = _Imports("client", path).private
    assert uses == ["line 4: from tpc_core.loading import _detect_architecture",
                    "line 6: tpc_core.loading._from_pretrained", "line 7: offline._package_dir",
                    "line 8: segmentation._split"]
