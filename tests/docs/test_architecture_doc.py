"""docs/ARCHITECTURE.md is held against the code: its sections, the modules it names, its extension tables, its
contract signatures and its config excerpt.

Each test reads the document as text and the code as it is (modules by path, signatures with ``inspect``, the
shipped ``tpc_config.json`` as JSON), so a renamed module, a lost parameter or a changed threshold fails here
instead of drifting in the docs.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SHIPPED_CONFIG = ROOT / "tpc_core" / "checkpoints" / "tpc-mini" / "tpc_config.json"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
HEADING = re.compile(r"^#{2,4} (.*)$", re.MULTILINE)


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """Every fenced block as (the heading above it, its language, its body)."""
    headings = [(match.start(), match.group(1)) for match in HEADING.finditer(text)]
    blocks = []
    for match in FENCE.finditer(text):
        above = [title for start, title in headings if start < match.start()]
        blocks.append((above[-1] if above else "", match.group(1), match.group(2)))
    return blocks


DOC_TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = _blocks(DOC_TEXT)


# ------------------------------------------------------------------------------------------------ structure
SECTIONS = ("The layers", "The route of one prompt", "Contracts that other parts rely on", "Extension points")
MODULE_PATH = re.compile(r"`((?:[\w]+/)+[\w]+\.py)`")


def test_the_page_has_its_sections():
    headings = {match.group(1) for match in re.finditer(r"^## (.*)$", DOC_TEXT, re.MULTILINE)}
    assert set(SECTIONS) <= headings, f"missing sections: {set(SECTIONS) - headings}"


def _resolve(written: str) -> list[str]:
    """The files of the code a path written in the page names (``scoring/cse.py`` names
    ``tpc_core/engine/scoring/cse.py``): every tracked module whose path ends with it."""
    return [path.relative_to(ROOT).as_posix() for top in ("tpc_core", "tpc_integrations", "tests")
            for path in (ROOT / top).rglob("*.py") if path.relative_to(ROOT).as_posix().endswith(written)]


def test_every_module_the_page_names_exists():
    named = set(MODULE_PATH.findall(DOC_TEXT))
    assert len(named) >= 20, sorted(named)
    missing = sorted(written for written in named if not _resolve(written))
    assert not missing, f"modules docs/ARCHITECTURE.md names that do not exist: {missing}"


def test_each_extension_table_is_where_the_page_says():
    section = DOC_TEXT.split("## Extension points", 1)[1]
    tables = re.findall(r"^- `([A-Z_]+)` \(`(tpc_core/[\w/]+)\.py`", section, re.MULTILINE)
    assert {name for name, _ in tables} >= {"SCORERS", "CACHE_KINDS", "CHAT_TEMPLATES", "HEADS"}
    for name, path in tables:
        assert hasattr(importlib.import_module(path.replace("/", ".")), name), (path, name)


# ------------------------------------------------------------------------------------------------ signatures
def _parameter_names(text: str) -> list[str]:
    """The parameter names of a written signature's argument list (``self``, ``*`` and ``/`` left out)."""
    names, depth, current = [], 0, ""
    for char in text + ",":
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            name = re.match(r"\s*\**(\w*)", current).group(1)
            if name and name != "self":
                names.append(name)
            current = ""
        else:
            current += char
    return names


def _balanced(rest: str) -> str:
    """The text up to the parenthesis that closes the one just opened before ``rest``."""
    depth = 1
    for index, char in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return rest[:index]
    raise AssertionError(f"an unclosed signature: {rest!r}")


def _signature_lines(body: str) -> list[tuple[str | None, str, list[str]]]:
    """(class or None, function, parameter names) for each ``def`` written in a block."""
    found, owner = [], None
    for line in body.splitlines():
        klass = re.match(r"^class (\w+)", line)
        if klass:
            owner = klass.group(1)
            continue
        definition = re.match(r"^(\s*)def (\w+)\(", line)
        if definition is None:
            continue
        indented = bool(definition.group(1))
        found.append((owner if indented else None, definition.group(2),
                      _parameter_names(_balanced(line[definition.end():]))))
    return found


def _module_of(heading: str) -> Any:
    """The module a contract heading names: ``### Scoring (`tpc_core/engine/scoring/scorers.py`)``."""
    paths = re.findall(r"`(tpc_core/[\w/]+(?:\.py)?)/?`", heading)
    modules = []
    for path in paths:
        dotted = path.removesuffix(".py").strip("/").replace("/", ".")
        modules.append(importlib.import_module(dotted))
    return modules


# Signatures are written as ```pyi blocks: stubs to read, not examples to run (tests/docs/test_doc_examples.py runs
# the ```python ones).
CONTRACTS = [(heading, body) for heading, language, body in BLOCKS
             if language == "pyi" and "tpc_core/" in heading and "def " in body]


def test_the_contract_blocks_are_found():
    assert len(CONTRACTS) >= 3


@pytest.mark.parametrize("heading,body", CONTRACTS, ids=[heading.split(" (")[0] for heading, _ in CONTRACTS])
def test_each_written_signature_is_the_code_s(heading, body):
    modules = _module_of(heading)
    assert modules, f"{heading!r} names no module"
    for owner, name, written in _signature_lines(body):
        target = None
        for module in modules:
            holder = getattr(module, owner) if owner and hasattr(module, owner) else module
            target = getattr(holder, name, None) if not owner or hasattr(module, owner) else None
            if target is not None:
                break
        assert target is not None, f"{heading}: {owner + '.' if owner else ''}{name} is not in {modules}"
        actual = [parameter for parameter in inspect.signature(target).parameters if parameter != "self"]
        assert written == actual, f"{heading}: {name} is written ({', '.join(written)}), the code has " \
                                  f"({', '.join(actual)})"


def test_the_signature_reader_reads_parameters():
    body = ("class A(Protocol):\n    def f(self, x: dict[str, int], *, y=None) -> int  # (n, d)\n"
            "def g(a, b=(1, 2), **rest)\n")
    assert _signature_lines(body) == [("A", "f", ["x", "y"]), (None, "g", ["a", "b", "rest"])]


# ------------------------------------------------------------------------------------------------ config excerpt
def _leaves(value: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for key, inner in value.items() for leaf in _leaves(inner, (*path, key))]
    return [(path, value)]


def test_the_config_excerpt_is_the_shipped_config():
    excerpt = json.loads(next(body for heading, language, body in BLOCKS if language == "json"
                              and heading.startswith("Checkpoint format")))
    shipped = json.loads(SHIPPED_CONFIG.read_text(encoding="utf-8"))
    for path, value in _leaves({key: inner for key, inner in excerpt.items() if key != "extra"}):
        actual: Any = shipped
        for key in path:
            assert isinstance(actual, dict) and key in actual, f"the excerpt's {'.'.join(path)} is not in the config"
            actual = actual[key]
        assert actual == value, f"the excerpt says {'.'.join(path)} = {value!r}; the shipped config has {actual!r}"
