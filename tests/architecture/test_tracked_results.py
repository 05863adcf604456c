"""Result files are not tracked, except those the docs, configs and code name.

``.gitignore`` ignores every ``results/`` folder: a run writes there. What stays in git is what a reader is sent to:
a file whose path a doc, a config or a module names (``benchmarks/results/index/index.md``, the held-out ids a
checkpoint's config names, ``training/results/2026-11-23/validation_ids.json``), and the summaries (``*.md``) of a
results folder a doc names as a whole (``benchmarks/results/request_kept/``: its ``README.md``; a folder with no
summary of its own: those of its sub-folders). A path may be written from the repository's root or from its
``results/`` folder on, with ``*`` and ``{a,b}`` as a shell writes them. A new result a doc cites is added with
``git add -f``.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from functools import cache
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Where a citation can be: docs, configs and code (a results folder's own files cite nothing: they would vouch for
# each other).
CITING_SUFFIXES = {".md", ".py", ".json", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".sh", ""}
CITATION = re.compile(r"[\w./*{},-]*results/[\w./*{},-]*")


def in_results(path: str) -> bool:
    return "results" in PurePosixPath(path).parts[:-1]


@cache
def tracked_files() -> tuple[str, ...]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ()
    return tuple(name for name in listed.decode("utf-8").split("\0") if name)


def _expand(pattern: str) -> list[str]:
    """``a.{md,json}`` -> ``a.md``, ``a.json`` (as a shell expands braces)."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    return [expanded for choice in match.group(1).split(",")
            for expanded in _expand(pattern[:match.start()] + choice + pattern[match.end():])]


def citations(text: str) -> set[str]:
    """The results paths ``text`` names, braces expanded, trailing punctuation and slashes off."""
    found = set()
    for raw in CITATION.findall(text):
        for path in _expand(raw):
            path = path.rstrip(".,/")
            if path.startswith("/"):
                continue  # an absolute path: a run's output elsewhere, not a file of this repository
            if "results/" in path and not path.endswith("results"):
                found.add(path)
    return found


def _matches(cited: str, path: str) -> bool:
    """``path`` is what ``cited`` names: written from the repository's root, or from its ``results/`` folder on."""
    if cited.startswith("results/"):
        parts = PurePosixPath(path).parts
        path = "/".join(parts[parts.index("results"):]) if "results" in parts else path
    return fnmatch.fnmatchcase(path, cited)


def cited_results(files: tuple[str, ...], texts: dict[str, str]) -> set[str]:
    """The tracked results files the ``texts`` name, directly or as the summaries of a folder they name."""
    results = [PurePosixPath(path) for path in files if in_results(path)]
    kept: set[str] = set()
    for name in set().union(*map(citations, texts.values())):
        named = {str(path) for path in results if _matches(name, str(path))}
        folders = {folder for path in results for folder in path.parents if _matches(name, str(folder))}
        kept |= named
        for folder in folders:
            summaries = [path for path in results if path.suffix == ".md" and path.parent == folder]
            kept |= {str(path) for path in summaries or
                     [path for path in results if path.suffix == ".md" and path.parent.parent == folder]}
    return kept


def citing_texts(files: tuple[str, ...]) -> dict[str, str]:
    """The text of every tracked doc, config and module outside results folders (this test's examples aside)."""
    texts = {}
    itself = Path(__file__).resolve().relative_to(ROOT).as_posix()
    for path in files:
        if path == itself or in_results(path) or PurePosixPath(path).suffix not in CITING_SUFFIXES:
            continue
        if not (ROOT / path).is_file():
            continue
        try:
            texts[path] = (ROOT / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return texts


def test_every_tracked_result_is_cited():
    files = tracked_files()
    if not files:
        pytest.skip("not a git checkout")
    results = {path for path in files if in_results(path)}
    uncited = sorted(results - cited_results(files, citing_texts(files)))
    assert not uncited, ("tracked result files no doc, config or module names (cite them, or `git rm --cached` "
                         "them: they stay on disk):\n" + "\n".join(uncited))


def test_the_citation_rule():
    files = ("benchmarks/results/index/index.md", "benchmarks/results/index/index.json",
             "benchmarks/results/dev.md", "benchmarks/results/dev.json", "benchmarks/results/dev_old.json",
             "benchmarks/results/summ/rate0.1/summ.md", "benchmarks/results/summ/rate0.1/summ.json",
             "training/results/2026-11-23/validation_ids.json", "training/results/2026-11-23/probe.log",
             "benchmarks/results/kept/README.md", "benchmarks/results/kept/bare/report.md")
    texts = {"README.md": "See `benchmarks/results/dev.{md,json}` and results/index/index.md.",
             "BENCHMARKS.md": "Summaries: `benchmarks/results/summ/`, `benchmarks/results/kept/`; "
                              "not /work/bench/results/x.",
             "config.json": '{"ids": "training/results/2026-11-23/validation_ids.json"}'}
    assert cited_results(files, texts) == {
        "benchmarks/results/dev.md", "benchmarks/results/dev.json", "benchmarks/results/index/index.md",
        "benchmarks/results/summ/rate0.1/summ.md", "training/results/2026-11-23/validation_ids.json",
        "benchmarks/results/kept/README.md"}
