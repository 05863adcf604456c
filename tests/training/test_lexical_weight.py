"""The lexical weight's cross-validation (training/lexical_weight.py): folds by source, honest per-fold choices."""

from __future__ import annotations

from types import SimpleNamespace

from training.lexical_weight import choose_weight, cross_validate, folds_by_source, report


def test_folds_are_stratified_by_source() -> None:
    samples = [SimpleNamespace(id=f"{s}-{i}", source=s) for s in "ab" for i in range(4)]
    folds = folds_by_source(samples, 2)
    assert sorted(folds.values()).count(0) == 4
    for source in "ab":  # each source split evenly between the folds
        assert sorted(folds[f"{source}-{i}"] for i in range(4)) == [0, 0, 1, 1]


def test_each_fold_is_scored_with_the_weight_chosen_on_the_others() -> None:
    samples = [SimpleNamespace(id=f"{s}-{i}", source=s) for s in "ab" for i in range(4)]
    folds = folds_by_source(samples, 2)
    good_on_0 = {i: 1.0 if folds[i] == 0 else 0.0 for i in folds}
    good_on_1 = {i: 1.0 if folds[i] == 1 else 0.0 for i in folds}
    per_sample, chosen = cross_validate({0.1: good_on_0, 0.3: good_on_1}, folds, 2)
    # Fold 0 is scored with the weight best on fold 1 (0.3), and vice versa: the CV estimate is honest (0).
    assert chosen == [0.3, 0.1] and set(per_sample.values()) == {0.0}


def test_the_chosen_weight_is_best_on_all_records_and_the_smaller_on_ties() -> None:
    ids = ["a", "b"]
    per_weight = {0.0: dict.fromkeys(ids, 0.5), 0.3: {"a": 1.0, "b": 0.5}, 0.5: {"a": 1.0, "b": 0.5}}
    assert choose_weight(per_weight) == 0.3
    summary = report(per_weight, {"a": 0, "b": 1}, 2)
    assert summary["chosen"] == 0.3 and summary["by_weight"] == {"0": 0.5, "0.3": 0.75, "0.5": 0.75}
    # fold 0 ("a") is scored with the weight chosen on "b" (a tie: 0.0), fold 1 ("b") with the one chosen on "a"
    assert summary["fold_choices"] == [0.0, 0.3] and summary["cv_evidence_recall"] == 0.5
