"""Tests for tpc_core.segmentation: exact spans, the coverage contract, layout rules and errors."""

from __future__ import annotations

import random
import time

import pytest

from tpc_core.segmentation import (
    SPLITTER_NAMES,
    SentenceSplitter,
    Span,
    backends,
    get_splitter,
    split_sentences,
)
from tpc_core.segmentation import splitter as splitter_module


def _nltk_available() -> bool:
    try:
        get_splitter("nltk")
    except RuntimeError:
        return False
    return True


NLTK = pytest.param("nltk", marks=pytest.mark.skipif(not _nltk_available(), reason="no punkt_tab data here"))
BACKENDS = ["nupunkt", NLTK, "regex", "line"]
SENTENCE_BACKENDS = ["nupunkt", NLTK, "regex"]


def texts_of(text: str, spans: list[Span]) -> list[str]:
    return [text[start:end] for start, end in spans]


def assert_contract(text: str, spans: list[Span], max_chars: int = 2000) -> None:
    """Sorted, non-overlapping, non-empty, tight, bounded, and covering every non-whitespace character."""
    position = 0
    for start, end in spans:
        assert type(start) is int and type(end) is int
        assert position <= start < end <= len(text), (start, end, position)
        assert not text[start].isspace() and not text[end - 1].isspace(), repr(text[start:end])
        assert end - start <= max_chars
        assert not text[position:start].strip(), f"lost {text[position:start]!r}"
        position = end
    assert not text[position:].strip(), f"lost {text[position:]!r}"


# --- exact spans -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith met Mr. Jones at 5 p.m. on Main St. in Springfield. They talked.",
         ["Dr. Smith met Mr. Jones at 5 p.m. on Main St. in Springfield.", "They talked."]),
        ("The U.S. economy grew by 3.5% last year. The U.K. did not.",
         ["The U.S. economy grew by 3.5% last year.", "The U.K. did not."]),
        ("Use a tool, e.g. a hammer. Then strike.", ["Use a tool, e.g. a hammer.", "Then strike."]),
        ("He paused... Then he spoke.", ["He paused...", "Then he spoke."]),
        ("Visit https://example.com/v1.2/index.html today. Mail a.b@c.org now.",
         ["Visit https://example.com/v1.2/index.html today.", "Mail a.b@c.org now."]),
        ("\"Is it ready?\" she asked. \"Yes.\"", ["\"Is it ready?\" she asked.", "\"Yes.\""]),
        ("Wow! Really?! Yes.", ["Wow!", "Really?!", "Yes."]),
        ("this has no punctuation at all", ["this has no punctuation at all"]),
    ],
)
def test_default_splits_tricky_english_exactly(text: str, expected: list[str]) -> None:
    assert texts_of(text, split_sentences(text)) == expected


def test_offsets_are_exact() -> None:
    text = "  Dr. Smith arrived.\tHe sat.\r\n\r\nNext one.  "
    assert split_sentences(text) == [(2, 20), (21, 28), (32, 41)]


def test_lists_code_headings_and_tables_never_merge_into_prose() -> None:
    text = (
        "# Setup\n"
        "Install it first. Then run it:\n"
        "1. Install the package.\n"
        "2. Run the tests\n"
        "- a bullet without a period\n"
        "```python\n"
        "x = compute(1.5)\n"
        "print('Done. Next')\n"
        "```\n"
        "| Model | Acc. |\n"
        "|---|---|\n"
        "| Dr. X | 91.2 |\n"
        "The table shows results."
    )
    assert texts_of(text, split_sentences(text)) == [
        "# Setup", "Install it first.", "Then run it:", "1. Install the package.", "2. Run the tests",
        "- a bullet without a period", "```python", "x = compute(1.5)", "print('Done. Next')", "```",
        "| Model | Acc. |", "|---|---|", "| Dr. X | 91.2 |", "The table shows results.",
    ]


def test_unfenced_code_lines_stay_apart() -> None:
    text = "import os\nimport sys\nprint(os.getcwd())\nThis prints the directory."
    assert texts_of(text, split_sentences(text)) == [
        "import os", "import sys", "print(os.getcwd())", "This prints the directory."
    ]


@pytest.mark.parametrize("backend", SENTENCE_BACKENDS)
def test_cjk_splits_after_full_width_punctuation(backend: str) -> None:
    text = "今天天气很好。我们去公园吧！你呢？他说：“我明天来。”她点头；然后走了"
    assert texts_of(text, split_sentences(text, backend)) == [
        "今天天气很好。", "我们去公园吧！", "你呢？", "他说：“我明天来。”", "她点头；然后走了"
    ]


def test_html_like_text() -> None:
    text = "<P> A ZIP Code has five digits . It began in 1963 . </P>"
    assert texts_of(text, split_sentences(text)) == [
        "<P> A ZIP Code has five digits .", "It began in 1963 .", "</P>"
    ]


# --- soft-wrapped lines ----------------------------------------------------------------------------------

WRAPPED = (
    "The study was conducted by a team of researchers from the\n"
    "University of California and published last year. The\n"
    "results were confirmed by Google researchers later, as\n"
    "described by Smith et al.\n"
    "in a follow-up."
)


def test_soft_wrapped_prose_is_joined() -> None:
    assert texts_of(WRAPPED, split_sentences(WRAPPED)) == [
        "The study was conducted by a team of researchers from the\n"
        "University of California and published last year.",
        "The\nresults were confirmed by Google researchers later, as\n"
        "described by Smith et al.\nin a follow-up.",
    ]


def test_joining_can_be_turned_off() -> None:
    spans = get_splitter("nupunkt", join_wrapped_lines=False).spans(WRAPPED)
    assert all("\n" not in WRAPPED[start:end] for start, end in spans)
    assert_contract(WRAPPED, spans)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A title above its paragraph (HotpotQA layout) is not a wrapped line.
        ("Scott Derrickson\nScott Derrickson (born July 16, 1966) is an American director. He lives in L.A.",
         ["Scott Derrickson", "Scott Derrickson (born July 16, 1966) is an American director.",
          "He lives in L.A."]),
        # Short lines without punctuation are a list, not wrapped prose.
        ("Shopping list for the week\nTwo cups of flour\nOne cup of sugar",
         ["Shopping list for the week", "Two cups of flour", "One cup of sugar"]),
        ("item number\nitem number", ["item number", "item number"]),
        # A line ending a sentence keeps its boundary.
        ("First line ends here with a period.\nSecond line starts anew.",
         ["First line ends here with a period.", "Second line starts anew."]),
        # A line far wider than anyone wraps at was not wrapped: its end is the writer's, e.g. a one-line
        # context closed inside a JSON wrapper.
        ("Table text without a full stop " * 20 + '",\n  "question": "when was it made"',
         ["Table text without a full stop " * 19 + 'Table text without a full stop ",',
          '"question": "when was it made"']),
        # A lowercase start continues the sentence.
        ("The three colors are:\nred, green and blue.", ["The three colors are:\nred, green and blue."]),
    ],
)
def test_line_joining_rule(text: str, expected: list[str]) -> None:
    assert texts_of(text, split_sentences(text)) == expected


# --- the contract on awkward input -----------------------------------------------------------------------

AWKWARD = [
    "",
    " \n\t\r\n \u3000\u2028 ",
    "no punctuation at all just words going on and on",
    "\x00\x01\x07 control\x1b[0m chars. And \x7f more.",
    "Emoji 😀! Family 👨\u200d👩\u200d👧 and 👍🏽. Flags 🇫🇷🇩🇪.",
    "中文没有空格。日本語もです！한국어도 있습니다. Mixed。",
    "def f(x):\n    return x.y  # e.g. a comment\n\tindented\n}",
    "col1\tcol2\tcol3\nval. 1\tval. 2\t\tval 3",
    "Windows\r\nline\r\nendings.\r\n\r\nOld Mac\rbreaks.",
    "zero\u200bwidth\u200b. \u200b\u200b \ufeffBOM. \u2060joiner",
    "combining e\u0301\u0301 marks. Z\u0335\u0321a\u0336lgo.",
    "lone surrogate \ud800 here. Fine.",
    "Unicode\u2028line\u2029separators\x85and\x1cothers\x0bhere\x0cok.",
    ". . . ! ? ... !!! ???",
    "a" * 5000,
    "word " * 2000,
    "- item\n* item\n+ item\n1) item\n(a) item\n> quote\n# h\n===\n<br>\n| a | b |",
    "```\nunclosed fence. Stays verbatim.\n\nStill code.",
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("text", AWKWARD, ids=range(len(AWKWARD)))
def test_contract_holds_on_awkward_text(backend: str, text: str) -> None:
    assert_contract(text, split_sentences(text, backend))


PIECES = [
    "word", "Dr.", "U.S.", "e.g.", "3.14", "...", ".", "!", "?", "。", "！", "？", "“", "”", "\"", "(", ")",
    " ", " ", " ", "\t", "\n", "\n", "\r\n", "\n\n", "\r", "\x0b", "\x1c", "\x85", "\u2028", "\xa0", "\u3000",
    "- ", "1. ", "# ", "```", "|", "> ", "    ", "<P>", "😀", "👨\u200d👧", "\u200b", "\u200d", "\u0301",
    "今天", "x = f(y)", "{", "\x00", "\ud800", "Apple", "the", "https://ex.com/a.b", "Mr.", "A.",
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("join", [True, False])
def test_contract_holds_on_random_text(backend: str, join: bool) -> None:
    rng = random.Random(f"{backend}-{join}")
    for _ in range(300):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 60)))
        max_chars = rng.choice([1, 3, 12, 2000])
        splitter = get_splitter(backend, max_sentence_chars=max_chars, join_wrapped_lines=join)
        assert_contract(text, splitter.spans(text), max_chars)


# --- the length cap --------------------------------------------------------------------------------------


def test_long_run_without_punctuation_is_cut_at_whitespace() -> None:
    text = "word " * 1000
    spans = get_splitter(max_sentence_chars=100).spans(text)
    assert_contract(text, spans, 100)
    assert len(spans) == 50 and spans[:2] == [(0, 99), (100, 199)]  # 20 whole words each
    assert all(piece.endswith("word") and piece.startswith("word") for piece in texts_of(text, spans))


def test_run_without_whitespace_is_hard_cut() -> None:
    text = "x" * 250
    assert get_splitter(max_sentence_chars=100).spans(text) == [(0, 100), (100, 200), (200, 250)]


def test_hard_cut_keeps_combining_marks_with_their_letter() -> None:
    text = "e\u0301" * 100
    spans = get_splitter(max_sentence_chars=51).spans(text)
    assert_contract(text, spans, 51)
    assert all(not text[start] == "\u0301" for start, _ in spans)


def test_default_cap_applies_to_every_backend() -> None:
    text = "a" * 4500
    for name in ("nupunkt", "regex", "line"):
        assert split_sentences(text, name) == [(0, 2000), (2000, 4000), (4000, 4500)]


def test_large_input_is_linear() -> None:
    # Quadratic work would take minutes here; linear work takes well under a second.
    text = ("This is a fairly long line of wrapped prose that keeps going\n" * 4000
            + "word " * 100_000 + "\n" + "Dr. A. B. c. " * 3000)
    began = time.perf_counter()
    for name in ("nupunkt", "regex"):
        assert_contract(text, split_sentences(text, name))
    assert time.perf_counter() - began < 20


# --- backends and errors ---------------------------------------------------------------------------------


def test_line_backend_is_one_sentence_per_line() -> None:
    text = "One. Two.\n\n  Three\r\nFour"
    assert texts_of(text, split_sentences(text, "line")) == ["One. Two.", "Three", "Four"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mr. Smith paid $3.50 at 5 p.m. sharp. He left. J. K. Rowling wrote it.",
         ["Mr. Smith paid $3.50 at 5 p.m. sharp.", "He left.", "J. K. Rowling wrote it."]),
        ("One. Two.", ["One.", "Two."]),
        ("1. Intro here. Then more.", ["1. Intro here.", "Then more."]),
        ("We bought pears, etc. The store was busy.", ["We bought pears, etc.", "The store was busy."]),
    ],
)
def test_regex_backend_handles_abbreviations(text: str, expected: list[str]) -> None:
    assert texts_of(text, split_sentences(text, "regex")) == expected


def test_get_splitter_returns_a_sentence_splitter() -> None:
    for name in ("nupunkt", "regex", "line"):
        assert isinstance(get_splitter(name), SentenceSplitter)
    assert get_splitter("nupunkt") is get_splitter("nupunkt")  # cached: backends load once


def test_nltk_backend_works_or_says_how_to_install() -> None:
    try:
        splitter = get_splitter("nltk")
    except RuntimeError as error:
        assert "punkt_tab" in str(error) or "pip install nltk" in str(error)
        return
    text = "Dr. Smith arrived. He sat down."
    assert texts_of(text, splitter.spans(text)) == ["Dr. Smith arrived.", "He sat down."]


def test_nltk_without_data_raises_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    nltk_data = pytest.importorskip("nltk.data")
    monkeypatch.setattr(nltk_data, "path", [])  # as if no punkt_tab were installed anywhere
    monkeypatch.setattr(backends, "_bundled_nltk_data", lambda: None)
    backends._nltk_finder.cache_clear()
    splitter_module._cached_splitter.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="nltk.downloader punkt_tab"):
            get_splitter("nltk")
    finally:
        backends._nltk_finder.cache_clear()
        splitter_module._cached_splitter.cache_clear()


@pytest.mark.parametrize("bad", [None, b"bytes", 3, ["a list"]])
def test_non_string_text_raises_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="needs a str"):
        split_sentences(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        get_splitter("regex").spans(bad)  # type: ignore[arg-type]


def test_unknown_name_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="nupunkt, nltk, regex, line"):
        get_splitter("spacy")
    with pytest.raises(ValueError, match="nupunkt, nltk, regex, line"):
        split_sentences("A text.", "spacy")
    assert SPLITTER_NAMES == ("nupunkt", "nltk", "regex", "line")


@pytest.mark.parametrize(
    ("value", "error"), [(0, ValueError), (-5, ValueError), (1.5, TypeError), (True, TypeError)]
)
def test_bad_max_sentence_chars(value: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_sentence_chars"):
        get_splitter("regex", max_sentence_chars=value)  # type: ignore[arg-type]


def test_bad_splitter_argument() -> None:
    with pytest.raises(TypeError, match="spans"):
        split_sentences("A text.", 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="name must be a str"):
        get_splitter(42)  # type: ignore[arg-type]


class _FixedSplitter:
    def __init__(self, spans: list[Span]) -> None:
        self._spans = spans

    def spans(self, text: str) -> list[Span]:
        return list(self._spans)


def test_custom_splitter_is_used_and_checked() -> None:
    text = "ab cd"
    assert split_sentences(text, _FixedSplitter([(0, 2), (3, 5)])) == [(0, 2), (3, 5)]
    with pytest.raises(ValueError, match="uncovered"):
        split_sentences(text, _FixedSplitter([(0, 2)]))
    with pytest.raises(ValueError, match="whitespace"):
        split_sentences(text, _FixedSplitter([(0, 3), (3, 5)]))
    with pytest.raises(ValueError, match="overlapping"):
        split_sentences(text, _FixedSplitter([(0, 4), (3, 5)]))


@pytest.mark.parametrize("label", ["Answer:", "Helpful Answer:", "Question: When is the rent due?", "Query: rent",
                                   "Context:", "### Question:", '"""'])
def test_a_template_label_line_always_starts_a_span(label):
    # The line before is unterminated prose as wide as the paragraph: a soft wrap would otherwise join them.
    text = ("The tenant pays water and electricity every month to the city utility company\n"
            f"Signed on the date first written above by Maria Delgado \n{label}")
    sentences = [text[s:e] for s, e in split_sentences(text)]
    assert sentences[-1] == label.strip()


def test_a_lower_case_label_word_in_wrapped_prose_stays_joined():
    text = ("the committee discussed the budget for the next fiscal year and the\n"
            "summary: of the notes was read aloud by the chair of the committee today")
    assert split_sentences(text) == [(0, len(text))]
