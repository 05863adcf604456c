"""Docstrings say what code is and does, not which issue made it or what it measured once.

An issue number or a measured figure in a docstring ages: the code moves on and the text stays. The history is in
git and the figures are in BENCHMARKS.md and the results they cite.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ("tpc_core", "tpc_integrations")
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+|(?<![\w/])#\d{2,3}\b")


def docstrings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of the module's, each class's and each function's docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                found.append((getattr(node, "lineno", 1), text))
    return found


def test_the_issue_pattern():
    assert ISSUE.search("the structural finder (issue 35)") and ISSUE.search("see #42.")
    assert not ISSUE.search("a color like #fff or a URL path/#12") and not ISSUE.search("no issue here")


@pytest.mark.parametrize("top", LIBRARY)
def test_no_docstring_names_an_issue(top):
    found = [f"{path.relative_to(ROOT)}:{line}: {match.group()!r}"
             for path in sorted((ROOT / top).rglob("*.py")) for line, text in docstrings(path)
             for match in [ISSUE.search(text)] if match]
    assert not found, "docstrings that name an issue (say what the code is; the history is in git):\n" + \
        "\n".join(found)
