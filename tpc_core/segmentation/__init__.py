"""Sentence spans with exact character offsets: the first stage of the pipeline.

Every later stage (CSE scoring, selection, the result) refers to a sentence by its ``(start, end)`` span in
the original text, so this module guarantees, for every backend and every input string:

* spans are sorted, non-overlapping and non-empty, and ``text[start:end]`` has no leading or trailing
  whitespace (``str.isspace``);
* together they cover every non-whitespace character of ``text`` (nothing is ever dropped);
* no span is longer than ``max_sentence_chars`` (a long run is cut at whitespace, or hard-cut).

How text is split, in order:

1. **Lines first.** The text is cut into lines (every ``str.splitlines`` separator). Blank lines always
   separate. Structural lines -- list items, markdown headings and rules, table rows, block quotes,
   indented lines, lone HTML tags, code-looking lines and everything inside a code fence (three
   backticks or ``~~~``) -- are never joined with a neighbour, so they never merge into prose. Fenced
   code and table rows are kept whole, one span per line (a ``.`` inside code or a cell is not a
   sentence end).
2. **Soft-wrap joining** (``join_wrapped_lines=True``, the default). Hard-wrapped prose (plain text,
   e-mails, text extracted from papers) breaks sentences across lines. A line is joined to the next when
   neither is structural and either the next line starts with a lowercase letter (``"... the\\nstore"``,
   ``"et al.\\nin"``), or the line has no sentence-final punctuation, has at least
   4 words and was visibly *full*: the next line's first word would not have fitted within the widest
   line of the paragraph (how greedy wrapping breaks), and that width is at least 40 characters (narrower
   blocks are lists, verse or addresses) and at most 300 (a longer line was never wrapped: a document or a
   JSON payload on one line). A title above a paragraph
   (``"Ed Wood (film)\\nEd Wood is ..."``, HotpotQA's layout) is therefore not joined. Joined lines are
   handed to the backend with the line breaks replaced by spaces in a same-length copy, so offsets stay
   exact.
3. **Backend** inside each unit: it only proposes cut positions in that offset-preserving copy; the
   spans are the pieces between cuts with surrounding whitespace trimmed, which is why no backend can lose
   or misplace a character.
4. **CJK**: a cut after every run of ``。！？｡`` (plus closing quotes/brackets), so unspaced Chinese or
   Japanese splits into sentences that keep their punctuation. ``；`` is not a cut: it joins clauses.
5. **Length cap**: a piece longer than ``max_sentence_chars`` is cut at its last whitespace within the
   limit, or hard-cut (never between a character and its combining mark) when there is none.

Backends: ``"nupunkt"`` (default: Punkt with nupunkt's pre-trained model, no dependencies),
``"nltk"`` (Punkt with NLTK's ``punkt_tab`` data; the copy shipped by ``llama-index-core`` is used when no
other is installed; nothing is ever downloaded), ``"regex"`` (dependency-free rules, fastest) and
``"line"`` (one sentence per non-blank line, no joining).

Why ``nupunkt`` is the default and joining is on, measured with
``python -m benchmarks.segmentation_accuracy`` (2 shared CPU cores, Python 3.11, nupunkt 0.8.0,
nltk 3.10.4)::

    splitter join | crafted F1 ex.acc | qa_dev intact (words) exact | wrapped exact | CPU ms/10k words
    nupunkt  on   |   0.990   0.984   |  0.743   0.802   0.583     |     0.740     |   5.5
    nupunkt  off  |   0.938   0.918   |  0.743   0.802   0.583     |     0.062     |   5.4
    nltk     on   |   0.844   0.803   |  0.762   0.821   0.596     |     0.742     |  19.9
    regex    on   |   0.956   0.934   |  0.730   0.782   0.685     |     0.740     |   4.3
    line     -    |   0.343   0.164   |  0.060   0.107   0.054     |     0.013     |   0.6

* crafted: 61 hand-labelled examples (150 sentences) of the cases above; F1 over exact spans, ex.acc =
  share of examples split exactly right. nupunkt's one miss is ``"... by Dr.\\nSmith"`` (a line ending in
  an abbreviation before a capital is kept as a boundary).
* qa_dev: 1064 gold supporting sentences of ``data/qa_dev.jsonl``. intact = no span straddles the gold
  start or end; (words) = the same, ignoring spans that only run over punctuation (KV gold drops the
  trailing comma); exact = the gold sentence is one span. The gold comes from other tokenizers: NQ gold
  omits the ``Document [n] (Title: ...)`` prefix, meeting gold the speaker label, and paper gold was cut
  by a Punkt-style splitter at ``"resp."`` / ``"et al."`` (why nltk edges ahead there), so no splitter
  gets near 1.0 and the differences between backends are small.
* wrapped: the HotpotQA, NQ and meeting contexts hard-wrapped at 80 columns. Without joining only 6% of
  gold sentences survive as one span; with it 74.0%, against 74.5% for the same texts unwrapped (e.g. a
  wrapped line starting with ``"34. "`` reads as a list item). Joining changes nothing on unwrapped data.
* Speed: 150k words (~200k tokens) of qa_dev contexts take ~0.08 s CPU with the default (0.12-0.42 s
  wall depending on the load of the shared machine); the work is linear in the text length.

Example:
    >>> text = "Dr. Smith arrived. He sat down.\\n- item one\\n- item two"
    >>> [text[s:e] for s, e in split_sentences(text)]
    ['Dr. Smith arrived.', 'He sat down.', '- item one', '- item two']
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = [
    "DEFAULT_MAX_SENTENCE_CHARS",
    "SPLITTER_NAMES",
    "LineAwareSplitter",
    "SentenceSplitter",
    "Span",
    "get_splitter",
    "split_sentences",
]

Span = tuple[int, int]
"""``(start, end)``: ``text[start:end]`` is one sentence."""

DEFAULT_MAX_SENTENCE_CHARS = 2000
SPLITTER_NAMES = ("nupunkt", "nltk", "regex", "line")


@runtime_checkable
class SentenceSplitter(Protocol):
    """Anything that turns a text into sentence spans (see the module docstring for the contract)."""

    def spans(self, text: str) -> list[Span]:
        """Return the sentence spans of ``text``."""
        ...


# --- lines and layout ------------------------------------------------------------------------------------

# Exactly the separators of str.splitlines, so "a line" means the same thing everywhere in Python.
_LINE_BREAK_CHARS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE = re.compile(f"[^{_LINE_BREAK_CHARS}]+")
_LINE_BREAK = re.compile(f"[{_LINE_BREAK_CHARS}]")

_FENCE = re.compile(r"[ \t]{0,3}(?:```|~~~)")
_TABLE_ROW = re.compile(r"[ \t]*\||(?:[^|]*\|){2}")
# Lines that stand on their own. Code rarely reaches a prompt unfenced, but when it does, its lines must
# not be glued into prose either.
_STRUCTURAL_LINE = re.compile(
    r"""
      ^[ \t]*(?:[-*+•‣◦▪–—·]|\(?(?:\d{1,3}|[A-Za-z]|[ivxlcdmIVXLCDM]{1,6})[.)])(?:\s|$)  # list
    | ^[ \t]{0,3}\#{1,6}(?:\s|$)                                      # ATX heading
    | ^[ \t]*(?:=+|-+|\*+|_+)[ \t]*$                                  # setext underline, rule
    | ^[ \t]*>  | ^(?:\t|[ ]{4})                                      # quote, indented block
    | ^[ \t]*<[^<>]+>[ \t]*$                                          # a lone HTML tag
    | [{}\\]\s*$ | ^\s*[})\]]                                        # code: braces, continuation
    | \w\([^()]*\)\s*$                                                # code: ends with a call f(x)
    | \s(?:=|==|!=|->|=>|//|/\*)\s | ^\s*(?://|/\*|@\w)                # code: operators, comments
    | ^\s*(?:def|class|function)\s+\w+\s*[(:{]
    | ^\s*(?:import\s+[\w.]+(?:\s+as\s+\w+)?\s*$|from\s+[\w.]+\s+import\s)
    """,
    re.VERBOSE,
)
# A line ending like this closes a sentence (or announces the next line), so the break is a boundary.
_TERMINAL_END = re.compile(r"[.!?…:。！？][\"'”’)\]»」』]*\s*$")
_MIN_WRAPPED_WORDS = 4
# Narrower "paragraphs" are lists, poems or addresses, whose lines end early on purpose.
_MIN_WRAP_WIDTH = 40
# Nobody hard-wraps at a wider width: a paragraph whose widest line is longer was not wrapped at all (a whole
# document on one line, a JSON or HTML payload), so its line ends are the writer's own.
_MAX_WRAP_WIDTH = 300

# Every backend ends sentences only at one of these followed by whitespace and more text; most lines
# hold one sentence, so units without one skip the backend's per-call cost.
_MAY_END_INSIDE = re.compile(r"[.!?…]\S*\s+\S|[。！？｡]")

# CJK sentence ends: the punctuation and any closing quotes/brackets stay with the sentence.
_CJK_END = re.compile(r"[。！？｡]+[」』”’）〕】》〉\"')\]]*")


def _continues(line: str, next_line: str, width: Callable[[], int]) -> bool:
    """Whether ``next_line`` is the soft-wrapped continuation of the prose on ``line``.

    Args:
        line: A non-blank, non-verbatim line.
        next_line: The non-blank, non-verbatim line right after it.
        width: Returns the length of the paragraph's widest line (the wrap width, at least approximately);
            only computed when needed.
    """
    body = line.rstrip()
    if len(body.split(None, _MIN_WRAPPED_WORDS - 1)) < _MIN_WRAPPED_WORDS:  # titles, labels, list-like
        return False
    following = next_line.lstrip()
    if not following[0].islower():
        if _TERMINAL_END.search(body[-16:]):
            return False
        # Greedy wrapping breaks a line only when the next word does not fit; a title or a short line
        # that ends early was broken on purpose.
        wrap_width = width()
        if not _MIN_WRAP_WIDTH <= wrap_width <= _MAX_WRAP_WIDTH or \
                len(body) + 1 + len(following.split(None, 1)[0]) <= wrap_width:
            return False
    # Checked last: the cheap tests above settle most line pairs.
    return not (_STRUCTURAL_LINE.search(line) or _STRUCTURAL_LINE.search(next_line))


def _paragraphs(text: str) -> Iterator[list[tuple[int, int]]]:
    """Yield runs of lines with no blank line between them, as ``(start, end)`` line spans."""
    run: list[tuple[int, int]] = []
    previous_end = 0
    for match in _LINE.finditer(text):
        start, end = match.span()
        gap = text[previous_end:start]
        # Two or more breaks between lines ("\r\n" is one) hide an empty line: a paragraph boundary.
        if run and (len(gap) > 1 and gap != "\r\n"):
            yield run
            run = []
        if match.group().isspace():
            if run:
                yield run
            run = []
        else:
            run.append((start, end))
        previous_end = end
    if run:
        yield run


# --- length cap ------------------------------------------------------------------------------------------

_LAST_WHITESPACE = re.compile(r"\s\S*\Z")
_NON_WHITESPACE = re.compile(r"\S")
_GLUE_CHARS = "\u200d\ufe0e\ufe0f"


def _tighten(text: str, start: int, end: int) -> Span:
    """Trim surrounding whitespace from ``text[start:end]``; an empty result has ``start == end``."""
    piece = text[start:end]
    left = piece.lstrip()
    start += len(piece) - len(left)
    return start, start + len(left.rstrip())


def _glued(text: str, index: int) -> bool:
    """Whether a cut before ``text[index]`` would separate it from the character it belongs to."""
    char = text[index]
    return bool(unicodedata.combining(char)) or char in _GLUE_CHARS or text[index - 1] == "\u200d"


def _hard_cut(text: str, start: int, cut: int) -> int:
    """Move a hard cut left (a little) so a character keeps its combining marks and joiners."""
    probe = cut
    while probe > start + 1 and cut - probe < 16 and _glued(text, probe):
        probe -= 1
    return cut if _glued(text, probe) else probe


def _capped(text: str, start: int, end: int, max_chars: int) -> Iterator[Span]:
    """Cut a tight span into tight pieces of at most ``max_chars`` characters."""
    while end - start > max_chars:
        window_end = start + max_chars
        match = _LAST_WHITESPACE.search(text, start + 1, window_end + 1)
        cut = match.start() if match else _hard_cut(text, start, window_end)
        yield _tighten(text, start, cut)
        # A search, not _tighten: copying the rest of a huge run on every cut would be quadratic.
        next_start = _NON_WHITESPACE.search(text, cut, end)
        assert next_start is not None  # text[end - 1] is not whitespace
        start = next_start.start()
    yield start, end


# --- backends: each maps a unit of text to proposed sentence start offsets --------------------------------

StartFinder = Callable[[str], Iterable[int]]


@functools.cache
def _nupunkt_finder() -> StartFinder:
    import nupunkt  # 45 ms to import: only when the backend is used

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


# --- the splitter ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineAwareSplitter:
    """Splits lines first, joins soft-wrapped prose, then runs a sentence backend inside each unit.

    Attributes:
        name: Backend name, for messages.
        find_starts: Maps a unit (line breaks already replaced by spaces) to proposed sentence starts;
            ``None`` makes every non-blank line one sentence. It is only consulted for units where
            ``. ! ? …`` is followed by whitespace and more text, the only places a backend can cut.
        max_sentence_chars: No span is longer than this.
        join_wrapped_lines: Join soft-wrapped prose lines before sentence splitting.
    """

    name: str
    find_starts: StartFinder | None
    max_sentence_chars: int = DEFAULT_MAX_SENTENCE_CHARS
    join_wrapped_lines: bool = True

    def spans(self, text: str) -> list[Span]:
        """Return the sentence spans of ``text``.

        Args:
            text: Any string.

        Returns:
            Sorted, tight, non-overlapping spans covering every non-whitespace character.

        Raises:
            TypeError: If ``text`` is not a ``str``.
        """
        _require_str(text)
        result: list[Span] = []
        for start, end, prose in self._units(text):
            bounds = self._cuts(text, start, end) if prose else [start, end]
            for left, right in zip(bounds, bounds[1:]):
                left, right = _tighten(text, left, right)
                if left < right:
                    result.extend(_capped(text, left, right, self.max_sentence_chars))
        return result

    def _units(self, text: str) -> Iterator[tuple[int, int, bool]]:
        """Yield ``(start, end, is_prose)`` units: joined prose lines, or single verbatim lines."""
        in_fence = False
        for run in _paragraphs(text):
            if self.find_starts is None:
                yield from ((start, end, False) for start, end in run)
                continue
            lines = [text[start:end] for start, end in run]
            width = functools.cache(lambda lines=lines: max(len(line.rstrip()) for line in lines))
            unit: list[int] | None = None  # [start, end] of the prose unit being built
            previous = ""  # the unit's last line
            for (start, end), line in zip(run, lines):
                fence = _FENCE.match(line) is not None
                if in_fence or fence or _TABLE_ROW.match(line):
                    in_fence ^= fence
                    if unit is not None:
                        yield unit[0], unit[1], True
                        unit = None
                    yield start, end, False
                elif unit is not None and self.join_wrapped_lines and _continues(previous, line, width):
                    unit[1] = end
                else:
                    if unit is not None:
                        yield unit[0], unit[1], True
                    unit = [start, end]
                previous = line
            if unit is not None:
                yield unit[0], unit[1], True

    def _cuts(self, text: str, start: int, end: int) -> list[int]:
        """Cut positions of one prose unit: its bounds plus the backend's and the CJK sentence starts."""
        assert self.find_starts is not None
        unit = text[start:end]
        if not _MAY_END_INSIDE.search(unit):
            return [start, end]
        # Same-length copy: every offset the backend reports is an offset into the original text.
        unit = _LINE_BREAK.sub(" ", unit)
        size = len(unit)
        cuts = {cut for cut in self.find_starts(unit) if 0 < cut < size}
        cuts.update(match.end() for match in _CJK_END.finditer(unit) if match.end() < size)
        return [start, *(start + cut for cut in sorted(cuts)), end]


def _require_str(text: object) -> None:
    if not isinstance(text, str):
        raise TypeError(f"Sentence splitting needs a str, got {type(text).__name__}.")


@functools.lru_cache(maxsize=32)
def _cached_splitter(name: str, max_sentence_chars: int, join_wrapped_lines: bool) -> LineAwareSplitter:
    factory = _FINDERS[name]
    finder = factory() if factory is not None else None
    return LineAwareSplitter(name, finder, max_sentence_chars, join_wrapped_lines)


def get_splitter(
    name: str = "nupunkt",
    *,
    max_sentence_chars: int = DEFAULT_MAX_SENTENCE_CHARS,
    join_wrapped_lines: bool = True,
) -> SentenceSplitter:
    """Return a sentence splitter by backend name.

    Args:
        name: One of ``SPLITTER_NAMES``: ``"nupunkt"`` (default), ``"nltk"``, ``"regex"``, ``"line"``.
        max_sentence_chars: Longest allowed span; longer runs are cut at whitespace.
        join_wrapped_lines: Join soft-wrapped prose lines (see the module docstring). Ignored by ``"line"``.

    Returns:
        A splitter whose ``spans(text)`` follows the segmentation contract.

    Raises:
        ValueError: For an unknown name or a ``max_sentence_chars`` below 1.
        TypeError: If ``name`` is not a string or ``max_sentence_chars`` not an int.
        RuntimeError: For ``"nltk"`` when nltk or its ``punkt_tab`` data is missing (says how to install).

    Example:
        >>> get_splitter("regex").spans("One. Two.")
        [(0, 4), (5, 9)]
    """
    if not isinstance(name, str):
        raise TypeError(f"Splitter name must be a str, got {type(name).__name__}.")
    if name not in _FINDERS:
        raise ValueError(f"Unknown sentence splitter {name!r}; choose one of {', '.join(SPLITTER_NAMES)}.")
    if isinstance(max_sentence_chars, bool) or not isinstance(max_sentence_chars, int):
        raise TypeError(f"max_sentence_chars must be an int, got {type(max_sentence_chars).__name__}.")
    if max_sentence_chars < 1:
        raise ValueError(f"max_sentence_chars must be at least 1, got {max_sentence_chars}.")
    return _cached_splitter(name, max_sentence_chars, bool(join_wrapped_lines))


def split_sentences(text: str, splitter: str | SentenceSplitter = "nupunkt") -> list[Span]:
    """Split ``text`` into sentence spans.

    Args:
        text: The text to split.
        splitter: A backend name for :func:`get_splitter`, or any object with ``spans(text)``. A custom
            splitter's output is checked against the contract.

    Returns:
        Sorted, tight, non-overlapping spans that cover every non-whitespace character of ``text``.

    Raises:
        TypeError: If ``text`` is not a ``str`` or ``splitter`` is neither a name nor a splitter.
        ValueError: For an unknown name, or a custom splitter whose spans break the contract.
    """
    _require_str(text)
    if isinstance(splitter, str):
        return get_splitter(splitter).spans(text)
    if not isinstance(splitter, SentenceSplitter):
        raise TypeError(
            f"splitter must be a name or have a spans(text) method, got {type(splitter).__name__}."
        )
    spans = splitter.spans(text)
    if isinstance(splitter, LineAwareSplitter):  # the built-in backends: correct by construction
        return list(spans)
    if isinstance(spans, (str, bytes)) or not isinstance(spans, Iterable):
        raise ValueError(f"{type(splitter).__name__}.spans(text) returned a {type(spans).__name__}, not a list of "
                         f"(start, end) pairs.")
    spans = [tuple(span) if isinstance(span, list) else span for span in spans]
    _check_contract(text, spans, splitter)
    return spans


def _check_contract(text: str, spans: list[Span], splitter: object) -> None:
    """Raise ValueError if ``spans`` are not pairs of ints that are sorted, tight, non-overlapping and covering."""
    name = type(splitter).__name__
    contract = ("A custom splitter's spans(text) must return (start, end) int pairs, sorted and non-overlapping, "
                "each without leading or trailing whitespace, that together cover every non-blank character "
                "(see tpc_core.segmentation).")
    position = 0
    for span in spans:
        if (not isinstance(span, (tuple, list)) or len(span) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in span)):
            raise ValueError(f"{name} returned {span!r}, which is not a pair of ints. {contract}")
        start, end = span
        problem = None
        if not (position <= start < end <= len(text)):
            problem = "out of order, overlapping, empty or out of range"
        elif text[start].isspace() or text[end - 1].isspace():
            problem = "starts or ends with whitespace"
        elif text[position:start].strip():
            problem = f"leaves {text[position:start].strip()[:40]!r} uncovered"
        if problem:
            raise ValueError(f"{name} returned span {(start, end)} that is {problem}. {contract}")
        position = end
    if text[position:].strip():
        raise ValueError(f"{name} left {text[position:].strip()[:40]!r} uncovered. {contract}")
