"""Every ```python block of the README and of docs/*.md runs as written.

The blocks of one page run in order in one namespace, as a reader types them: a later block may use what an earlier
one built. A block that cannot run here (it needs an API key, a network, a GPU or a running server) is marked in the
Markdown by an HTML comment on the line right above its fence, ``<!-- not-run: why -->``; every other block must run.
``TPCCompressor.from_pretrained("tpc-mini")`` returns the session's one loaded tpc-mini (the real model, loaded once
for every page), so the pages do not each pay for a load.
"""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!-- not-run: (?P<why>[^>]*\S)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced python block: where it is, its code, and why it is not run (``None``: it is run)."""

    page: Path
    line: int
    code: str
    not_run: str | None


def blocks(page: Path) -> list[Block]:
    """The python blocks of ``page`` in order, each with the not-run reason written right above its fence."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marked = NOT_RUN.search(before)
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group(1),
                           marked.group("why") if marked else None))
    return found


def test_the_block_reader_reads_fences_and_marks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# t\n\n```python\nx = 1\n```\n\n<!-- not-run: needs an API key -->\n```python\ncall()\n```\n"
                    "```bash\nls\n```\n", encoding="utf-8")
    assert [(block.line, block.code, block.not_run) for block in blocks(page)] == [
        (3, "x = 1\n", None), (8, "call()\n", "needs an API key")]


@pytest.fixture
def shared_tpc_mini(tpc_mini, monkeypatch):
    """``TPCCompressor.from_pretrained("tpc-mini")``, as the pages call it, gives the session's loaded tpc-mini."""
    from tpc_core import TPCCompressor

    load = TPCCompressor.from_pretrained

    def from_pretrained(name_or_path, *args, **kwargs):
        if name_or_path == "tpc-mini" and not args and not kwargs:
            return tpc_mini
        return load(name_or_path, *args, **kwargs)

    monkeypatch.setattr(TPCCompressor, "from_pretrained", staticmethod(from_pretrained))
    return tpc_mini


def _library_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [f"{w.filename}:{w.lineno}: {w.message}" for w in caught
            if type(w.message).__module__.startswith(("tpc_core", "tpc_integrations"))
            or (w.category is UserWarning and "tpc" in str(w.message).lower())]


# docs/ARCHITECTURE.md writes signatures as ```pyi stubs: it has no block to run.
RUNNABLE_PAGES = [page for page in PAGES if any(block.not_run is None for block in blocks(page))]


def test_every_page_but_the_architecture_has_examples_to_run():
    assert {page.name for page in PAGES} - {page.name for page in RUNNABLE_PAGES} == {"ARCHITECTURE.md"}


@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=[page.relative_to(ROOT).as_posix() for page in RUNNABLE_PAGES])
def test_every_unmarked_block_of_the_page_runs(page, shared_tpc_mini, tmp_path, monkeypatch):
    runnable = [block for block in blocks(page) if block.not_run is None]
    monkeypatch.chdir(tmp_path)  # a block that writes a file writes it here
    namespace: dict[str, object] = {"__name__": "__doc_example__"}
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("always")
        for block in runnable:
            try:
                exec(compile(block.code, f"{page.relative_to(ROOT)}:{block.line}", "exec"), namespace)
            except Exception as error:
                raise AssertionError(f"{page.relative_to(ROOT)}, the block at line {block.line} fails: "
                                     f"{type(error).__name__}: {error}. Fix it, or mark it with "
                                     "<!-- not-run: why --> on the line above its fence.") from error
    assert not _library_warnings(caught), f"{page.name}'s examples raise library warnings: {_library_warnings(caught)}"


def test_blocks_not_run_are_few_and_each_says_why():
    every = [block for page in PAGES for block in blocks(page)]
    marked = [block for block in every if block.not_run is not None]
    assert every, "no python block found in the docs"
    assert all(len(block.not_run or "") >= 10 for block in marked), [block.not_run for block in marked]
    assert len(marked) * 4 <= len(every), (
        f"{len(marked)} of {len(every)} python blocks are marked not-run: "
        + "; ".join(f"{b.page.name}:{b.line} ({b.not_run})" for b in marked))


def test_every_not_run_mark_stands_above_a_python_block():
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if "<!-- not-run:" in line:
                assert NOT_RUN.search(line), f"{page.name}:{number + 1}: write it as <!-- not-run: why -->"
                assert number + 1 < len(lines) and lines[number + 1] == "```python", \
                    f"{page.name}:{number + 1}: a not-run mark must stand right above a ```python fence"
