"""Post-budget knobs (min_score, top_n): they only remove, re-assemble verbatim and keep the budget a ceiling."""

from __future__ import annotations

import pytest

from tpc_core.refine import assemble, refine_result, validate_refine_args
from tpc_core.result import CompressionResult, SentenceRecord
from tpc_core.tokens import TokenCounter

DOCUMENTS = [
    "The harbour froze in January. Ships waited outside for weeks.\nThe mayor ordered icebreakers from the north.",
    "Fishermen sold their catch in the next town. Prices of cod doubled that winter.",
    "A choir sang at the town hall. The mayor gave a speech about the icebreakers and the cost of the winter.",
]
QUESTION = "What did the mayor order from the north?"


@pytest.fixture(scope="module")
def result(tpc_mini):
    return tpc_mini.compress(DOCUMENTS, question=QUESTION, rate=0.7)


def test_no_knob_changes_nothing_and_assemble_matches_the_engine(tpc_mini, result):
    refined = refine_result(result, DOCUMENTS, tpc_mini.token_counter)
    assert [r.text for r in refined] == result.compressed_documents
    assert [r.tokens for r in refined] == result.document_compressed_tokens
    for d, document in enumerate(DOCUMENTS):
        records = [s for s in result.sentences if s.doc_index == d]
        assert assemble(document, records, result.kept_sentences(d)) == result.compressed_documents[d]


def test_min_score_removes_exactly_the_kept_sentences_below_the_floor(tpc_mini, result):
    kept_scores = sorted(s.score for s in result.kept_sentences())
    floor = kept_scores[len(kept_scores) // 2]  # a floor between the kept sentences' own scores
    refined = refine_result(result, DOCUMENTS, tpc_mini.token_counter, min_score=floor)

    survivors = [s for s in result.kept_sentences() if s.score >= floor]
    assert 0 < len(survivors) < len(result.kept_sentences())
    assert [s for r in refined for s in r.kept] == survivors
    for d, r in enumerate(refined):
        if not r.kept:
            assert r.text == ""
            continue
        assert " ".join(r.text.split()) == " ".join(" ".join(s.text for s in r.kept).split())
        assert DOCUMENTS[d].find(r.kept[0].text) <= DOCUMENTS[d].find(r.kept[-1].text)
        assert r.tokens == (tpc_mini.token_counter(r.text) if r.text else 0)
    assert sum(r.tokens for r in refined) <= result.budget


def test_min_score_above_every_score_empties_every_document(tpc_mini, result):
    top = max(s.score for s in result.sentences)
    refined = refine_result(result, DOCUMENTS, tpc_mini.token_counter, min_score=top + 1e-6)
    assert all(r.text == "" and r.tokens == 0 and not r.kept for r in refined)


def test_top_n_keeps_the_best_scored_documents_in_input_order(tpc_mini, result):
    refined = refine_result(result, DOCUMENTS, tpc_mini.token_counter, top_n=1)
    with_text = [d for d, r in enumerate(refined) if r.text]
    best = max((d for d, text in enumerate(result.compressed_documents) if text), key=result.document_score)
    assert with_text == [best]
    assert refined[best].text == result.compressed_documents[best]


def test_top_n_without_scores_keeps_the_first_documents(tpc_mini):
    unscored = tpc_mini.compress(DOCUMENTS, question=QUESTION, rate=1.0)  # the budget covers everything
    assert unscored.task_description is None
    refined = refine_result(unscored, DOCUMENTS, tpc_mini.token_counter, top_n=2, min_score=10.0)
    assert [r.text for r in refined] == [DOCUMENTS[0], DOCUMENTS[1], ""]


def test_budget_stays_a_ceiling_when_a_join_costs_more():
    document = "Alpha one. Beta two. Gamma three."
    spans = [(0, 10), (11, 20), (21, 33)]

    def costly(text: str) -> int:  # the join that removal creates is expensive under this counter
        return len(text.split()) + (10 if "one. Gamma" in text else 0)

    records = [SentenceRecord(0, i, s, e, document[s:e], score, 2, True)
               for i, ((s, e), score) in enumerate(zip(spans, [0.9, 0.1, 0.5]))]
    result = CompressionResult(compressed_prompt=document, compressed_documents=[document], origin_tokens=6,
                               compressed_tokens=6, budget=6, task_description="q", sentences=records,
                               document_origin_tokens=[6], document_compressed_tokens=[6])
    refined = refine_result(result, [document], TokenCounter(costly), min_score=0.2)
    assert refined[0].text == "Alpha one."  # "Alpha one. Gamma three." would cost 14 > 6: the weaker one goes
    assert refined[0].tokens == costly("Alpha one.") <= result.budget


@pytest.mark.parametrize("kwargs, error", [({"top_n": 0}, ValueError), ({"top_n": 2.5}, ValueError),
                                           ({"min_score": "high"}, TypeError), ({"min_score": True}, TypeError)])
def test_bad_knobs_raise_naming_the_knob(kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs))):
        validate_refine_args(kwargs.get("min_score"), kwargs.get("top_n"))
