"""Helpers shared by the adapter tests (a uniquely named module: tests/ has no packages)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def _load_example_data() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_example_data", EXAMPLES / "_example_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


example_data = _load_example_data()


def first_sentences(text: str, count: int) -> str:
    """The first ``count`` sentences of a plain prose paragraph."""
    return " ".join(re.split(r"(?<=\.) ", text)[:count])


def assert_verbatim_in_order(kept_sentences: list[str], original: str, compressed: str) -> None:
    """Each kept sentence occurs in ``original`` after the previous one, and ``compressed`` is exactly those
    sentences in that order, separated by whitespace only."""
    assert kept_sentences, "no sentence kept"
    position = 0
    for sentence in kept_sentences:
        found = original.find(sentence, position)
        assert found >= 0, f"{sentence!r} is not a verbatim sentence of the original after offset {position}"
        position = found + len(sentence)
    assert " ".join(compressed.split()) == " ".join(" ".join(kept_sentences).split())
