"""Post-budget filters (min_score, top_n): a step of the pipeline that only removes, so the one budget loop
(``selection.fit_to_budget``) still makes the result fit and the text stays verbatim and in order."""

from __future__ import annotations

import pytest

from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.output.result import to_result
from tpc_core.engine.reading import segment
from tpc_core.engine.selection.assembly import compress_scored
from tpc_core.engine.selection.budget import filter_kept, validate_filter_args
from tpc_core.engine.tokens import TokenCounter
from tpc_core.engine.values import Scored, Task
from tpc_core.segmentation import get_splitter

DOCUMENTS = [
    "The harbour froze in January. Ships waited outside for weeks.\nThe mayor ordered icebreakers from the north.",
    "Fishermen sold their catch in the next town. Prices of cod doubled that winter.",
    "A choir sang at the town hall. The mayor gave a speech about the icebreakers and the cost of the winter.",
]
QUESTION = "What did the mayor order from the north?"


@pytest.fixture(scope="module")
def result(tpc_mini):
    return tpc_mini.compress(DOCUMENTS, question=QUESTION, rate=0.7)


def test_min_score_removes_exactly_the_kept_sentences_below_the_floor(tpc_mini, result):
    kept_scores = sorted(s.score for s in result.kept_sentences())
    floor = kept_scores[len(kept_scores) // 2]  # a floor between the kept sentences' own scores
    filtered = tpc_mini.compress(DOCUMENTS, question=QUESTION, rate=0.7, min_score=floor)

    survivors = [s for s in result.kept_sentences() if s.score >= floor]
    assert 0 < len(survivors) < len(result.kept_sentences())
    assert filtered.kept_sentences() == survivors
    for d, text in enumerate(filtered.compressed_documents):
        kept = filtered.kept_sentences(d)
        if not kept:
            assert text == "" and filtered.document_compressed_tokens[d] == 0
            continue
        assert " ".join(text.split()) == " ".join(" ".join(s.text for s in kept).split())
        assert filtered.document_compressed_tokens[d] == tpc_mini.token_counter(text)
    assert filtered.compressed_tokens == tpc_mini.token_counter(filtered.compressed_prompt) <= filtered.budget


def test_min_score_above_every_score_keeps_nothing(tpc_mini, result):
    top = max(s.score for s in result.sentences)
    filtered = tpc_mini.compress(DOCUMENTS, question=QUESTION, rate=0.7, min_score=top + 1e-6)
    assert filtered.compressed_prompt == "" and filtered.compressed_tokens == 0
    assert filtered.compressed_documents == ["", "", ""] and not filtered.kept_sentences()


def test_top_n_keeps_the_best_scored_document(tpc_mini, result):
    filtered = tpc_mini.compress(DOCUMENTS, question=QUESTION, rate=0.7, top_n=1)
    with_text = [d for d, text in enumerate(filtered.compressed_documents) if text]
    best = max((d for d, text in enumerate(result.compressed_documents) if text), key=result.document_score)
    assert with_text == [best]
    assert filtered.compressed_documents[best] == result.compressed_documents[best]


def test_top_n_without_scores_keeps_the_first_documents_whole(tpc_mini):
    unscored = tpc_mini.compress(DOCUMENTS, question=QUESTION, rate=1.0, top_n=2, min_score=10.0)
    assert not unscored.scored and unscored.task_description is None
    assert unscored.compressed_documents == [DOCUMENTS[0], DOCUMENTS[1], ""]
    assert unscored.compressed_prompt == DOCUMENTS[0] + "\n\n" + DOCUMENTS[1]
    assert [s.kept for s in unscored.sentences if s.doc_index == 2] == [False, False]


def test_filter_kept_is_pure_and_only_removes():
    documents, scores = [0, 0, 1, 1, 2], [0.9, 0.1, 0.5, 0.6, 0.95]
    chosen = frozenset({0, 1, 2, 3})
    assert filter_kept(chosen, documents, scores) == chosen
    assert filter_kept(chosen, documents, scores, min_score=0.55) == {0, 3}
    # Document 2 scores best but kept nothing: top_n ranks only documents that still keep a sentence.
    assert filter_kept(chosen, documents, scores, top_n=1) == {0, 1}
    assert filter_kept(chosen, documents, None, top_n=1, min_score=5.0) == {0, 1}  # unscored: input order


def test_the_one_budget_loop_holds_when_a_filtered_join_costs_more():
    document = "Alpha one. Beta two. Gamma three. Delta four."

    def costly(text: str) -> int:  # the join that the filter creates is expensive under this counter
        return len(text.split()) + (10 if "one. Gamma" in text else 0)

    counter = TokenCounter(costly)
    options = CompressionOptions(target_tokens=6, min_score=0.2)
    segmented = segment((document,), get_splitter("nupunkt"), counter, options)
    assert segmented.needs_scoring
    scored = Scored(segmented, (0.9, 0.1, 0.5, 0.05), Task.from_question("q"))
    result = to_result(compress_scored(scored, options, counter), "\n\n")
    # The budget keeps Alpha, Beta and Gamma (6 tokens); min_score removes Beta; "Alpha one. Gamma three." then
    # costs 14 > 6, so the one budget loop drops the weaker, Gamma.
    assert result.compressed_prompt == "Alpha one."
    assert result.compressed_tokens == costly("Alpha one.") <= result.budget


@pytest.mark.parametrize("kwargs, error", [({"top_n": 0}, ValueError), ({"top_n": 2.5}, ValueError),
                                           ({"min_score": "high"}, TypeError), ({"min_score": True}, TypeError),
                                           ({"min_score": float("nan")}, TypeError)])
def test_bad_filters_raise_naming_the_filter(kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        validate_filter_args(kwargs.get("min_score"), kwargs.get("top_n"))
    with pytest.raises(error, match=next(iter(kwargs))):
        CompressionOptions(**kwargs)
