"""Table layouts and speed prompts, on records and samples built in the test."""

from __future__ import annotations

from benchmarks.timing import build_length_prompts
from data_access.loaders import Sample
from evaluation.budget import minilm_token_counter
from evaluation.report import aggregate, dev_tables, longbench_table


def _record(method: str, dataset: str, score: float | None, setting: str = "aware", **extra) -> dict:
    return {"method": method, "setting": setting, "sample_id": f"{dataset}-{score}", "dataset": dataset,
            "source": dataset, "origin_tokens": 1000, "budget": 200, "compressed_tokens": 190, "seconds": 0.5,
            "over_budget": False, "evidence_recall": None, "answer_retention": None, "score": score,
            **extra}  # fmt: skip


def test_longbench_table_averages_tasks_within_categories() -> None:
    records = [
        _record("tpc-aware", "hotpotqa", 0.5), _record("tpc-aware", "hotpotqa", 1.0),  # hotpotqa mean 75
        _record("tpc-aware", "musique", 0.25),  # musique 25 -> MultiDoc = (75 + 25) / 2 = 50
        _record("tpc-aware", "lcc", 0.6),  # Code 60
    ]  # fmt: skip
    table = longbench_table(records, {"llmlingua": "llmlingua not installed"}, ["tpc-aware"])
    row = next(line for line in table.splitlines() if line.startswith("| tpc-aware"))
    assert row == "| tpc-aware | — | 50.00 | — | — | — | 60.00 | 190 | 5× |"
    assert table.splitlines()[0].startswith("| Methods | SingleDoc | MultiDoc | Summ. | FewShot | Synth. | Code |")
    assert "| llmlingua | skipped: llmlingua not installed |" in table


def test_aggregate_and_dev_table_count_overruns_and_ratio() -> None:
    records = [
        _record("bm25", "nq", None, evidence_recall=1.0, answer_retention=1.0),
        _record("bm25", "kv", None, evidence_recall=0.0, answer_retention=None, over_budget=True),
    ]
    summary = aggregate(records)
    overall = summary["aware"]["bm25"]["overall"]
    assert overall["evidence_recall"] == 0.5 and overall["answer_retention_n"] == 1 and overall["over_budget"] == 1
    assert overall["inverse_tau"] == 1000 / 190
    table = dev_tables(summary, {}, ["bm25"])
    assert "| bm25 | 0.500 | 1.000 | 190 | 200 | 1 | 5.3× | 0.500 |" in table


def test_speed_prompts_have_the_requested_lengths() -> None:
    counter = minilm_token_counter()
    samples = [Sample(id=str(i), dataset="qa_dev", source="x", context="word " * 300 + f"end {i}.", question="q?",
                      answers=(), template="{context}", metric="qa_f1", max_new_tokens=1)
               for i in range(10)]  # fmt: skip
    prompts = build_length_prompts(samples, [100, 1000], counter)
    assert counter(prompts[100]["text"]) == 100
    assert abs(counter(prompts[1000]["text"]) - 1000) <= 1  # cut at a word boundary
    assert prompts[1000]["question"] == "q?"
