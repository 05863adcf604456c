"""Code is split by concern, not packed to fit: no tuple-packed assignment of independent values.

``a, b = 1, 2`` and ``started, count = time.perf_counter(), 0`` put two statements on one line. They are written
as two assignments. Kept: unpacking what a call returns (``a, b = f()``), and the swaps and shifts where a later
value reads what an earlier target is given (``a, b = b, a``; ``head, lead = None, head``), which one line says
exactly. Complexity and line length are ruff's rules (``[tool.ruff.lint]`` in pyproject.toml).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE_FOLDERS = ("tpc_core", "tpc_integrations", "training", "benchmarks", "synthesis", "data_access")

def _reads(value: ast.expr, target: ast.expr) -> bool:
    """Whether ``value`` reads ``target`` (a name, or the same attribute or item)."""
    if isinstance(target, ast.Name):
        return any(isinstance(node, ast.Name) and node.id == target.id for node in ast.walk(value))
    text = ast.unparse(target)
    return any(isinstance(node, (ast.Attribute, ast.Subscript)) and ast.unparse(node) == text
               for node in ast.walk(value))


def packed_assignments(source: str) -> list[int]:
    """Line numbers of the tuple-packed assignments of independent values in ``source``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        targets = node.targets[0]
        value = node.value
        if not (isinstance(targets, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))):
            continue
        if len(targets.elts) != len(value.elts) or any(isinstance(t, ast.Starred) for t in targets.elts):
            continue
        if any(_reads(item, target) for i, item in enumerate(value.elts) for target in targets.elts[:i]):
            continue  # a swap or a shift: written one by one, it would read the new value
        lines.append(node.lineno)
    return sorted(lines)


def _code_files() -> dict[str, list[int]]:
    found = {}
    for folder in CODE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found[path.relative_to(ROOT).as_posix()] = packed_assignments(path.read_text(encoding="utf-8"))
    return found


def test_the_checker_finds_packing_and_keeps_swaps_and_unpacking() -> None:
    source = ("a, b = 1, 2\n"
              "started, count = clock(), 0\n"
              "x.y, z = [], {}\n"
              "(p, q), r = pair, 3\n"
              "a, b = b, a\n"
              "head, lead = None, head\n"
              "x.y, w = 0, x.y\n"
              "low, high = max(0, low), min(high, 9)\n"
              "a, b = divmod(7, 2)\n"
              "a = b = 0\n"
              "first, *rest = 1, 2, 3\n")
    assert packed_assignments(source) == [1, 2, 3, 4, 8]


def test_no_packed_assignments_in_the_code_folders() -> None:
    packed = {path: lines for path, lines in _code_files().items() if lines}
    assert not packed, f"write one assignment per line (tuple-packed assignments at {packed})"

