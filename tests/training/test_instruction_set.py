"""Instruction-style request records: families, shapes, spans, held-out families, no-request prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesis.instructions import (
    HELD_OUT_INSTRUCTION_FAMILIES,
    INSTRUCTION_FAMILIES,
    SHAPES,
    instruction_records,
    no_request_records,
    request_of,
)

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _rows(count: int) -> list[dict]:
    return [{"id": f"r{k}", "question": f"who founded company {k}", "answers": [f"Person {k}"],
             "context": f"Company {k} was founded by Person {k} in 19{k:02d}. It makes tools.",
             "supporting_sentences": [f"Company {k} was founded by Person {k} in the year 19{k:02d}."],
             "source": "nq_open_oracle", "meta": {"gold_title": f"Company {k}"}} for k in range(count)]


def test_every_family_and_shape_is_dealt_and_the_span_is_the_written_request():
    rows = _rows(2 * len(INSTRUCTION_FAMILIES) * len(SHAPES))
    records = instruction_records(rows, rows, seed=3, families=tuple(INSTRUCTION_FAMILIES), prefix="t")
    assert {(r["family"], r["shape"]) for r in records} == {(f, s) for f in INSTRUCTION_FAMILIES for s in SHAPES}
    for record in records:
        (start, end), = record["request_spans"]
        assert record["prompt"][start:end] == record["task_description"] == request_of(record)
        assert record["split"] == ("validation" if record["family"] in HELD_OUT_INSTRUCTION_FAMILIES else "train")
        if record["shape"] == "question_first":
            assert start == 0
        if record["shape"] == "few_shot":  # the worked example comes first; the span is the real request after it
            assert "Answer:" in record["prompt"][:start]
    texts = {r["family"]: request_of(r) for r in records}
    assert "?" not in texts["imperative"] and "Details:" in texts["highlight_details"]
    assert "True or False?" in texts["numbered_true_false"] or "true or false?" in texts["numbered_true_false"].lower()
    assert texts["mcq_select"].startswith("Question ") and "\nA" in texts["mcq_select"]  # the stem with its options
    assert texts["need_then_ask"].count(".") >= 1 and texts["need_then_ask"].endswith("?")  # two sentences
    assert "?" not in texts["statement_label"] and "?" not in texts["lead_in_instruction"]


def test_records_are_deterministic_and_refuse_unknown_families():
    rows = _rows(12)
    first = instruction_records(rows, rows, seed=5, families=("imperative",), prefix="t")
    assert first == instruction_records(rows, rows, seed=5, families=("imperative",), prefix="t")
    assert first != instruction_records(rows, rows, seed=6, families=("imperative",), prefix="t")
    with pytest.raises(ValueError, match="unknown families"):
        instruction_records(rows, rows, seed=5, families=("nope",), prefix="t")
    kv = [{**rows[0], "question": 'Key: "ab12"'}]
    assert instruction_records(kv, rows, seed=5, families=("imperative",), prefix="t") == []


def test_prompts_without_a_request_have_no_span_in_every_shape_but_few_shot():
    documents = [(f"d{k}", f"Document {k} says a lot about topic {k}.") for k in range(12)]
    records = no_request_records(documents, seed=1, prefix="n")
    assert len(records) == 12 and all(r["request_spans"] == [] for r in records)
    assert {r["shape"] for r in records} == set(SHAPES) - {"few_shot"}
    assert {r["family"] for r in records} == {"no_request_bare", "no_request_summary", "no_request_label"}
    only = no_request_records(documents, seed=1, prefix="n", families=("label",))
    assert {r["family"] for r in only} == {"no_request_label"}
    with pytest.raises(ValueError, match="families"):
        no_request_records(documents, seed=1, prefix="n", families=("question",))
    assert all(f"Document {r['source_id'][1:]} says" in r["prompt"] for r in records)


@pytest.mark.skipif(not (DATA / "nq_train.jsonl.gz").is_file(), reason="needs ../shared/data")
def test_the_builder_uses_train_rows_only_and_keeps_fit_and_check_rows_apart(tmp_path):
    import sysconfig

    from training.curation.format_tasks import load_format_inputs, text_pools
    from training.curation.formats import build_records, write_dataset
    from training.curation.instruction_set import TRAIN_FAMILIES, build_instruction_set

    inputs = load_format_inputs(DATA / "nq_train.jsonl.gz", DATA / "qa_dev.jsonl")
    ctd = build_records(inputs, text_pools(inputs, sysconfig.get_paths()["stdlib"]), seed=13, max_per_kind=60)
    write_dataset(ctd, tmp_path / "ctd")
    records = build_instruction_set(str(tmp_path / "ctd" / "ctd.jsonl"), str(DATA / "nq_train.jsonl.gz"),
                                    str(DATA / "qa_dev.jsonl"), str(DATA / "summ_train.jsonl.gz"), seed=13,
                                    fit_rows=40, check_rows=40, fit_without=8, check_without=8, second_fit_rows=16,
                                    second_check_rows=16, extra_without=6)
    fit = [r for r in records if r["role"] == "fit"]
    check = [r for r in records if r["role"] == "check"]
    assert {r["family"] for r in fit if r["request_spans"]} <= set(TRAIN_FAMILIES)
    assert not {r["family"] for r in fit} & HELD_OUT_INSTRUCTION_FAMILIES
    assert HELD_OUT_INSTRUCTION_FAMILIES <= {r["family"] for r in check}
    fit_rows = {r["source_id"] for r in fit}
    assert not fit_rows & {r["source_id"] for r in check}
    qa_rows = [json.loads(line) for line in (DATA / "qa_dev.jsonl").open()]
    dev_ids = {row["id"] for row in qa_rows if row["split"] != "train"}
    assert not dev_ids & {r["source_id"] for r in records}
    held_ctd = {r["source_id"] for r in ctd if r["split"] == "validation"}
    assert not held_ctd & {r["source_id"] for r in records}


@pytest.mark.skipif(not (DATA / "nq_train.jsonl.gz").is_file(), reason="needs ../shared/data")
def test_the_layout_set_fits_on_seen_layouts_only_and_never_uses_excluded_or_instruction_rows(tmp_path):
    import sysconfig

    from synthesis.layouts import HELD_OUT_LAYOUTS, LAYOUTS, SEEN_LAYOUTS
    from training.curation.format_tasks import load_format_inputs, text_pools
    from training.curation.formats import build_records, write_dataset
    from training.curation.instruction_set import build_instruction_set
    from training.curation.layout_set import build_layout_set

    inputs = load_format_inputs(DATA / "nq_train.jsonl.gz", DATA / "qa_dev.jsonl")
    ctd = build_records(inputs, text_pools(inputs, sysconfig.get_paths()["stdlib"]), seed=13, max_per_kind=60)
    write_dataset(ctd, tmp_path / "ctd")
    paths = (str(tmp_path / "ctd" / "ctd.jsonl"), str(DATA / "nq_train.jsonl.gz"), str(DATA / "qa_dev.jsonl"),
             str(DATA / "summ_train.jsonl.gz"))
    instruction = build_instruction_set(*paths, seed=13, fit_rows=20, check_rows=20, fit_without=4, check_without=4)
    excluded = [r["source_id"] for r in instruction[:3]]
    records = build_layout_set(*paths, seed=13, skip=40, fit_rows=2 * len(SEEN_LAYOUTS), check_rows=len(LAYOUTS),
                               fit_without=len(SEEN_LAYOUTS), check_without=len(LAYOUTS), exclude=["x", *excluded])
    fit = [r for r in records if r["role"] == "fit"]
    check = [r for r in records if r["role"] == "check"]
    assert {r["shape"] for r in fit} == set(SEEN_LAYOUTS)
    assert {r["shape"] for r in check} == set(LAYOUTS)
    assert all(r["split"] == ("validation" if r["shape"] in HELD_OUT_LAYOUTS else "train") for r in records)
    rows = {r["source_id"] for r in records if r["request_spans"]}
    assert not rows & {r["source_id"] for r in instruction}  # after the instruction set's rows
    assert len(rows) == len([r for r in records if r["request_spans"]])  # one record per row
    for record in records:
        if record["request_spans"]:
            (start, end), = record["request_spans"]
            assert record["prompt"][start:end] in (record["task_description"],
                                                   json.dumps(record["task_description"], ensure_ascii=False)[1:-1])
        else:
            assert record["family"].startswith("no_request_")
