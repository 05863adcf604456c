"""A sentence longer than the splitter's ``max_sentence_chars`` is cut at word boundaries into pieces; a result that
keeps some of its pieces but not all says so (``truncated_sentences``) and the call warns once, at the caller's line.

``cut_sentences`` (which spans are pieces of one cut sentence) is checked against splitting without the cap, on
texts hypothesis draws; the report and the warning on the real tpc-mini."""

from __future__ import annotations

import logging
import sys
import warnings
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.notice_helpers import logged_only
from tpc_core.diagnostics.notices import TPCRuntimeWarning
from tpc_core.segmentation import get_splitter
from tpc_core.segmentation.length import cut_sentences

QUESTION = "What must the tenant keep clean?"


def _lease(clauses: int) -> str:
    """A lease whose second sentence is one run of ``clauses`` clauses (about 45 characters each)."""
    run = ", ".join(f"the tenant shall keep item number {i} clean" for i in range(clauses))
    return ("This lease is made between the landlord and the tenant. Under this lease " + run + ". Rent is due on "
            "the first day of each month. A late fee of 50 dollars applies after the fifth day of the month.")


def _all_cuts(text: str, spans: list, max_chars: int, uncapped) -> tuple:
    """What ``cut_sentences`` must give, found the slow way: every uncapped span over the cap, mapped to its pieces."""
    cuts = []
    for start, end in uncapped(text):
        if end - start > max_chars:
            inside = [index for index, (s, e) in enumerate(spans) if start <= s and e <= end]
            cuts.append((inside[0], inside[-1]))
    return tuple(cuts)


WORDS = st.sampled_from(["a", "tenant", "keeps", "item", "clean.", "Rent", "is", "due!", "x" * 30, "\n", "\n\n",
                         "- list", "Dr.", "pneumonoultramicroscopic", "日本語の文。", "e\u0301"])


@settings(max_examples=200, deadline=None)
@given(words=st.lists(WORDS, min_size=1, max_size=80), max_chars=st.integers(8, 60),
       name=st.sampled_from(["nupunkt", "regex", "line"]))
def test_cut_sentences_finds_exactly_the_sentences_the_cap_cut(words, max_chars, name):
    text = " ".join(words)
    splitter = get_splitter(name, max_sentence_chars=max_chars)
    uncapped = replace(splitter, max_sentence_chars=sys.maxsize).spans
    spans = splitter.spans(text)
    cuts = cut_sentences(text, spans, max_chars, uncapped)
    assert cuts == _all_cuts(text, spans, max_chars, uncapped)
    for first, last in cuts:
        assert last > first
        for (start, end), (following, _) in zip(spans[first:last], spans[first + 1:last + 1]):
            if following > end:  # a cut at a word boundary: only whitespace between the pieces
                assert text[end:following].isspace()
            else:  # a hard cut: only inside a word longer than the cap (no whitespace in the whole window)
                assert following == end and not any(char.isspace() for char in text[start + 1: start + max_chars + 1])


def test_a_cut_falls_at_a_word_boundary_and_never_inside_a_word_that_fits():
    text = _lease(60)
    splitter = get_splitter("nupunkt", max_sentence_chars=400)
    spans = splitter.spans(text)
    (first, last), = cut_sentences(text, spans, 400, replace(splitter, max_sentence_chars=sys.maxsize).spans)
    for (start, end), (following, _) in zip(spans[first:last], spans[first + 1:last + 1]):
        assert text[end:following].isspace()  # whitespace between every two pieces: no word was split
        assert end - start <= 400 and text[end - 1] != " "


@pytest.mark.slow
def test_a_result_that_keeps_part_of_a_cut_sentence_says_so_and_the_call_logs_it_once(tpc_mini, caplog):
    text = _lease(300)  # its long sentence is about 13,000 characters: the 2,000-character cap cuts it
    with logged_only(caplog, "1 sentence\\(s\\) longer than 2000 characters were cut at word boundaries", count=1):
        result = tpc_mini.compress(text, question=QUESTION, target_tokens=1200)
    assert result.truncated_sentences == 1
    kept = [sentence.text for sentence in result.kept_sentences()]
    assert any(piece.startswith("the tenant shall keep item number") for piece in kept)  # a piece from its middle
    assert all(len(sentence.text) <= 2000 for sentence in result.sentences)
    assert result.to_dict()["truncated_sentences"] == 1

    # Two such prompts in one call: one record, counting both.
    with logged_only(caplog, "sentence\\(s\\) longer than", count=1):
        batch = tpc_mini.compress_batch([text, _lease(200)], question=QUESTION, target_tokens=1200)
    assert [r.truncated_sentences for r in batch] == [1, 1]
    assert [r.getMessage()[:14] for r in caplog.records if "longer than" in r.getMessage()] == ["2 sentence(s) "]


@pytest.mark.slow
def test_a_cut_sentence_kept_whole_or_dropped_whole_is_not_reported(tpc_mini, caplog):
    text = _lease(60)  # about 2,700 characters: cut once
    with caplog.at_level(logging.WARNING), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        whole = tpc_mini.compress(text, question=QUESTION, rate=1.0)  # the budget covers it: every piece kept
        dropped = tpc_mini.compress(text, question="When is rent due?", target_tokens=30)
    assert whole.compressed_prompt == text and whole.truncated_sentences == 0
    assert "item number" not in dropped.compressed_prompt and dropped.truncated_sentences == 0
    assert not [warning for warning in caught if issubclass(warning.category, TPCRuntimeWarning)]
    assert "longer than" not in caplog.text
