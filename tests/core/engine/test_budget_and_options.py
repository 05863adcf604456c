"""What a compress call counts against its budget (the document separator, the prompt as sent, a sentence
larger than the budget, one very long word) and how bad options are refused. Tiny random models for wiring;
the long-word count is the shipped tokenizer's."""

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


def test_oversized_sentence_warning_points_at_the_caller_and_is_counted(tiny):
    text = "Tiny one. " + "This sentence has far too many words to fit in a budget of three. " + "Short too."
    with pytest.warns(UserWarning, match="larger than the whole budget") as caught:
        result = tiny.compress(text, question="What?", target_tokens=3, token_counter=lambda t: len(t.split()))
    assert caught[0].filename == __file__
    assert result.oversized_sentences == 1
    assert all("far too many" not in s.text for s in result.kept_sentences())


def test_long_words_count_by_their_length_with_the_default_counter(tpc_mini):
    import random
    import string

    blob = "".join(random.Random(0).choices(string.ascii_letters + string.digits, k=4000))  # one 4,000-char word
    counter = tpc_mini.token_counter
    pieces = [blob[start: start + 100] for start in range(0, len(blob), 100)]
    assert counter(blob) == sum(counter(piece) for piece in pieces) > len(blob) // 100
    assert counter("Some text. " + blob) == counter("Some text.") + counter(blob)
    with pytest.warns(UserWarning, match="larger than the whole budget of 40 tokens"):  # the blob's pieces
        result = tpc_mini.compress(["Cats sleep a lot. Dogs bark at night.", "Data: " + blob],
                                   question="What do dogs do?", target_tokens=40)
    assert result.oversized_sentences > 0
    kept_text = " ".join(s.text for s in result.kept_sentences())
    assert not any(blob[k: k + 20] in kept_text for k in range(0, len(blob), 20))
    assert result.compressed_tokens <= 40
    assert result.compressed_tokens == counter(result.compressed_prompt)
