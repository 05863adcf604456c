"""Engine defects found by fuzzing (issue: Engine v2), each reproduced first; tiny random models for wiring."""

from __future__ import annotations

import pytest

DOCS = ["Alice went to Paris. Bob stayed home.", "Carol flew to Rome. Rome is in Italy."]


def test_document_separator_counts_against_the_budget(tiny):
    result = tiny.compress(DOCS, question="Where did people go?", target_tokens=40, token_counter=len)
    assert len(result.compressed_prompt) <= 40
    assert result.compressed_tokens == len(result.compressed_prompt)
    wide = tiny.compress(DOCS, question="Where did people go?", target_tokens=60, token_counter=len,
                         document_separator="\n\n--------\n\n")
    assert len(wide.compressed_prompt) <= 60 and wide.compressed_tokens == len(wide.compressed_prompt)


def test_origin_counts_the_prompt_as_sent(tiny):
    result = tiny.compress(DOCS, question="Where?", rate=1.0, token_counter=len)
    assert result.origin_tokens == len("\n\n".join(DOCS))
    assert result.compressed_prompt == "\n\n".join(DOCS) and result.compressed_tokens == result.origin_tokens


@pytest.mark.parametrize("batch_size", [0, -1, 1.5, True])
def test_bad_batch_size_is_refused_not_dropped(tiny, batch_size):
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        tiny.compress_batch([DOCS[0], DOCS[1], DOCS[0]], question="Who?", batch_size=batch_size)
    with pytest.raises(ValueError, match="batch_size"):
        tiny.compress(DOCS[0], question="Who?", batch_size=batch_size)


def test_a_single_pattern_string_is_one_pattern(tiny):
    result = tiny.compress(DOCS[0] + " Zed is here.", question="Who?", target_tokens=4, token_counter=lambda t:
                           len(t.split()), force_keep_patterns="Bob")
    assert [s.text for s in result.kept_sentences()] == ["Bob stayed home."]


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"force_keep_patterns": ["(unclosed"]}, ValueError, r"'\(unclosed' is not a valid regular expression"),
    ({"force_keep_patterns": [3]}, TypeError, "regex strings"),
    ({"splitter": 123}, TypeError, "splitter must be a name or an object"),
    ({"document_separator": None}, TypeError, "document_separator must be a str"),
])
def test_bad_options_name_themselves(tiny, options, error, match):
    with pytest.raises(error, match=match):
        tiny.compress(DOCS, question="Who?", **options)
