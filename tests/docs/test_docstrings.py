"""Docstrings say what code is and does, not which issue made it or what it measured once; no code or test names an
issue.

An issue number or a measured figure in a docstring ages: the code moves on and the text stays. The history is in
git and the figures are in BENCHMARKS.md and the results they cite. Issue numbers are checked everywhere in the
code and the tests (comments, strings and names too); a test is named for the behaviour it checks.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ("tpc_core", "tpc_integrations")
# Every maintained folder and the tests: no line of their code or configs names an issue.
CODE_AND_TESTS = (*LIBRARY, "training", "synthesis", "evaluation", "benchmarks", "data_access", "tests", "examples")
CODE_SUFFIXES = {".py", ".yaml", ".yml", ".sh", ".toml"}
ISSUE = re.compile(r"\b[Ii]ssues?[ _-]?#?\d+|_issue\d+|(?<![\w/&])#\d{2,3}\b")


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
    assert ISSUE.search("the issue-35 head") and ISSUE.search("results/engine_overhead_issue37/")
    assert ISSUE.search("Issue 36, defect 9") and ISSUE.search("issues 12 and 13")
    assert not ISSUE.search("a color like #fff or a URL path/#12") and not ISSUE.search("no issue here")
    assert not ISSUE.search("&#39; an HTML entity") and not ISSUE.search("# 42 is a comment")


@pytest.mark.parametrize("top", LIBRARY)
def test_no_docstring_names_an_issue(top):
    found = [f"{path.relative_to(ROOT)}:{line}: {match.group()!r}"
             for path in sorted((ROOT / top).rglob("*.py")) for line, text in docstrings(path)
             for match in [ISSUE.search(text)] if match]
    assert not found, "docstrings that name an issue (say what the code is; the history is in git):\n" + \
        "\n".join(found)


def issue_lines(path: Path) -> list[str]:
    """``path:line: 'match'`` for every line of ``path`` that names an issue."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        found += [f"{path.relative_to(ROOT)}:{number}: {match.group()!r}" for match in ISSUE.finditer(line)]
    return found


@pytest.mark.parametrize("top", CODE_AND_TESTS)
def test_no_code_or_test_names_an_issue(top):
    itself = Path(__file__).resolve()
    found = [hit for path in sorted((ROOT / top).rglob("*"))
             if path.suffix in CODE_SUFFIXES and path.is_file() and path.resolve() != itself
             and "results" not in path.relative_to(ROOT).parts
             for hit in issue_lines(path)]
    assert not found, "code and tests that name an issue (say what the code does; the history is in git):\n" + \
        "\n".join(found)


def test_no_test_file_is_named_for_an_issue_or_a_defect():
    named = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests").rglob("test_*.py")
                   if re.search(r"issue|defect|bug|regression|item_?\d", path.stem))
    assert not named, f"test files named for their history, not the behaviour they check: {named}"
