"""A custom splitter's spans are checked where they enter the pipeline (``reading.segment``), for
``compress``, ``compress_batch`` and the adapters' ``splitter`` field alike, so "verbatim, in order, within budget"
holds whatever the splitter returns. Tiny random models for wiring; the contract is the engine's, not a model's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.reading import segment
from tpc_core.segmentation import get_splitter

TEXT = "The bridge opened in 1932. It was designed by a local engineer. Traffic doubled within a decade."


class FixedSpans:
    """A custom splitter that returns the spans it was given, whatever the text."""

    def __init__(self, spans):
        self._spans = spans

    def spans(self, text):
        return list(self._spans)


BAD_SPANS = {
    "overlapping": ([(0, 26), (4, 26), (27, 63), (64, 96)], "out of order, overlapping"),
    "unsorted": ([(0, 26), (64, 96), (27, 63)], "leaves 'It was designed"),  # the skipped text is named first
    "repeated": ([(0, 26), (27, 63), (0, 26), (64, 96)], "out of order, overlapping"),
    "whitespace_padded": ([(0, 27), (27, 63), (64, 96)], "starts or ends with whitespace"),
    "out_of_range": ([(0, 26), (27, 500)], "out of order, overlapping, empty or out of range"),
    "empty": ([(0, 26), (26, 26), (27, 96)], "out of order, overlapping, empty"),
    "uncovered": ([(0, 26), (64, 96)], "uncovered"),
    "not_int": ([(0.0, 26.0), (27, 96)], "not a pair of ints"),
    "not_pairs": ([(0, 26, 1), (27, 96)], "not a pair of ints"),
}


@pytest.mark.parametrize("name", sorted(BAD_SPANS))
def test_bad_custom_spans_are_refused_before_selection(tiny, name):
    spans, message = BAD_SPANS[name]
    with pytest.raises(ValueError, match=message):
        tiny.compress(TEXT, question="Who designed the bridge?", target_tokens=12, splitter=FixedSpans(spans))


def test_the_reported_case_no_longer_reaches_the_output(tiny):
    """Spans [(0, 27), (4, 27), (28, 59)] once produced 'The bridge opened in 1932. bridge opened in 1932.  t was
    designed by a local engin'."""
    with pytest.raises(ValueError, match=r"FixedSpans returned span \(0, 27\) that is starts or ends with whitesp"):
        tiny.compress(TEXT, question="Who designed the bridge?", rate=0.9,
                      splitter=FixedSpans([(0, 27), (4, 27), (28, 59)]))


def test_bad_spans_are_refused_even_when_the_budget_covers_the_text(tiny):
    with pytest.raises(ValueError, match="overlapping"):
        tiny.compress(TEXT, question="Who?", rate=1.0, splitter=FixedSpans([(0, 26), (4, 26), (27, 96)]))


def test_a_good_custom_splitter_is_used_as_given(tiny):
    spans = [(0, 26), (27, 63), (64, 96)]
    result = tiny.compress(TEXT, question="Who designed the bridge?", target_tokens=14,
                           token_counter=lambda t: len(t.split()), splitter=FixedSpans(spans))
    assert [(s.start, s.end) for s in result.sentences] == spans
    assert result.compressed_prompt in {TEXT[s:e] for s, e in spans} | {
        TEXT[a[0]:b[1]] for a, b in zip(spans, spans[1:])}


def test_adapters_check_their_splitter_field_too(tiny):
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from tpc_integrations import TPCDocumentCompressor

    compressor = TPCDocumentCompressor(compressor=tiny, target_tokens=12,
                                       splitter=FixedSpans([(0, 26), (4, 26), (27, 96)]))
    with pytest.raises(ValueError, match="overlapping"):
        compressor.compress_documents([Document(page_content=TEXT)], query="Who designed the bridge?")


@st.composite
def custom_spans(draw):
    """Any list of pairs over TEXT: valid splits of it, and arbitrary (mostly invalid) pairs."""
    if draw(st.booleans()):
        cuts = sorted(draw(st.sets(st.sampled_from([i for i, c in enumerate(TEXT) if c == " "]), max_size=8)))
        bounds = [0, *cuts, len(TEXT)]
        return [(a + (1 if a else 0), b) for a, b in zip(bounds, bounds[1:]) if b > a + 1]
    position = st.integers(-2, len(TEXT) + 2)
    return draw(st.lists(st.tuples(position, position), max_size=6))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(spans=custom_spans())
def test_any_custom_splitter_either_is_refused_or_yields_verbatim_sentences(spans):
    """The pure first stage: whatever a custom splitter returns, segment() either raises ValueError or hands on
    sorted, non-overlapping, tight spans that cover every non-blank character (so the later stages' guarantees
    hold: see tests/core/test_properties.py)."""
    try:
        segmented = segment((TEXT,), FixedSpans(spans), lambda_counter(), CompressionOptions(rate=0.5))
    except ValueError:
        return
    kept = segmented.spans[0]
    assert list(kept) == spans
    assert all(0 <= s < e <= len(TEXT) for s, e in kept)
    assert all(a[1] <= b[0] for a, b in zip(kept, kept[1:]))
    assert all(not TEXT[s].isspace() and not TEXT[e - 1].isspace() for s, e in kept)
    covered = "".join(TEXT[s:e] for s, e in kept)
    assert covered.replace(" ", "") == TEXT.replace(" ", "")


def lambda_counter():
    from tpc_core.engine.tokens import TokenCounter

    return TokenCounter(lambda text: len(text.split()))


def test_builtin_splitters_still_skip_the_check_cost():
    # Built-in (line-aware) splitters are correct by construction and not re-checked; their spans pass through.
    splitter = get_splitter("nupunkt")
    segmented = segment((TEXT,), splitter, lambda_counter(), CompressionOptions(rate=0.5))
    assert segmented.spans[0] == tuple(splitter.spans(TEXT))
