"""Salience labels: ROUGE recall checked by hand, exact oracle choices, soft gains, splits, the resumable CLI."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from training.salience.data import (
    DATASET_LICENCES,
    PERMISSIVE_DATASETS,
    held_out_split,
    is_permissive,
    licence_of,
    permissive_split,
    read_summ_rows,
    row_subset,
    sentence_spans,
)
from training.salience.labels import (
    greedy_oracle,
    label_document,
    main,
    marginal_gains,
    ngram_counts,
    rouge_recall,
    standalone_scores,
    summarise_records,
    word_tokens,
)

SUMM_TRAIN = Path(__file__).resolve().parents[3] / "shared" / "data" / "summ_train.jsonl.gz"


class WordCounter:
    """Whitespace words: budgets a reader can check by eye."""

    name = "words"

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(text.split()) for text in texts]


# ------------------------------------------------------------------------------------------------ ROUGE


def test_word_tokens_lowercase_word_runs() -> None:
    assert word_tokens("The U.S. fell 2.5%, didn't it?") == ["the", "u", "s", "fell", "2", "5", "didn", "t", "it"]
    assert word_tokens(" ... ") == []


def test_ngram_counts_and_bad_n() -> None:
    assert ngram_counts(["a", "b", "a", "b"], 2) == {("a", "b"): 2, ("b", "a"): 1}
    assert ngram_counts(["a"], 2) == {}
    with pytest.raises(ValueError, match="n must be >= 1"):
        ngram_counts(["a"], 0)


def test_rouge_recall_by_hand() -> None:
    reference = "the cat sat on the mat"  # unigrams: the x2, cat, sat, on, mat (6); bigrams: 5
    assert rouge_recall("the cat sat", reference, 1) == pytest.approx(3 / 6)
    assert rouge_recall("the cat sat", reference, 2) == pytest.approx(2 / 5)  # the cat, cat sat
    # Clipping: the candidate's three "the" count only as often as the reference has it (twice).
    assert rouge_recall("the the the", reference, 1) == pytest.approx(2 / 6)
    # Case and punctuation do not matter; order does for bigrams.
    assert rouge_recall("MAT. The, ON!", reference, 1) == pytest.approx(3 / 6)
    assert rouge_recall("mat the on", reference, 2) == 0.0
    assert rouge_recall(reference, reference, 1) == rouge_recall(reference, reference, 2) == 1.0
    assert rouge_recall("anything", "one", 2) == 0.0  # a one-word reference has no bigram


def test_rouge_recall_rejects_an_empty_reference() -> None:
    with pytest.raises(ValueError, match="no word token"):
        rouge_recall("some text", " .. ", 1)


# ------------------------------------------------------------------------------------------------ oracle


SENTENCES = [
    "Rain fell in Paris on Monday.",  # 0: 6 words
    "The mayor opened a new bridge over the river.",  # 1: 9 words
    "Crowds watched the mayor cut the ribbon.",  # 2: 7 words
    "A new bridge opened in Paris.",  # 3: 6 words
    "Unrelated filler sentence here.",  # 4: 4 words
]
COUNTS = [6, 9, 7, 6, 4]
SUMMARY = "The mayor opened a new bridge in Paris."


def test_greedy_oracle_exact_choices() -> None:
    # Summary: the mayor opened a new bridge in paris (8 unigrams, 7 bigrams); R1+R2 of each sentence alone:
    #   s1 (the mayor opened a new bridge over the river): 6/8 + 5/7 = 1.464
    #   s3 (a new bridge opened in paris): 6/8 + 3/7 = 1.179 (a new, new bridge, in paris)
    #   s0 (... in paris ...): 2/8 + 1/7; s2 (the mayor): 2/8 + 1/7; s4: 0.
    # Budget 15: s1 first (9 words); then only 6-word sentences fit: s3 adds "in", "paris" and the bigram
    # "in paris" (2/8 + 1/7), s0 adds the same: the tie goes to the earlier sentence, s0.
    assert greedy_oracle(SENTENCES, SUMMARY, 15, COUNTS) == [0, 1]
    # Budget 9: s1 alone. Budget 8: s1 does not fit, s3 is best.
    assert greedy_oracle(SENTENCES, SUMMARY, 9, COUNTS) == [1]
    assert greedy_oracle(SENTENCES, SUMMARY, 8, COUNTS) == [3]
    # A large budget stops when nothing raises the score: the filler and redundant sentences stay out.
    assert greedy_oracle(SENTENCES, SUMMARY, 100, COUNTS) == [0, 1]


def test_greedy_oracle_skips_what_does_not_fit_and_takes_a_smaller_one() -> None:
    # Best sentence (9 tokens) is over the budget of 5: the only gainful sentence that fits is taken.
    assert greedy_oracle(["the mayor opened a new bridge", "paris"], SUMMARY, 5, [9, 1]) == [1]
    # Nothing recalls the summary: nothing is chosen.
    assert greedy_oracle(["zzz", "yyy"], SUMMARY, 10, [1, 1]) == []


def test_greedy_oracle_one_word_summary() -> None:
    assert greedy_oracle(["no match", "Paris is big", "paris"], "Paris", 5, [2, 3, 1]) == [1]


@pytest.mark.parametrize(
    ("sentences", "summary", "budget", "counts", "message"),
    [
        ([], SUMMARY, 5, [], "empty document"),
        (["a"], "", 5, [1], "empty summary"),
        (["a"], "  \n", 5, [1], "empty summary"),
        (["a"], "...", 5, [1], "no word token"),
        (["a"], SUMMARY, 0, [1], "budget_tokens must be an int >= 1"),
        (["a"], SUMMARY, -3, [1], "budget_tokens"),
        (["a", "b"], SUMMARY, 5, [1], "2 sentences but 1 token counts"),
        (["a"], SUMMARY, 5, [-1], "non-negative ints"),
    ],
)
def test_greedy_oracle_bad_input(sentences, summary, budget, counts, message) -> None:
    with pytest.raises(ValueError, match=message):
        greedy_oracle(sentences, summary, budget, counts)


def test_greedy_oracle_rejects_a_string_document() -> None:
    with pytest.raises(TypeError, match="not one string"):
        greedy_oracle("one sentence", SUMMARY, 5, [2])  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ soft gains


def test_marginal_gains_given_the_oracle_set() -> None:
    gains = marginal_gains(SENTENCES, SUMMARY, [0, 1])
    # s1 leaves: s0 alone keeps in, paris, "in paris"; the set loses the mayor opened a new bridge (6/8) and
    # the mayor, mayor opened, opened a, a new, new bridge (5/7).
    assert gains[1] == pytest.approx(6 / 8 + 5 / 7)
    assert gains[0] == pytest.approx(2 / 8 + 1 / 7)  # in, paris, "in paris"
    assert gains[3] == 0.0  # adds a new bridge in paris: all already there ("bridge opened" is not in the summary)
    assert gains[2] == 0.0 and gains[4] == 0.0
    with pytest.raises(ValueError, match="out of range"):
        marginal_gains(SENTENCES, SUMMARY, [5])


def test_standalone_scores_by_hand() -> None:
    scores = standalone_scores(["a b", "x y z", "a b c"], "a b c")
    assert scores[0] == pytest.approx(0.8 + 2 / 3)  # R1: P 1, R 2/3; R2: P 1, R 1/2
    assert scores[1] == 0.0
    assert scores[2] == pytest.approx(2.0)


# ------------------------------------------------------------------------------------------------ documents


def test_label_document_spans_budget_and_rouge() -> None:
    documents = ["Rain fell in Paris on Monday. The mayor opened a new bridge over the river.",
                 "Crowds watched the mayor cut the ribbon.\n\nA new bridge opened in Paris."]  # fmt: skip
    labels = label_document(documents, SUMMARY, 0.5, counter=WordCounter())
    texts = [documents[s.document][s.start : s.end] for s in labels.sentences]
    assert texts == SENTENCES[:4]
    assert [s.document for s in labels.sentences] == [0, 0, 1, 1]
    assert labels.counts == (6, 9, 7, 6) and labels.budget == 14  # floor(0.5 * 28)
    assert labels.oracle == (1,)  # s1 (9) then only 5 words of room: no 6-word sentence fits
    assert labels.oracle_rouge1 == pytest.approx(6 / 8) and labels.oracle_rouge2 == pytest.approx(5 / 7)
    # Lead, the engine's rule: s0 (6), s1 would make 15 > 14 and is skipped, s2 (7) still fits: in, paris, the,
    # mayor of 8 words; bigrams "in paris" and "the mayor" of 7.
    assert labels.lead_rouge1 == pytest.approx(4 / 8) and labels.lead_rouge2 == pytest.approx(2 / 7)
    assert len(labels.gains_marginal) == len(labels.gains_standalone) == 4


@pytest.mark.parametrize(
    ("documents", "summary", "rate", "error", "message"),
    [
        (["   ", ""], SUMMARY, 0.2, ValueError, "empty document"),
        (["One sentence."], "", 0.2, ValueError, "empty summary"),
        (["One sentence here."], SUMMARY, 0.0, ValueError, "rate must be in"),
        (["One sentence here."], SUMMARY, 1.5, ValueError, "rate must be in"),
        (["One sentence here."], SUMMARY, 0.1, ValueError, "budget of 0 tokens"),
        ("One sentence here.", SUMMARY, 0.5, TypeError, "list of strings"),
    ],
)
def test_label_document_bad_input(documents, summary, rate, error, message) -> None:
    with pytest.raises(error, match=message):
        label_document(documents, summary, rate, counter=WordCounter())


def test_sentence_spans_use_the_library_splitter() -> None:
    from tpc_core.segmentation import get_splitter

    text = "Dr. Smith arrived. He sat down.\n- item one"
    assert [(s.start, s.end) for s in sentence_spans([text])] == get_splitter("nupunkt").spans(text)


# ------------------------------------------------------------------------------------------------ datasets


def _row(row_id: str, dataset: str, **meta: object) -> dict:
    return {"id": row_id, "documents": ["Text."], "summary": "Text.", "meta": {"dataset": dataset, **meta}}


def test_licences_and_permissive_subsets() -> None:
    assert set(DATASET_LICENCES) == {"multi_news", "cnn_dailymail", "xsum", "qmsum", "squality", "scisummnet",
                                     "ectsum"}  # fmt: skip
    assert PERMISSIVE_DATASETS == {"qmsum", "squality", "scisummnet"}
    assert licence_of("qmsum") == "MIT" and "non-commercial" in licence_of("multi_news")
    assert is_permissive("scisummnet") and not is_permissive("ectsum")
    with pytest.raises(KeyError, match="unknown summ_train dataset"):
        licence_of("wikihow")


def test_held_out_split_holds_out_whole_datasets() -> None:
    rows = [_row("a", "xsum"), _row("b", "qmsum"), _row("c", "multi_news"), _row("d", "qmsum")]
    kept, held = held_out_split(rows, ["qmsum"])
    assert [r["id"] for r in kept] == ["a", "c"] and [r["id"] for r in held] == ["b", "d"]
    records = [{"id": "x", "dataset": "xsum"}, {"id": "y", "dataset": "ectsum"}]  # label records work too
    assert [r["id"] for r in held_out_split(records, {"ectsum"})[1]] == ["y"]
    permissive, rest = permissive_split(rows)
    assert [r["id"] for r in permissive] == ["b", "d"] and [r["id"] for r in rest] == ["a", "c"]
    with pytest.raises(ValueError, match="unknown dataset"):
        held_out_split(rows, ["qmsumm"])
    with pytest.raises(ValueError, match="empty"):
        held_out_split(rows, [])


def test_row_subset_tells_multi_news_plus_apart() -> None:
    assert row_subset(_row("a", "multi_news", truncated=True)) == "multi_news+"
    assert row_subset(_row("b", "multi_news", truncated=False)) == "multi_news"
    assert row_subset(_row("c", "xsum", truncated=True)) == "xsum"


# ------------------------------------------------------------------------------------------------ CLI


def _write_rows(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def _cli_rows() -> list[dict]:
    story = ("Rain fell in Paris on Monday. The mayor opened a new bridge over the river. "
             "Crowds watched the mayor cut the ribbon. A new bridge opened in Paris.")  # fmt: skip
    return [
        {"id": "n1", "documents": [story], "summary": SUMMARY, "meta": {"dataset": "xsum"}},
        {"id": "n2", "documents": [story, "The river was calm."], "summary": "The river was calm in Paris.",
         "meta": {"dataset": "qmsum"}},
    ]


def test_cli_writes_labels_manifest_and_resumes(tmp_path: Path) -> None:
    source, out = tmp_path / "summ.jsonl.gz", tmp_path / "labels" / "labels.jsonl.gz"
    _write_rows(source, _cli_rows())
    assert main(["--input", str(source), "--out", str(out), "--rate", "0.5"]) == 0
    records = [json.loads(line) for line in gzip.open(out, "rt")]
    assert [r["id"] for r in records] == ["n1", "n2"]
    first = records[0]
    assert first["dataset"] == "xsum" and first["licence"] == "repo MIT; text (c) BBC" and not first["permissive"]
    assert records[1]["permissive"] and records[1]["spans"][-1][0] == 1  # the second document's sentence
    assert len(first["spans"]) == len(first["counts"]) == len(first["gains_marginal"]) == 4
    assert first["oracle_tokens"] <= first["budget"] == first["document_tokens"] // 2
    manifest = json.loads((tmp_path / "labels" / "labels.manifest.json").read_text())
    assert manifest["records"] == 2 and manifest["rate"] == 0.5 and len(manifest["input_sha256"]) == 64
    assert manifest["per_subset"]["all"]["documents"] == 2
    assert (tmp_path / "labels" / "labels.summary.md").read_text().count("| xsum |") == 1

    # Resume after a killed run: a torn tail is dropped, done ids are skipped, the missing one is redone.
    with gzip.open(out, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(first) + "\n" + json.dumps(records[1])[:50])
    assert main(["--input", str(source), "--out", str(out), "--rate", "0.5"]) == 0
    again = [json.loads(line) for line in gzip.open(out, "rt")]
    assert [r["id"] for r in again] == ["n1", "n2"] and again[1]["oracle"] == records[1]["oracle"]
    manifest = json.loads((tmp_path / "labels" / "labels.manifest.json").read_text())
    assert [run["labelled"] for run in manifest["runs"]] == [2, 1]
    # Another rate into the same file is refused.
    assert main(["--input", str(source), "--out", str(out), "--rate", "0.3"]) == 2


def test_cli_missing_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--input", str(tmp_path / "nope.jsonl.gz"), "--out", str(tmp_path / "l.jsonl.gz")]) == 2
    assert "summ_train not found" in capsys.readouterr().err


def test_summarise_records_means_per_subset() -> None:
    base = {"counts": [1, 2], "document_tokens": 3, "budget": 2, "oracle": [0], "oracle_tokens": 1,
            "lead_rouge1": 0.1, "lead_rouge2": 0.0, "seconds": 0.5}  # fmt: skip
    records = [{**base, "subset": "xsum", "oracle_rouge1": 0.4, "oracle_rouge2": 0.2},
               {**base, "subset": "xsum", "oracle_rouge1": 0.6, "oracle_rouge2": 0.4},
               {**base, "subset": "qmsum", "oracle_rouge1": 1.0, "oracle_rouge2": 0.9}]  # fmt: skip
    table = summarise_records(records)
    assert list(table) == ["qmsum", "xsum", "all"]
    assert table["xsum"]["oracle_rouge1"] == pytest.approx(0.5) and table["xsum"]["documents"] == 2
    assert table["all"]["oracle_rouge2"] == pytest.approx(0.5) and table["all"]["oracle_budget_share"] == 0.5


@pytest.mark.skipif(not SUMM_TRAIN.is_file(), reason=f"{SUMM_TRAIN} not present (shared data not beside the checkout)")
def test_real_rows_label_with_minilm_counts() -> None:
    rows = []
    for row in read_summ_rows(SUMM_TRAIN):
        if row["meta"]["dataset"] == "cnn_dailymail":
            rows.append(row)
            break
    labels = label_document(rows[0]["documents"], rows[0]["summary"], 0.2)
    assert labels.oracle and sum(labels.counts[i] for i in labels.oracle) <= labels.budget
    assert labels.oracle_rouge1 >= labels.lead_rouge1 - 0.05  # the oracle is at least about as good as lead
