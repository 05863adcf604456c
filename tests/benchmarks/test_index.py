"""The index-time suite: bare contexts compressed once with no question, later questions scored on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.run import main, parse_args
from data_access.loaders import Sample
from evaluation.index import (
    BARE_TEMPLATE,
    evaluate_index,
    index_contexts,
    index_summary,
    index_table,
    plot_index_recall,
)
from evaluation.methods.base import AGNOSTIC, Compressed, Method
from evaluation.methods.registry import build_method

CONTEXT_A = "Alpha rose early today. Alpha ate bread. Alpha slept late. Beta sold the old house."  # 4+3+3+5 words
CONTEXT_B = "Gamma won the race. Gamma went home."  # 4+3 words


class _WordCounter:
    """Whitespace words: budgets a reader can check by eye."""

    name = "words"

    def __call__(self, text: str) -> int:
        return len(text.split())

    def many(self, texts: list[str]) -> list[int]:
        return [self(text) for text in texts]


def _sample(sample_id: str, context: str, question: str, supporting: tuple[str, ...], answers: tuple[str, ...],
            source: str = "toy") -> Sample:  # fmt: skip
    return Sample(id=sample_id, dataset="qa_dev", source=source, context=context, question=question, answers=answers,
                  template="Context: {context}\nQuestion: {input}\nAnswer:", metric="qa_f1", max_new_tokens=8,
                  supporting_sentences=supporting)  # fmt: skip


SAMPLES = [
    _sample("q1", CONTEXT_A, "What did Alpha eat?", ("Alpha ate bread.",), ("bread",)),
    _sample("q2", CONTEXT_A, "What did Beta sell?", ("Beta sold the old house.", "Alpha rose early today."),
            ("house",)),
    _sample("q3", CONTEXT_B, "Who won the race?", ("Gamma won the race.",), ("Gamma",), source="other"),
]


class _Spy(Method):
    """Records what the suite hands a compressor; keeps the first sentence."""

    name = "spy"
    settings = frozenset({AGNOSTIC})

    def __init__(self) -> None:
        super().__init__(_WordCounter())  # type: ignore[arg-type]
        self.calls: list[tuple[str, str | None, int, str]] = []

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        self.calls.append((text, question, budget, sample_id))
        return Compressed(text.split(". ")[0] + ".")


def test_index_contexts_one_bare_sample_per_distinct_context() -> None:
    contexts, context_of = index_contexts(SAMPLES)
    assert [c.context for c in contexts] == [CONTEXT_A, CONTEXT_B]
    assert context_of["q1"] == context_of["q2"] == contexts[0].id != context_of["q3"] == contexts[1].id
    assert contexts[0].id.startswith("ctx-") and len(contexts[0].id) == 16
    bare = contexts[0]
    assert bare.template == BARE_TEMPLATE and bare.question == "" and bare.answers == ()
    assert not bare.supporting_sentences
    assert contexts[1].source == "other"


def test_each_context_is_compressed_once_bare_with_no_question() -> None:
    spy = _Spy()
    records, skipped = evaluate_index(SAMPLES, {"spy": spy}, _WordCounter(), rate=0.5)  # type: ignore[arg-type]
    calls = [call for call in spy.calls if call[3]]  # the warm-up call has no sample id
    assert [(text, question, budget) for text, question, budget, _ in calls] == [(CONTEXT_A, None, 7),
                                                                                  (CONTEXT_B, None, 3)]
    assert not skipped and [r["sample_id"] for r in records] == ["q1", "q2", "q3"]
    assert all(r["setting"] == "index" and r["rate"] == 0.5 for r in records)
    assert "prompt" not in records[0] and records[0]["context_id"] == records[1]["context_id"]


def test_lead_evidence_recall_and_answer_retention_by_hand() -> None:
    lead = build_method("lead", _WordCounter())  # type: ignore[arg-type]
    records, _ = evaluate_index(SAMPLES, {"lead": lead}, _WordCounter(), rate=0.5)  # type: ignore[arg-type]
    by_id = {r["sample_id"]: r for r in records}
    # A: 15 words, budget 7 -> "Alpha rose early today. Alpha ate bread."; B: 7 words, budget 3 -> "Gamma went home."
    assert by_id["q1"]["budget"] == by_id["q2"]["budget"] == 7 and by_id["q3"]["budget"] == 3
    assert by_id["q1"]["evidence_recall"] == 1.0 and by_id["q1"]["answer_retention"] == 1.0
    assert by_id["q2"]["evidence_recall"] == 0.5 and by_id["q2"]["answer_retention"] == 0.0
    assert by_id["q3"]["evidence_recall"] == 0.0 and by_id["q3"]["answer_retention"] == 1.0  # "Gamma went home."
    assert all(r["over_budget"] is False for r in records)


def test_index_table_and_plot(tmp_path: Path) -> None:
    lead = build_method("lead", _WordCounter())  # type: ignore[arg-type]
    by_rate = {}
    for rate in (0.5, 0.3):
        records, _ = evaluate_index(SAMPLES, {"lead": lead}, _WordCounter(), rate=rate)  # type: ignore[arg-type]
        by_rate[str(rate)] = index_summary(records)
    # 0.3: A budget 4 -> "Alpha rose early today." (q1 0, q2 0.5); B budget 2 -> nothing fits (q3 0).
    assert by_rate["0.3"]["lead"]["overall"]["evidence_recall"] == pytest.approx(0.5 / 3)
    assert by_rate["0.5"]["lead"]["toy"]["contexts"] == 1 and by_rate["0.5"]["lead"]["overall"]["contexts"] == 2
    table = index_table(by_rate, {"tpc-mini": "no model here"}, ["lead"])
    lines = table.splitlines()
    assert lines[0] == ("| Method | ER @0.5 | AR @0.5 | ER @0.3 | AR @0.3 | Over budget | s/context | Contexts | "
                        "Questions |")  # fmt: skip
    row = next(line for line in lines if line.startswith("| lead |"))
    assert row.startswith("| lead | 0.500 | 0.667 | 0.167 | 0.000 | 0 | ") and row.endswith(" | 2 | 3 |")
    assert "| tpc-mini | skipped: no model here |" in table
    assert "| lead | 0.00 / 1.00 (1) | 0.75 / 0.50 (2) |" in table  # per source at 0.5: other (q3), toy (q1, q2)
    assert plot_index_recall(by_rate, tmp_path / "index.png", ["lead"]).stat().st_size > 0


def test_methods_that_need_a_question_are_refused() -> None:
    bm25 = build_method("bm25", _WordCounter())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="need a question"):
        evaluate_index(SAMPLES, {"bm25": bm25}, _WordCounter(), rate=0.5)  # type: ignore[arg-type]


def test_parse_args_for_the_index_suite() -> None:
    assert parse_args(["--suite", "index"]).index_rates == [0.5, 0.3]
    assert parse_args(["--suite", "index", "--rate", "0.4"]).index_rates == [0.4]
    assert parse_args(["--suite", "index", "--index-rates", "0.2,0.6"]).index_rates == [0.2, 0.6]
    for bad in (["--methods", "bm25"], ["--target-tokens", "100"], ["--index-rates", "0,0.5"]):
        with pytest.raises(SystemExit):
            parse_args(["--suite", "index", *bad])


def test_cli_writes_table_json_and_plot(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = [{"id": s.id, "source": s.source, "context": s.context, "question": s.question, "answers": list(s.answers),
             "supporting_sentences": list(s.supporting_sentences), "task_type": "single_doc_qa", "split": "dev"}
            for s in SAMPLES] + [{"id": "t1", "source": "toy", "context": CONTEXT_B, "question": "x", "answers": [],
                                  "supporting_sentences": [], "split": "train"}]  # fmt: skip
    (data / "qa_dev.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    code = main(["--suite", "index", "--data-dir", str(data), "--methods", "lead,lead-per-passage,random",
                 "--out", str(out), "--no-cache"])  # fmt: skip
    assert code == 0
    payload = json.loads((out / "index.json").read_text())
    assert payload["rates"] == [0.5, 0.3] and payload["samples"] == 3 and payload["contexts"] == 2
    assert set(payload["summary"]["0.5"]) == {"lead", "lead-per-passage", "random"}
    assert all(r["over_budget"] is False for r in payload["records"]) and len(payload["records"]) == 3 * 3 * 2
    assert "| lead-per-passage |" in (out / "index.md").read_text() and (out / "index_evidence_recall.png").is_file()


@pytest.mark.slow
def test_minilm_centroid_drops_the_off_topic_sentence() -> None:
    from evaluation.budget import minilm_token_counter

    counter = minilm_token_counter()
    cats = ["Cats are small domesticated mammals.", "Many people keep cats as pets at home.",
            "Cats often sleep for most of the day."]  # fmt: skip
    off_topic = "The central bank raised interest rates sharply on Tuesday to fight inflation."
    context = " ".join([cats[0], off_topic, cats[1], cats[2]])
    total, off = counter(context), counter(off_topic)
    assert off > max(map(counter, cats))  # so the budget below holds the three cat sentences and nothing else
    sample = _sample("c1", context, "What are cats?", tuple(cats), ())
    centroid = build_method("minilm-centroid", counter)
    records, _ = evaluate_index([sample], {"minilm-centroid": centroid}, counter, rate=(total - off + 0.5) / total)
    assert records[0]["evidence_recall"] == 1.0 and records[0]["over_budget"] is False


def test_index_summary_times_each_context_once() -> None:
    base = {"method": "lead", "setting": "index", "origin_tokens": 10, "budget": 5, "compressed_tokens": 5,
            "over_budget": False, "evidence_recall": 1.0, "answer_retention": None}  # fmt: skip
    records = [{**base, "sample_id": "q1", "context_id": "ctx-a", "source": "s", "seconds": 1.0},
               {**base, "sample_id": "q2", "context_id": "ctx-a", "source": "s", "seconds": 1.0},
               {**base, "sample_id": "q3", "context_id": "ctx-b", "source": "t", "seconds": 4.0}]  # fmt: skip
    overall = index_summary(records)["lead"]["overall"]
    assert overall["samples"] == 3 and overall["contexts"] == 2 and overall["seconds_mean"] == 2.5  # not 2.0
