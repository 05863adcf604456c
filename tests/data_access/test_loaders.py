"""Loaders on small fixture files written in the official schemas; templates; missing-file messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data_access.loaders import DataNotFoundError, load_longbench, load_qa_dev, load_summ_dev, load_zeroscrolls
from synthesis.templates import DATASET2PROMPT, fill_template, instruction_query


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_longbench_official_schema(tmp_path: Path) -> None:
    row = {"input": "Who wrote it?", "context": "Passage 1:\nIt was written by Ann {braces}.", "answers": ["Ann"],
           "length": 9, "dataset": "hotpotqa", "language": "en", "all_classes": None, "_id": "abc"}  # fmt: skip
    trec = {"input": "What is X?", "context": "Q: a\nType: City", "answers": ["City"], "length": 3,
            "dataset": "trec", "language": "en", "all_classes": ["City", "Other"], "_id": "t1"}  # fmt: skip
    _write_jsonl(tmp_path / "hotpotqa.jsonl", [row])
    _write_jsonl(tmp_path / "longbench" / "trec.jsonl", [trec])
    hotpot, few_shot = load_longbench(["hotpotqa", "trec"], tmp_path)
    assert (hotpot.id, hotpot.metric, hotpot.max_new_tokens, hotpot.answers) == ("abc", "qa_f1", 32, ("Ann",))
    assert few_shot.all_classes == ("City", "Other") and few_shot.metric == "classification"
    prompt = fill_template(hotpot.template, hotpot.context, hotpot.question)
    assert prompt.startswith("Answer the question based on the given passages.")
    assert "It was written by Ann {braces}." in prompt  # document braces stay literal
    assert prompt.endswith("Question: Who wrote it?\nAnswer:")


def test_instruction_query_falls_back_to_the_task_instruction() -> None:
    assert instruction_query(DATASET2PROMPT["hotpotqa"], " Who? ") == "Who?"
    query = instruction_query(DATASET2PROMPT["gov_report"], "")
    assert query == "You are given a report by a government agency. Write a one-page summary of the report. " \
                    "Report: Now, write a one-page summary of the report. Summary:"  # fmt: skip


def test_zeroscrolls_official_schema_splits_document_and_query(tmp_path: Path) -> None:
    head = "Read the story.\n\nStory:\n"
    document = "Tom met Ann. They left."
    middle = "\n\nQuestion:\n"
    query = "Who met Ann?"
    text = head + document + middle + query + "\n\nAnswer:"
    row = {"id": "z1", "pid": "p1", "input": text, "output": "Tom",
           "document_start_index": len(head), "document_end_index": len(head) + len(document),
           "query_start_index": len(head + document + middle), "query_end_index": len(head + document + middle + query),
           "truncation_seperator": "... [The rest of the story is omitted]\n\n"}  # fmt: skip
    _write_jsonl(tmp_path / "narrative_qa" / "validation.jsonl", [row])
    (sample,) = load_zeroscrolls(["narrative_qa"], tmp_path)
    assert sample.context == document and sample.question == query and sample.answers == ("Tom",)
    assert fill_template(sample.template, sample.context, sample.question) == text
    assert fill_template(sample.template, "Tom met Ann.", sample.question) == text.replace(" They left.", "")


def test_qa_dev_schema_keeps_split_and_detects_multiple_choice(tmp_path: Path) -> None:
    base = {"context": "C.", "supporting_sentences": ["C."], "task_type": "single_doc_qa"}
    rows = [
        {**base, "id": "1", "source": "BAMBOO/paperqa_4k (RUCAIBox/BAMBOO)", "question": "Q?\nA. x\nB. y",
         "answers": ["A"], "split": "dev", "meta": {"options": ["A. x", "B. y"]}},
        {**base, "id": "2", "source": "nq", "question": "Q?", "answers": ["C"], "split": "train", "meta": {}},
    ]  # fmt: skip
    path = _write_jsonl(tmp_path / "qa_dev.jsonl", rows)
    (sample,) = load_qa_dev(path)
    assert (sample.id, sample.source, sample.metric) == ("1", "paperqa_4k", "mc_accuracy")
    assert sample.supporting_sentences == ("C.",)
    assert len(load_qa_dev(tmp_path, split=None)) == 2  # a directory holding qa_dev.jsonl works too


SUMM_ROW = {
    "id": "longbench-multi_news-abc", "source": "LongBench/multi_news (Zefan-Cai/PyramidKV @ 5d4e2e1)",
    "context": "Passage 1:\nA rock shelter was found.\n\nPassage 2:\nIt is {49,000} years old.", "question": None,
    "answers": ["A 49,000-year-old rock shelter was found."], "supporting_sentences": [],
    "task_type": "summarization", "split": "dev", "meta": {"context_words": 12},
}  # fmt: skip


def test_summ_dev_schema_multi_news_template_and_empty_question(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    path = _write_jsonl(tmp_path / "summ_dev.jsonl", [SUMM_ROW, {**SUMM_ROW, "id": "second"}])
    first, second = load_summ_dev(path)
    assert (first.id, first.dataset, first.source, first.question) == (SUMM_ROW["id"], "multi_news", "multi_news", "")
    assert first.answers == ("A 49,000-year-old rock shelter was found.",) and second.id == "second"
    assert (first.template, first.metric, first.max_new_tokens) == (DATASET2PROMPT["multi_news"], "rouge_l", 512)
    assert first.meta["task_type"] == "summarization" and first.meta["context_words"] == 12
    prompt = fill_template(first.template, first.context, first.question)
    assert prompt.startswith("You are given several news passages.") and prompt.endswith("\n\nSummary:")
    assert "It is {49,000} years old." in prompt  # document braces stay literal
    assert [s.id for s in load_summ_dev(tmp_path)] == [SUMM_ROW["id"], "second"]  # a directory works too
    monkeypatch.setenv("TPC_SUMM_DEV", str(path))
    assert len(load_summ_dev()) == 2  # the environment variable is the default path


def test_summ_dev_rejects_rows_without_a_reference(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no reference summary"):
        load_summ_dev(_write_jsonl(tmp_path / "summ_dev.jsonl", [{**SUMM_ROW, "answers": []}]))
    with pytest.raises(ValueError, match="lacks fields"):
        load_summ_dev(_write_jsonl(tmp_path / "bad.jsonl", [{"id": "x", "context": "C."}]))


@pytest.mark.parametrize(
    ("load", "hint"),
    [
        (lambda d: load_longbench(["qasper"], d), "qasper.jsonl"),
        (lambda d: load_zeroscrolls(["quality"], d), "quality/validation.jsonl"),
        (lambda d: load_qa_dev(d / "nowhere.jsonl"), "TPC_QA_DEV"),
        (lambda d: load_summ_dev(d / "nowhere.jsonl"), "TPC_SUMM_DEV"),
        (lambda d: load_summ_dev(d), "summ_dev.jsonl"),
    ],
)
def test_missing_files_say_where_to_put_them(tmp_path: Path, load, hint: str) -> None:
    with pytest.raises(DataNotFoundError) as caught:
        load(tmp_path)
    assert "--data-dir" in str(caught.value) and hint in str(caught.value)


def test_malformed_line_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "lcc.jsonl").write_text('{"input": ""}\nnot json\n')
    with pytest.raises(ValueError, match=r"lcc.jsonl:2"):
        load_longbench(["lcc"], tmp_path)
