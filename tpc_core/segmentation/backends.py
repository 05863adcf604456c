"""The sentence backends (step 4 of :mod:`tpc_core.segmentation`): each proposes sentence starts inside a unit.

``"nupunkt"`` (Punkt with nupunkt's pre-trained model, the default), ``"nltk"`` (Punkt with NLTK's ``punkt_tab``
data; the copy ``llama-index-core`` ships is used when no other is installed; nothing is ever downloaded),
``"regex"`` (dependency-free rules) and ``"line"`` (no backend: one sentence per non-blank line). A backend only
proposes cut positions; the splitter turns them into spans, so no backend can lose or misplace a character.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
from collections.abc import Callable, Iterator

from tpc_core.segmentation.layout import StartFinder

__all__ = ["SPLITTER_NAMES", "start_finder"]

SPLITTER_NAMES = ("nupunkt", "nltk", "regex", "line")


@functools.cache
def _nupunkt_finder() -> StartFinder:
    import nupunkt  # slow to import: only when the backend is used

    tokenizer = nupunkt.load("default")  # cached and shared by nupunkt: never mutate it
    return lambda unit: (start for start, _ in tokenizer.span_tokenize(unit))


def _bundled_nltk_data() -> str | None:
    """The ``punkt_tab`` copy that llama-index-core ships, found without importing llama_index.core."""
    try:
        spec = importlib.util.find_spec("llama_index.core")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        candidate = os.path.join(root, "_static", "nltk_cache")
        if os.path.isdir(os.path.join(candidate, "tokenizers", "punkt_tab")):
            return candidate
    return None


@functools.cache
def _nltk_finder() -> StartFinder:
    try:
        import nltk.data
        from nltk.tokenize.punkt import PunktTokenizer
    except ImportError as error:
        raise RuntimeError("The 'nltk' splitter needs nltk: pip install nltk (or use 'nupunkt').") from error
    try:
        tokenizer = PunktTokenizer("english")
    except LookupError:
        bundled = _bundled_nltk_data()
        if bundled is None:
            raise RuntimeError(
                "The 'nltk' splitter needs NLTK's punkt_tab data, which is not installed and is never "
                "downloaded here. Install it with `python -m nltk.downloader punkt_tab` (or point the "
                "NLTK_DATA environment variable at a copy), or use the default 'nupunkt' splitter."
            ) from None
        # nltk only reads data from directories on its search path, so the bundled copy is added to it.
        if bundled not in nltk.data.path:
            nltk.data.path.append(bundled)
        tokenizer = PunktTokenizer("english")
    return lambda unit: (start for start, _ in tokenizer.span_tokenize(unit))


_REGEX_CANDIDATE = re.compile(r"[.!?…]+[\"'”’)\]»]*(?=\s+[\"'“‘(\[]?[A-Z0-9À-ÖØ-Þ])")
_REGEX_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt ft vs no nos fig figs eq eqs al inc ltd co corp dept gen gov sen rep "
    "rev vol pp ch sec cf viz ca approx est jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+")
_ENUMERATOR = re.compile(r"\(?(?:\d{1,3}|[A-Za-z]|[ivxlcdmIVXLCDM]{1,6})[.)]")


def _regex_starts(unit: str) -> Iterator[int]:
    """Cut after ``. ! ? …`` followed by whitespace and a capital or digit, except after abbreviations."""
    last_cut = 0
    for match in _REGEX_CANDIDATE.finditer(unit):
        # The word ending at the candidate; a bounded window keeps this linear on space-free text.
        word = unit[max(0, match.start() - 40) : match.start() + 1].split()[-1]
        if match.group()[0] == "." and (
            word[:-1].lower().lstrip("(\"'") in _REGEX_ABBREVIATIONS or _INITIALS.fullmatch(word)
        ):
            continue
        if match.end() - last_cut <= 8 and _ENUMERATOR.fullmatch(unit[last_cut : match.end()].strip()):
            continue  # "1. Intro", "a) first": the enumerator belongs to its item
        last_cut = match.end()
        yield last_cut


_FINDERS: dict[str, Callable[[], StartFinder] | None] = {
    "nupunkt": _nupunkt_finder,
    "nltk": _nltk_finder,
    "regex": lambda: _regex_starts,
    "line": None,
}


def start_finder(name: str) -> StartFinder | None:
    """The backend called ``name`` (one of :data:`SPLITTER_NAMES`), loaded once; ``None`` for ``"line"``.

    Raises:
        KeyError: An unknown name (:func:`tpc_core.segmentation.get_splitter` checks names first).
        RuntimeError: For ``"nltk"`` when nltk or its ``punkt_tab`` data is missing (says how to install).
    """
    factory = _FINDERS[name]
    return factory() if factory is not None else None
