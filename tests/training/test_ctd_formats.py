"""The multi-format CTD set: template families, render(), the builder on real train data, the CLI (no model)."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import random
import re
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from training.curation.format_families import (
    FAMILIES,
    FAMILIES_BY_KIND,
    HELD_OUT_FAMILIES,
    LONGBENCH_FAMILIES,
    QA_FAMILIES,
    Template,
    render,
)
from training.curation.format_tasks import (
    KIND_SLOTS,
    KINDS,
    REQUEST_KINDS,
    TaskItem,
    few_shot_qa_item,
    load_format_inputs,
    nq_mcq_item,
    row_item,
    text_pools,
)
from training.curation.formats import build_records, main

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
NQ, QA = DATA / "nq_train.jsonl.gz", DATA / "qa_dev.jsonl"
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def needs_data(test):
    """Reads ../shared/data: skipped without it, and marked for CI's run on a clone without it (.ci/run)."""
    available = NQ.is_file() and QA.is_file()
    return pytest.mark.shared_data(pytest.mark.skipif(not available, reason="shared train data not available")(test))


_TRICKY = "Braces {context} {question} {request} {{x}} }} stay as they are."
_TOY_VALUES = {
    "context": f"Document [1] (Title: T) First sentence. {_TRICKY}",
    "question": "What is {odd}?\nA. one\nB. two",
    "key": "0f{}-key",
    "noun": "article",
    "Noun": "Article",
    "fields": "birth date, nationality",
    "field_lines": "- birth date\n- nationality",
    "field_keys": '"birth_date", "nationality"',
    "labels": "sports, {music}",
    "label_lines": "- sports\n- {music}",
    "label_quoted": '"sports", "{music}"',
    "unit": "passage",
    "path": "pkg/{mod}.py",
}
_TOY_SHOTS = {
    "few_shot_qa": ({"shot_question": "who {a}", "shot_answer": "B {b}", "shot_passage": "(Title: P) {p} text"},) * 2,
    "few_shot_classification": ({"shot_text": "when {was} it", "shot_label": "date"},) * 2,
}
_REQUEST_VALUES = {"qa": ("question",), "mcq": ("question",), "few_shot_qa": ("question",), "kv_lookup": ("key",),
                   "field_extraction": ("fields", "field_lines", "field_keys")}


def _toy_item(kind: str) -> TaskItem:
    return TaskItem(kind, {slot: _TOY_VALUES[slot] for slot in KIND_SLOTS[kind]}, "target", "toy", "toy-1",
                    _TOY_SHOTS.get(kind, ()))


# ------------------------------------------------------------------------------------------ families


@pytest.mark.parametrize(("family", "kind"), [(f, k) for f, t in FAMILIES.items() for k in sorted(t.kinds)])
def test_every_family_template_renders_with_exact_request_spans(family: str, kind: str) -> None:
    item = _toy_item(kind)
    for seed in range(4):  # several phrasing alternatives
        prompt, spans = FAMILIES[family].fill(item.values, random.Random(seed), item.shots)
        assert item.values["context"] in prompt
        leftover = prompt
        for value in sorted([*item.values.values(), *(v for s in item.shots for v in s.values())], key=len,
                            reverse=True):
            leftover = leftover.replace(value, "")
        assert not re.search(r"\{[A-Za-z_]+\}|\{\{|\}\}", leftover), leftover
        if kind in REQUEST_KINDS:
            assert spans
            for start, end in spans:
                assert any(item.values[slot] in prompt[start:end] for slot in _REQUEST_VALUES[kind])
        else:
            assert spans == []


def test_render_fills_a_qa_family_verbatim_and_spans_every_occurrence() -> None:
    question = "Which {one} is it?\nA. {x}\nB. y"
    prompt, spans = render("question_twice", _TRICKY, f"  {question}\n", rng=random.Random(0))
    assert _TRICKY in prompt
    assert len(spans) == 2 and all(prompt[s:e] == question for s, e in spans)
    for family in QA_FAMILIES:
        prompt, spans = render(family, _TRICKY, question, rng=random.Random(1))
        assert _TRICKY in prompt and spans and all(prompt[s:e] == question for s, e in spans)


def test_render_refuses_other_families_and_empty_questions() -> None:
    with pytest.raises(ValueError, match="not a QA family"):
        render("kv_chat", "ctx", "q", rng=random.Random(0))
    with pytest.raises(ValueError, match="non-empty question"):
        render("terse", "ctx", "  ", rng=random.Random(0))


def test_template_validation_catches_broken_families() -> None:
    with pytest.raises(ValueError, match="request"):
        Template("no_request", frozenset({"qa"}), "{context}", request=("{question}",))
    with pytest.raises(ValueError, match="lack"):
        Template("bad_slot", frozenset({"bare_document"}), "{context} {labels}")
    with pytest.raises(ValueError, match="mixes"):
        Template("mixed", frozenset({"qa", "bare_document"}), "{context} {request}", request=("{question}",))
    with pytest.raises(ValueError, match="shot"):
        Template("no_shots", frozenset({"few_shot_qa"}), "{context} {request}", request=("{question}",))


def test_held_out_families_are_whole_formats_and_leave_every_kind_a_train_family() -> None:
    assert HELD_OUT_FAMILIES <= set(FAMILIES) and set(LONGBENCH_FAMILIES) <= set(FAMILIES)
    assert not HELD_OUT_FAMILIES & set(LONGBENCH_FAMILIES)
    assert {"task_then_documents", "markdown_sections", "llamaindex_text_qa"} <= HELD_OUT_FAMILIES
    assert set(KINDS) == set(FAMILIES_BY_KIND)
    for kind, names in FAMILIES_BY_KIND.items():
        assert set(names) - HELD_OUT_FAMILIES, f"{kind} has no train family"
    own_qa = [f for f in QA_FAMILIES if f not in LONGBENCH_FAMILIES]
    assert len(own_qa) >= 16
    qa_share = len(HELD_OUT_FAMILIES & set(QA_FAMILIES)) / len(QA_FAMILIES)
    other = [f for f in FAMILIES if f not in QA_FAMILIES]
    other_share = len(HELD_OUT_FAMILIES & set(other)) / len(other)
    assert 0.2 <= qa_share <= 0.3 and 0.2 <= other_share <= 0.3


# ------------------------------------------------------------------------------------------ real data


@pytest.fixture(scope="module")
def small_inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The first 300 NQ rows and the whole qa_dev file (dev rows included: the loader must drop them)."""
    if not (NQ.is_file() and QA.is_file()):
        pytest.skip("shared train data not available")
    folder = tmp_path_factory.mktemp("formats_inputs")
    with gzip.open(NQ, "rt", encoding="utf-8") as handle:
        (folder / "nq.jsonl").write_text("".join(itertools.islice(handle, 300)), encoding="utf-8")
    return folder / "nq.jsonl", QA


@pytest.fixture(scope="module")
def records(small_inputs: tuple[Path, Path]) -> list[dict[str, Any]]:
    inputs = load_format_inputs(*small_inputs)
    return build_records(inputs, text_pools(inputs, STDLIB), seed=13)


@needs_data
def test_every_train_row_is_used_and_dev_rows_never(small_inputs: tuple[Path, Path],
                                                     records: list[dict[str, Any]]) -> None:
    inputs = load_format_inputs(*small_inputs)
    dev = [json.loads(line) for line in QA.read_text(encoding="utf-8").splitlines()]
    dev_ids = {row["id"] for row in dev if row["split"] != "train"}
    assert inputs.skipped["qa:split_dev"] == len(dev_ids) and inputs.skipped["qa:context_also_in_dev"] > 0
    used = {r["source_id"].split(":")[0] for r in records}
    assert {row["id"] for row in (*inputs.nq, *inputs.qa)} <= used
    assert not used & dev_ids


@needs_data
def test_request_spans_point_at_the_request_verbatim(records: list[dict[str, Any]]) -> None:
    assert {r["kind"] for r in records} == set(KINDS)
    for record in records:
        prompt, spans = record["prompt"], record["request_spans"]
        texts = [prompt[start:end] for start, end in spans]
        if record["kind"] not in REQUEST_KINDS:
            assert spans == [], record["id"]
            continue
        assert texts and len(set(texts)) == 1, record["id"]
        if record["kind"] in ("qa", "mcq", "few_shot_qa"):
            assert " ".join(texts[0].split()) == record["task_description"]
            assert prompt.count(texts[0]) == len(spans)  # every occurrence is spanned
        elif record["kind"] == "kv_lookup":
            key = re.search(r'key "([^"]+)"', record["task_description"])
            assert key and f'"{key.group(1)}"' in texts[0]
        else:
            fields = re.fullmatch(r"Extract the (.+) from the text\.", record["task_description"])
            assert fields
            for name in re.split(r", | and ", fields.group(1)):
                assert name in texts[0].replace("_", " ")


@needs_data
def test_splits_follow_families_and_questions_stay_in_one_split(records: list[dict[str, Any]]) -> None:
    splits_of_row: dict[str, set[str]] = {}
    for record in records:
        assert (record["family"] in HELD_OUT_FAMILIES) == (record["split"] == "validation")
        assert record["kind"] in FAMILIES[record["family"]].kinds
        assert list(record) == ["id", "prompt", "task_description", "source", "family", "kind", "split",
                                "request_spans", "source_id"]
        asks_row_question = record["kind"] in ("qa", "mcq", "few_shot_qa") or record["source"] == "nq_question_types"
        if asks_row_question and record["source_id"].startswith("nq-open-oracle-train"):
            splits_of_row.setdefault(record["source_id"].split(":")[0], set()).add(record["split"])
    assert {"train", "validation"} == {r["split"] for r in records}
    assert all(len(splits) == 1 for splits in splits_of_row.values())
    train_text = "\n".join(r["prompt"] for r in records if r["split"] == "train")
    held_out_questions = {r["task_description"] for r in records if r["split"] == "validation" and r["kind"] == "qa"}
    assert held_out_questions and not [q for q in held_out_questions if q in train_text]  # not even as a shot
    assert len({r["id"] for r in records}) == len(records)
    share = sum(not r["request_spans"] for r in records) / len(records)
    assert 0.3 <= share <= 0.7


@needs_data
def test_builder_is_deterministic_for_a_seed(small_inputs: tuple[Path, Path]) -> None:
    inputs = load_format_inputs(*small_inputs)
    pools = text_pools(inputs, STDLIB)
    first = build_records(inputs, pools, seed=5, max_per_kind=12)
    assert first == build_records(inputs, pools, seed=5, max_per_kind=12)
    assert first != build_records(inputs, pools, seed=6, max_per_kind=12)
    assert all(sum(r["kind"] == kind for r in first) <= 12 for kind in KINDS)


@needs_data
def test_converters_refuse_dev_rows(small_inputs: tuple[Path, Path]) -> None:
    inputs = load_format_inputs(*small_inputs)
    dev_row = {**inputs.nq[0], "split": "dev"}
    with pytest.raises(ValueError, match="only the 'train' split"):
        row_item(dev_row, random.Random(0))
    with pytest.raises(ValueError, match="only the 'train' split"):
        nq_mcq_item(dev_row, inputs.nq, random.Random(0))
    with pytest.raises(ValueError, match="only the 'train' split"):
        few_shot_qa_item(dev_row, inputs.nq, random.Random(0))


@needs_data
def test_cli_writes_records_and_stats(small_inputs: tuple[Path, Path], tmp_path: Path) -> None:
    nq, qa = small_inputs
    assert main(["--out", str(tmp_path), "--max-per-kind", "6", "--nq", str(nq), "--qa", str(qa)]) == 0
    data = (tmp_path / "ctd.jsonl").read_bytes()
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    assert stats["sha256_16"] == hashlib.sha256(data).hexdigest()[:16]
    assert stats["records"] == len(data.splitlines()) == sum(sum(v.values()) for v in stats["by_kind"].values())
    assert stats["seed"] == 13 and set(stats["by_kind"]) == set(KINDS)


# ------------------------------------------------------------------------------------------ head layouts


def test_layout_families_are_new_wrappers_not_held_out_or_probe_ones() -> None:
    from training.curation.format_families import PROBE_FAMILIES
    from training.curation.layouts import LAYOUT_FAMILIES

    assert len(LAYOUT_FAMILIES) >= 5
    assert not set(LAYOUT_FAMILIES) & (set(FAMILIES) | set(PROBE_FAMILIES))
    for template in LAYOUT_FAMILIES.values():
        prompt, spans = template.fill(_TOY_VALUES, random.Random(1))
        if "kv_lookup" in template.kinds:
            assert spans and all(_TOY_VALUES["key"] in prompt[s:e] for s, e in spans), template.name
        else:
            asks = template.kinds <= REQUEST_KINDS
            assert [prompt[s:e] for s, e in spans] == ([_TOY_VALUES["question"]] if asks else []), template.name
        assert _TOY_VALUES["context"] in prompt
        for name in HELD_OUT_FAMILIES:  # no held-out family's fixed wording (e.g. "### Question") is reused
            fixed = [part for part in re.split(r"\{[a-z_]+\}", FAMILIES[name].pattern) if len(part.strip()) > 8]
            assert not any(part in prompt for part in fixed), (template.name, name)


@needs_data
def test_layout_records_use_only_train_rows_and_span_the_question(small_inputs: tuple[Path, Path],
                                                                  records: list[dict[str, Any]]) -> None:
    from training.curation.layouts import LAYOUT_FAMILIES, layout_records, records_digest

    inputs = load_format_inputs(*small_inputs)
    train_ids = {r["source_id"] for r in records if r["split"] == "train"}
    pools = text_pools(inputs, STDLIB)
    made = layout_records(inputs, train_ids, 40, seed=3, pools=pools, without_request=10, key_lookups=4)
    assert len(made) == 54 and {r["family"] for r in made} == set(LAYOUT_FAMILIES)
    assert {r["split"] for r in made} == {"train"} and len({r["id"] for r in made}) == 54
    for record in made:
        if record["kind"] in ("summarise_one", "bare_document"):
            assert record["request_spans"] == []
            continue
        if record["kind"] == "kv_lookup":
            (start, end), = record["request_spans"]
            assert record["source_id"] == "kv:" + re.search(r'"([^"]+)"', record["prompt"][start:end]).group(1)
            continue
        assert record["source_id"] in train_ids
        (start, end), = record["request_spans"]
        assert " ".join(record["prompt"][start:end].split()) == record["task_description"]
    again = layout_records(inputs, train_ids, 40, seed=3, pools=pools, without_request=10, key_lookups=4)
    assert records_digest(again) == records_digest(made)
    assert layout_records(inputs, set(), 10) == []
    with pytest.raises(ValueError, match="must be >= 0"):
        layout_records(inputs, train_ids, -1)
    with pytest.raises(ValueError, match="text pools"):
        layout_records(inputs, train_ids, 1, without_request=1)
