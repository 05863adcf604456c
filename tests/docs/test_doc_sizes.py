"""The docs stay short enough to read: page lengths, line widths, where the README puts its first adapter example,
the README's test command as CI runs it, and BENCHMARKS.md as its generator writes it.

Run records under a ``results/`` folder are written by the runs themselves (tables as wide as their columns) and are
not pages; model cards (``tpc_core/checkpoints/**/README.md``) have no length limit but keep the line width.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 120
LIMITS = {"README.md": 250, "BENCHMARKS.md": 300, "docs/ARCHITECTURE.md": 250}
OTHER_PAGES = 400


def markdown_files() -> list[str]:
    """Every tracked Markdown file (every one on disk outside hidden folders when git is not there)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "*.md"], cwd=ROOT, capture_output=True, check=True).stdout
        names = [name for name in listed.decode("utf-8").split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if not names:
        names = [path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.md")
                 if not any(part.startswith(".") for part in path.relative_to(ROOT).parts)]
    return sorted(name for name in names if (ROOT / name).is_file())


def is_run_record(name: str) -> bool:
    return "results" in PurePosixPath(name).parts[:-1]


def is_model_card(name: str) -> bool:
    return name.startswith("tpc_core/checkpoints/") and name.endswith("README.md")


PAGES = [name for name in markdown_files() if not is_run_record(name)]


def lines_of(name: str) -> list[str]:
    return (ROOT / name).read_text(encoding="utf-8").splitlines()


def test_the_pages_are_found():
    assert {"README.md", "BENCHMARKS.md", "docs/ARCHITECTURE.md"} <= set(PAGES)
    assert len([name for name in PAGES if name.startswith("docs/")]) >= 6


@pytest.mark.parametrize("name", PAGES)
def test_no_line_is_wider_than_the_formatter_s(name):
    wide = [f"{number}: {len(line)}" for number, line in enumerate(lines_of(name), 1) if len(line) > WIDTH]
    assert not wide, f"{name} has lines over {WIDTH} characters (line: width): {wide}"


@pytest.mark.parametrize("name", [name for name in PAGES if not is_model_card(name)])
def test_each_page_is_within_its_length(name):
    limit = LIMITS.get(name, OTHER_PAGES)
    assert len(lines_of(name)) <= limit, f"{name} has {len(lines_of(name))} lines; at most {limit}"


def test_the_readme_shows_an_adapter_within_its_first_80_lines():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = next(match for match in re.finditer(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
                 if "tpc_integrations" in match.group(1))
    assert text.count("\n", 0, first.start()) + 1 <= 80


def test_ci_runs_the_readme_s_test_command_verbatim():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [line for block in re.findall(r"^```bash\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
                for line in block.splitlines() if "pytest" in line]
    assert len(commands) == 1, commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[0] in ci, f"the README's test command is not a line of .ci/run: {commands[0]}"


def test_benchmarks_md_is_what_its_generator_writes():
    from benchmarks.write_benchmarks_md import write

    assert (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8") == write(), \
        "BENCHMARKS.md differs from its generator's output: run python -m benchmarks.write_benchmarks_md"


USER_PAGES = ["README.md", "BENCHMARKS.md", *(name for name in PAGES if name.startswith("docs/"))]
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+|(?<![\w/])#\d{2,3}\b")


@pytest.mark.parametrize("name", USER_PAGES)
def test_the_user_pages_say_what_is_not_how_it_was_built(name):
    found = [f"{number}: {match.group()}" for number, line in enumerate(lines_of(name), 1)
             for match in [ISSUE.search(line)] if match]
    assert not found, f"{name} names issues (the history goes to CHANGELOG.md or nowhere): {found}"
