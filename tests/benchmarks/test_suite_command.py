"""``python -m benchmarks SUITE [ARGS]``: one command line reaches every suite, and only suites."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from benchmarks.cli import SUITES, main, usage

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# Modules run as scripts that are not suites: the command itself and the timing worker ``run --suite speed`` starts.
NOT_SUITES = {"__main__", "cli", "timing"}


def _tree(name: str) -> ast.Module:
    return ast.parse((BENCHMARKS / f"{name}.py").read_text(encoding="utf-8"))


def _has_main(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == "main" and node.args.args for node in tree.body)


def _runs_as_script(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body)


def test_every_listed_suite_is_a_module_with_a_main_taking_its_arguments():
    missing = [name for name in SUITES if not (BENCHMARKS / f"{name}.py").is_file() or not _has_main(_tree(name))]
    assert not missing, f"suites without a benchmarks/<name>.py holding main(argv): {missing}"


def test_every_script_of_the_folder_is_a_listed_suite():
    scripts = {path.stem for path in BENCHMARKS.glob("*.py") if _runs_as_script(_tree(path.stem))} - NOT_SUITES
    assert scripts - set(SUITES) == set(), "benchmarks scripts the command does not reach (add them to SUITES)"


def test_no_suite_names_lists_every_suite(capsys):
    assert main([]) == 0
    listed = capsys.readouterr().out
    assert listed == usage()
    assert [line.split()[0] for line in listed.splitlines()[3:]] == list(SUITES)
    assert main(["--help"]) == 0 and capsys.readouterr().out == listed


def test_an_unknown_suite_is_refused_with_the_list(capsys):
    assert main(["no_such_suite", "--x"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("python -m benchmarks: unknown suite 'no_such_suite'") and "cli_start" in error


def test_a_suite_gets_the_rest_of_the_arguments(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["cli_start", "--help"])
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    assert help_text.startswith("usage: python -m benchmarks cli_start") and "--runs" in help_text
    with pytest.raises(SystemExit) as exit_info:
        main(["cli_start", "--runs", "not-a-number"])
    assert exit_info.value.code == 2
    assert "invalid int value: 'not-a-number'" in capsys.readouterr().err
