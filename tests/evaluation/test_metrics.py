"""Answer metrics and compression proxies on hand-computed examples."""

from __future__ import annotations

import pytest

from evaluation.metrics import (
    answer_retention,
    classification_score,
    code_sim,
    count_score,
    evidence_recall,
    levenshtein_similarity,
    mc_accuracy,
    normalize_answer,
    qa_f1,
    retrieval_score,
    rouge_geo,
    rouge_l,
    rouge_n,
    rouge_n_recall,
    score_prediction,
)


def test_rouge_n_recall_hand_computed() -> None:
    candidate, reference = "The cat sat on the mat.", "the CAT is on the mat, the"
    # reference unigrams: the x3, cat, is, on, mat = 7; clipped overlap: the 2 (candidate has 2), cat, on, mat = 5
    assert rouge_n_recall(candidate, reference, 1) == pytest.approx(5 / 7)
    # reference bigrams: the-cat, cat-is, is-on, on-the, the-mat, mat-the = 6; shared: the-cat, on-the, the-mat
    assert rouge_n_recall(candidate, reference, 2) == pytest.approx(3 / 6)
    # recall, not F1: a candidate holding the whole reference plus padding still scores 1
    assert rouge_n_recall("padding words " + reference + " and more", reference, 2) == 1.0
    assert rouge_n_recall("anything", "", 1) == 0.0 and rouge_n_recall("", "the cat", 1) == 0.0
    assert rouge_n_recall("a b", "a", 2) == 0.0  # a one-word reference has no bigram
    with pytest.raises(ValueError):
        rouge_n_recall("a", "a", 0)
    assert rouge_n(candidate, reference, 1) == pytest.approx(2 * (5 / 6) * (5 / 7) / (5 / 6 + 5 / 7))  # F1 unchanged


def test_normalize_answer_drops_case_punctuation_articles() -> None:
    assert normalize_answer("The  Eiffel Tower, in PARIS!") == "eiffel tower in paris"


def test_qa_f1_hand_computed() -> None:
    # pred tokens {eiffel, tower}, gold {eiffel, tower, paris}: P = 1, R = 2/3, F1 = 0.8
    assert qa_f1("the Eiffel Tower", "Eiffel Tower, Paris") == pytest.approx(0.8)
    assert qa_f1("London", "Paris") == 0.0
    assert score_prediction("qa_f1", "Paris", ["London", "paris."]) == 1.0


def test_rouge_l_hand_computed() -> None:
    # LCS("the cat sat on the mat", "the cat lay on the mat") = the cat on the mat = 5; P = R = 5/6
    assert rouge_l("the cat sat on the mat", "The cat lay on the mat.") == pytest.approx(5 / 6)
    # bigrams: 5 each, shared: "the cat", "on the", "the mat" = 3 -> F1 = 3/5
    assert rouge_n("the cat sat on the mat", "the cat lay on the mat", 2) == pytest.approx(3 / 5)
    assert rouge_geo("a b", "c d") == 0.0


def test_code_sim_uses_first_non_comment_line_and_indel_ratio() -> None:
    # "abcd" vs "abce": LCS 3 -> 2*3/8 = 0.75 (fuzz.ratio 75)
    assert code_sim("# comment\nabcd\nmore", "abce") == pytest.approx(0.75)
    assert code_sim("```python\nx = 1", "x = 1") == 1.0
    assert levenshtein_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)


def test_longbench_classification_count_retrieval() -> None:
    classes = ["Location", "Other location", "City"]
    assert classification_score("Other location", "Other location", classes) == 1.0
    assert classification_score("City or Location", "City", classes) == 0.5
    assert classification_score("no idea", "City", classes) == 0.0
    assert count_score("There are 3 or maybe 4", "3") == 0.5
    assert retrieval_score("Paragraph 12", "Paragraph 12") == 1.0
    assert retrieval_score("I think 3", "Paragraph 12") == 0.0


def test_mc_accuracy_reads_the_option_letter() -> None:
    assert mc_accuracy("B. he thinks it is impractical.", "B") == 1.0
    assert mc_accuracy("(C)", "B. he thinks it is impractical.") == 0.0
    assert score_prediction("unsupported", "x", ["y"]) is None


def test_evidence_recall_counts_verbatim_sentences_only() -> None:
    original = "Alpha is first.\nBeta is second. Gamma is third."
    supporting = ["Beta is second.", "Gamma is third.", "Not in the context."]
    assert evidence_recall("Alpha is first. Beta is second.", supporting, original) == 0.5
    assert evidence_recall("Beta is  second.\nGamma is third.", supporting, original) == 1.0
    assert evidence_recall("anything", ["Missing."], original) is None


def test_answer_retention_ignores_option_labels_and_scaffold_copies() -> None:
    context = "The treaty was signed in 1648 in Westphalia."
    assert answer_retention("signed in 1648", ["1648"], context) == 1.0
    assert answer_retention("signed in 16480", ["1648"], context) == 0.0  # whole words only
    assert answer_retention("anything", ["B"], context) is None  # option labels test nothing
    # Prompt-agnostic: the question quotes the answer; keeping only the question is not retention.
    scaffold = "Question: was it 1648 or 1650?"
    assert answer_retention("Question: was it 1648 or 1650?", ["1648"], context, scaffold) == 0.0
    assert answer_retention("Question: was it 1648 or 1650? signed in 1648", ["1648"], context, scaffold) == 1.0
