"""The layer order of the tree, read from the source (see tests/architecture/test_architecture.py for the walk).

Every import counts, type-only ones under ``if TYPE_CHECKING:`` included. Three packages declare their layers,
lowest first; a module may import its own layer and any layer below it, never one above, and never a sibling of
its own layer (except in the bottom layer of ``tpc_core``: ``config`` and ``version``, and of the adapters):

* ``tpc_core`` (:data:`LAYERS`): ``__main__`` → ``cli`` → the package's lazy ``__init__`` → ``corpus`` →
  ``compressor`` → ``conversation`` → ``loading`` / ``cache`` (which know nothing of each other) → ``engine`` →
  ``options`` (the compress options, declared once) → ``segmentation`` → ``diagnostics``; ``config``, ``version``
  and ``lazy`` (the packages' lazy public names) sit below them all;
* inside ``tpc_core.engine`` (:data:`ENGINE_LAYERS`): its ``__init__`` → ``pipeline`` → ``output`` → ``task`` →
  ``scoring`` → ``reading`` → ``selection`` → ``options`` → ``values`` → ``tokens`` → ``named_tokenizers`` →
  ``fast_encoder``;
* ``tpc_integrations`` (:data:`INTEGRATION_LAYERS`): its ``__init__`` → the adapters → the message and memory
  adapters, the chain-input adapter and the agents' context → ``_messages`` / ``_ingest`` → ``_common`` →
  ``_engine_options`` → ``_checks``, ``_peer_names``, ``_failsafe``, ``_outcomes``.

Further rules: the engine imports nothing of ``cache``, ``loading`` or ``conversation``, not even for a type (it
receives a resolved ``cache=`` as a store and calls no hook up into them); no folder of the engine holds more than 10
modules (a folder that grows past that is split into
sub-packages by concern: the count of modules, not of lines); the cache has no copy of the scorer's code: it never
imports the scoring or task packages, never tokenizes and never calls an encoder; it reads through the engine's
per-document step.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.architecture.test_architecture import CODE_GRAPH, GRAPH, PACKAGE_MODULES, ROOT

Layers = tuple[tuple[str, ...], ...]

# Lowest first. A module may import its own layer and any layer below it.
LAYERS: Layers = (
    ("tpc_core.version", "tpc_core.config", "tpc_core.lazy"),
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
# Inside the engine: the values every stage reads at the bottom, then the stages in the order they depend on each
# other (the scorers read a prompt through ``reading``; ``reading`` resolves the budget), the batch loop on top.
ENGINE_LAYERS: Layers = (
    ("tpc_core.engine.cancellation",),  # what every stage that runs a model checks
    ("tpc_core.engine.fast_encoder",),
    ("tpc_core.engine.named_tokenizers",),
    ("tpc_core.engine.tokens",),
    ("tpc_core.engine.values", "tpc_core.engine.options"),
    ("tpc_core.engine.selection",),
    ("tpc_core.engine.reading",),
    ("tpc_core.engine.scoring",),
    ("tpc_core.engine.task",),
    ("tpc_core.engine.output",),
    ("tpc_core.engine.pipeline",),
    ("tpc_core.engine",),  # the engine's own __init__: its public names
)
INTEGRATION_LAYERS: Layers = (
    ("tpc_integrations._checks", "tpc_integrations._peer_names", "tpc_integrations._failsafe",
     "tpc_integrations._outcomes"),
    ("tpc_integrations._engine_options",),
    ("tpc_integrations._common",),
    ("tpc_integrations._messages", "tpc_integrations._ingest"),
    ("tpc_integrations._agent_context", "tpc_integrations.langchain_messages", "tpc_integrations.llama_index_memory",
     "tpc_integrations.langchain_inputs"),
    ("tpc_integrations.langchain", "tpc_integrations.llama_index", "tpc_integrations.langchain_agents",
     "tpc_integrations.llama_index_agents", "tpc_integrations.embeddings"),
    ("tpc_integrations",),  # the package's own __init__
)
# Each package with a declared order: the layers of the modules inside it.
SCOPES: dict[str, Layers] = {"tpc_core": LAYERS, "tpc_core.engine": ENGINE_LAYERS,
                             "tpc_integrations": INTEGRATION_LAYERS}
ENGINE_FOLDER_MODULES = 10


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer_of(module: str, layers: Layers = LAYERS) -> tuple[int, str]:
    """The layer of a module in ``layers`` and the package (or top module) that puts it there.

    The scope is the layers' shortest member (``tpc_core``, ``tpc_core.engine``): it holds only that package's
    ``__init__``, not the modules inside it.
    """
    scope = min((member for members in layers for member in members), key=len)
    best: tuple[int, str] | None = None
    for rank, members in enumerate(layers):
        for member in members:
            inside = module == member or (member != scope and module.startswith(member + "."))
            if inside and (best is None or len(member) > len(best[1])):
                best = (rank, member)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it (or its package) to the layers of {scope}")
    return best


def upward_imports(graph: dict[str, dict[str, int]], scopes: dict[str, Layers] | None = None) -> list[str]:
    """Every import from a lower layer into a higher one, or between two packages of one layer (above the bottom
    one), in each scope that holds both ends of the import."""
    scopes = {"tpc_core": LAYERS} if scopes is None else scopes
    found = []
    for source, targets in sorted(graph.items()):
        for target, line in sorted(targets.items()):
            for scope, layers in scopes.items():
                if not (_inside(source, scope) and _inside(target, scope)):
                    continue
                (rank, home), (target_rank, target_home) = layer_of(source, layers), layer_of(target, layers)
                if target_rank > rank or (target_rank == rank and target_home != home and rank > 0):
                    found.append(f"{source} (line {line}) -> {target}")
                    break
    return found


def test_the_packages_are_layered():
    found = upward_imports(CODE_GRAPH, SCOPES)
    assert not found, "imports that point up or across a layer (move the shared part down):\n" + "\n".join(found)


def test_the_layer_check_finds_an_upward_import():
    graph = {"tpc_core.engine.pipeline": {"tpc_core.compressor": 3}, "tpc_core.cache.stores": {"tpc_core.loading.x": 9},
             "tpc_core.compressor": {"tpc_core.engine.pipeline": 4}}
    assert upward_imports(graph) == ["tpc_core.cache.stores (line 9) -> tpc_core.loading.x",
                                     "tpc_core.engine.pipeline (line 3) -> tpc_core.compressor"]


def test_the_layer_check_looks_inside_the_engine_and_the_adapters():
    graph = {"tpc_core.engine.values": {"tpc_core.engine.selection.budget": 21, "tpc_core.segmentation": 18},
             "tpc_core.engine.pipeline": {"tpc_core.engine.values": 5, "tpc_core.engine": 6},
             "tpc_core.engine.task.finder": {"tpc_core.engine.task.cues": 7, "tpc_core.engine.scoring.lead": 8},
             "tpc_integrations._outcomes": {"tpc_integrations._common": 13, "tpc_core.engine.values": 2},
             "tpc_integrations._checks": {"tpc_integrations._peer_names": 3}}
    assert upward_imports(graph, SCOPES) == ["tpc_core.engine.pipeline (line 6) -> tpc_core.engine",
                                             "tpc_core.engine.values (line 21) -> tpc_core.engine.selection.budget",
                                             "tpc_integrations._outcomes (line 13) -> tpc_integrations._common"]


ABOVE_THE_ENGINE = ("tpc_core.cache", "tpc_core.loading", "tpc_core.conversation")


def imports_above_the_engine(graph: dict[str, dict[str, int]]) -> list[str]:
    """Every import (type-only ones included) from the engine into the cache, the loading or the conversation."""
    return [f"{source} (line {line}) -> {target}" for source, targets in sorted(graph.items())
            if _inside(source, "tpc_core.engine") for target, line in sorted(targets.items())
            if any(_inside(target, package) for package in ABOVE_THE_ENGINE)]


def test_the_engine_imports_nothing_of_the_cache_the_loading_or_the_conversation():
    found = imports_above_the_engine(CODE_GRAPH)
    assert not found, "the engine reaches up (hand it what it needs instead):\n" + "\n".join(found)


def test_the_check_of_the_engine_finds_an_import_into_the_cache():
    graph = {"tpc_core.engine.pipeline": {"tpc_core.cache.documents": 12, "tpc_core.engine.reading": 3},
             "tpc_core.cache.documents": {"tpc_core.engine.reading": 4}}
    assert imports_above_the_engine(graph) == ["tpc_core.engine.pipeline (line 12) -> tpc_core.cache.documents"]


@pytest.mark.parametrize("scope", sorted(SCOPES))
def test_every_module_has_a_layer(scope):
    for module in CODE_GRAPH:
        if _inside(module, scope):
            layer_of(module, SCOPES[scope])


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
