"""Issue 37's rules for the tree of ``tpc_core``, read from the source (see tests/test_architecture.py for the walk).

* the packages are layered, imports pointing down only: ``__main__`` → ``cli`` → the package's lazy ``__init__`` →
  ``corpus`` → ``compressor`` → ``conversation`` →
  ``loading`` / ``cache`` (which know nothing of each other) → ``engine`` → ``options`` → ``segmentation`` →
  ``diagnostics``;
  ``config`` and ``version`` sit below them all;
* the compressor is a facade (≤ 250 lines), and no folder of the engine holds more than 10 modules;
* the cache has no copy of the scorer's code: it never imports the scoring or task packages, never tokenizes and
  never calls an encoder; it reads through the engine's per-document step.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_architecture import GRAPH, PACKAGE_MODULES, ROOT

# Lowest first. A module may import its own layer and any layer below it.
LAYERS = (
    ("tpc_core.version", "tpc_core.config"),
    ("tpc_core.diagnostics",),
    ("tpc_core.segmentation",),
    ("tpc_core.options",),  # the compress options, declared once: the engine reads them, the segmentation types them
    ("tpc_core.engine",),
    ("tpc_core.loading", "tpc_core.cache"),
    ("tpc_core.conversation",),
    ("tpc_core.compressor",),
    ("tpc_core.corpus",),
    ("tpc_core",),  # the package's own __init__: its lazy public names
    ("tpc_core.cli",),
    ("tpc_core.__main__",),
)
COMPRESSOR_LINES = 250
ENGINE_FOLDER_MODULES = 10


def layer_of(module: str) -> tuple[int, str]:
    """The layer of a ``tpc_core`` module and the package (or top module) that puts it there."""
    best: tuple[int, str] | None = None
    for rank, members in enumerate(LAYERS):
        for member in members:
            inside = module == member or (member != "tpc_core" and module.startswith(member + "."))
            if inside and (best is None or len(member) > len(best[1])):
                best = (rank, member)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add its package to LAYERS")
    return best


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every import from a lower layer into a higher one, or between the two packages of one layer."""
    found = []
    for source, targets in sorted(graph.items()):
        rank, home = layer_of(source)
        for target, line in sorted(targets.items()):
            target_rank, target_home = layer_of(target)
            if target_rank > rank or (target_rank == rank and target_home != home and rank > 0):
                found.append(f"{source} (line {line}) -> {target}")
    return found


def test_the_packages_are_layered():
    found = upward_imports(GRAPH)
    assert not found, "imports that point up or across a layer (move the shared part down):\n" + "\n".join(found)


def test_the_layer_check_finds_an_upward_import():
    graph = {"tpc_core.engine.pipeline": {"tpc_core.compressor": 3}, "tpc_core.cache.stores": {"tpc_core.loading.x": 9},
             "tpc_core.compressor": {"tpc_core.engine.pipeline": 4}}
    assert upward_imports(graph) == ["tpc_core.cache.stores (line 9) -> tpc_core.loading.x",
                                     "tpc_core.engine.pipeline (line 3) -> tpc_core.compressor"]


def test_the_compressor_is_a_facade():
    lines = len((ROOT / "tpc_core" / "compressor.py").read_text(encoding="utf-8").splitlines())
    assert lines <= COMPRESSOR_LINES, f"compressor.py has {lines} lines: move the work into the engine"


@pytest.mark.parametrize("folder", sorted({path.parent for path in (ROOT / "tpc_core" / "engine").rglob("*.py")}),
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_no_engine_folder_holds_more_than_ten_modules(folder: Path):
    modules = sorted(path.name for path in folder.glob("*.py") if path.name != "__init__.py")
    assert len(modules) <= ENGINE_FOLDER_MODULES, f"{folder.relative_to(ROOT)} holds {len(modules)} modules: {modules}"


def test_the_cache_holds_no_copy_of_the_scorers_code():
    cache = {module: path for module, path in PACKAGE_MODULES.items() if module.startswith("tpc_core.cache")}
    assert cache
    for module, path in cache.items():
        reached = [target for target in GRAPH[module] if target.startswith(("tpc_core.engine.scoring.scorers",
                                                                            "tpc_core.engine.task.finder"))]
        assert not reached, f"{module} imports the scorer's code: {reached}"
        calls = {node.func.attr for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
        copied = calls & {"tokenize", "encode_contexts", "encode_sentences", "embed", "embed_documents", "forward"}
        assert not copied, f"{module} tokenizes or embeds itself ({sorted(copied)}): wrap the engine's step instead"
