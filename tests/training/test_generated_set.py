"""The generated request-finder set: fit records from seen parts only, check records on rows no fit record
of this set, the instruction set or the layout set uses, validation exactly where a held-out part shows, the
share of prompts that ask nothing, the layout set's schema, deterministic for a seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesis import HELD_OUT_PARTS
from training.curation.generated_set import length_stats

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


class _WordCounter:
    """Counts words (the statistics only need a ``many``)."""

    def many(self, texts):
        return [len(text.split()) for text in texts]


def test_length_stats_report_quantiles_and_the_share_in_range():
    records = [{"prompt": "w " * n} for n in (100, 200, 300, 1000, 2000)]
    stats = length_stats(records, _WordCounter())
    assert (stats["min"], stats["median"], stats["max"]) == (100, 300, 2000)
    assert stats["share_150_900"] == 0.4 and stats["share_over_1500"] == 0.2
    assert length_stats([], _WordCounter()) == {}


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> tuple[str, str, str, str]:
    if not (DATA / "nq_train.jsonl.gz").is_file():
        pytest.skip("needs ../shared/data")
    import sysconfig

    from training.curation.format_tasks import load_format_inputs, text_pools
    from training.curation.formats import build_records, write_dataset

    out = tmp_path_factory.mktemp("ctd")
    inputs = load_format_inputs(DATA / "nq_train.jsonl.gz", DATA / "qa_dev.jsonl")
    write_dataset(build_records(inputs, text_pools(inputs, sysconfig.get_paths()["stdlib"]), seed=13,
                                max_per_kind=60), out)
    return (str(out / "ctd.jsonl"), str(DATA / "nq_train.jsonl.gz"), str(DATA / "qa_dev.jsonl"),
            str(DATA / "summ_train.jsonl.gz"))


def test_fit_is_seen_only_and_check_rows_are_disjoint_from_every_fit_set(paths):
    from training.curation.generated_set import build_generated_set, train_rows
    from training.curation.instruction_set import build_instruction_set
    from training.curation.layout_set import build_layout_set

    ordered = train_rows(paths[0], paths[1], paths[2], seed=13)
    excluded = [str(ordered[5]["id"]), str(ordered[-1]["id"])]
    records = build_generated_set(*paths, seed=13, fit=160, check=80, layout_skip=40, layout_fit_rows=20,
                                  exclude=excluded)
    fit = [r for r in records if r["role"] == "fit"]
    check = [r for r in records if r["role"] == "check"]
    assert (len(fit), len(check)) == (160, 80)
    assert sum(not r["request_spans"] for r in fit) == 40 and sum(not r["request_spans"] for r in check) == 20
    for record in fit:
        assert record["split"] == "train" and record["components"]["held_out"] == ""
        assert all(record["components"].get(axis) not in parts for axis, parts in HELD_OUT_PARTS.items())
    assert {r["split"] for r in check} == {"train", "validation"}
    assert all((r["split"] == "validation") == bool(r["components"]["held_out"]) for r in records)
    check_rows = {r["source_id"] for r in check if r["request_spans"]}
    fit_rows = {r["source_id"] for r in fit if r["request_spans"]}
    assert check_rows and not check_rows & fit_rows and not (check_rows | fit_rows) & set(excluded)
    instruction = build_instruction_set(*paths, seed=13, fit_rows=30, check_rows=10, fit_without=2, check_without=2)
    layout = build_layout_set(*paths, seed=13, skip=40, fit_rows=20, check_rows=5, fit_without=2, check_without=2,
                              exclude=excluded)
    other_fit = {r["source_id"] for r in (*instruction, *layout) if r["role"] == "fit"}
    assert not check_rows & other_fit
    documents = [{r["source_id"] for r in part if not r["request_spans"]} for part in (fit, check)]
    assert not documents[0] & documents[1]
    for record in records:
        assert {"id", "prompt", "family", "shape", "kind", "role", "split", "request_spans", "source_id",
                "task_description", "components", "request"} <= set(record)
        assert " ".join(record["prompt"][a:b] for a, b in record["request_spans"]) == record["request"]
        assert record["task_description"] == record["request"]
        if record["request_spans"]:
            assert record["kind"] == "instruction"
        else:
            assert record["family"].startswith("no_request_")


def test_the_cli_writes_records_and_stats_and_is_deterministic(paths, tmp_path):
    from training.curation.generated_set import main

    common = ["--ctd", paths[0], "--nq", paths[1], "--qa", paths[2], "--summ", paths[3], "--fit", "40", "--check",
              "20", "--layout-skip", "40", "--layout-fit-rows", "20", "--exclude", "", "--no-lengths"]
    for name in ("a", "b"):
        assert main([*common, "--out", str(tmp_path / name)]) == 0
    first, second = ((tmp_path / name / "records.jsonl").read_text(encoding="utf-8") for name in ("a", "b"))
    assert first == second and len(first.splitlines()) == 60
    stats = json.loads((tmp_path / "a" / "stats.json").read_text(encoding="utf-8"))
    assert stats["records"] == 60 and stats["held_out_parts"]["shell"] == sorted(HELD_OUT_PARTS["shell"])
    assert stats["parts_per_axis"]["shell"] >= 20 and stats["minilm_tokens"] == {}
    with pytest.raises(ValueError, match="without_share"):
        from training.curation.generated_set import build_generated_set

        build_generated_set(*paths, seed=1, fit=4, check=0, without_share=1.0)
