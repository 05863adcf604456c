"""The summarisation suite: prompt-agnostic baselines, ROUGE recall records, the CLI path, several TPC models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.run import main, parse_args
from data_access.loaders import Sample, load_summ_dev
from evaluation.budget import minilm_token_counter
from evaluation.cache import JsonCache
from evaluation.evaluate import evaluate
from evaluation.methods.base import AGNOSTIC, Compressed, Method, split_spans
from evaluation.methods.registry import build_method, method_specs, tpc_model_labels
from evaluation.methods.tpc import TPCMethod, _checkpoint_fingerprint
from evaluation.summ import evaluate_summ, evenly_spaced, score_summary_record
from synthesis.templates import DATASET2PROMPT, fill_template
from tpc_core.engine.scoring.lead import passage_layout

PROMPT = """Summarise the news below. Keep it short.

News:
Passage 1:
Alpha rose early today. Alpha ate bread. Alpha slept late.

Passage 2:
Beta sold the old house. Beta moved away.

Passage 3:
Gamma won the race. Gamma cheered loudly. Gamma went home.

Now, write a summary."""


class _WordCounter:
    """Whitespace words: makes hand-computed budgets exact."""

    def __call__(self, text: str) -> int:
        return len(text.split())

    def many(self, texts: list[str]) -> list[int]:
        return [self(text) for text in texts]


def _lead_per_passage(text: str, budget: int) -> str:
    return build_method("lead-per-passage", _WordCounter()).compress(text, None, budget).text  # type: ignore[arg-type]


def test_passages_follow_markers_and_else_blank_lines() -> None:
    marked = "Intro.\n\nPassage 1:\nA.\n\nPassage 2:\nB."
    spans = [(0, 6), (8, 18), (19, 21), (23, 33), (34, 36)]
    assert passage_layout([marked], [spans]).passage == (None, None, 0, None, 1)  # intro and bare markers: none
    plain = "First.\n\nSecond.\n \nThird.\n\n"
    assert passage_layout([plain], [[(0, 6), (8, 15), (18, 24)]]).passage == (0, 1, 2)


def test_lead_per_passage_takes_leads_round_robin_in_original_order() -> None:
    # words: A1 4, A2 3, A3 3 | B1 5, B2 3 | G1 4, G2 3, G3 3, "Now, write a summary." 4
    # round 1 = A1 B1 G1 (13 words); round 2 adds A2 (16) and B2 (19); G2 would make 22 > 19.
    assert _lead_per_passage(PROMPT, 19) == (
        "Alpha rose early today. Alpha ate bread.\nBeta sold the old house. Beta moved away.\nGamma won the race."
    )
    # Shared greedy rule: a lead that no longer fits is skipped, a later shorter sentence may still be taken.
    assert _lead_per_passage(PROMPT, 3) == "Alpha ate bread."
    # Everything fits: never the instruction before Passage 1 nor the bare "Passage k:" lines; the closing
    # instruction after the last passage belongs to that passage (its 4th sentence).
    everything = _lead_per_passage(PROMPT, 1000)
    assert "Summarise" not in everything and "News:" not in everything and "Passage" not in everything
    assert everything.endswith("Gamma went home.\nNow, write a summary.")


def test_lead_per_passage_document_markers_and_blocks_without_markers() -> None:
    documents = "Document [1] (Title: Rivers) The Nile is long. It flows north.\n" \
                "Document [2] (Title: Peaks) Everest is high. It is in Nepal."  # fmt: skip
    assert _lead_per_passage(documents, 16) == (  # two 8-word leads
        "Document [1] (Title: Rivers) The Nile is long.\nDocument [2] (Title: Peaks) Everest is high."
    )
    blocks = "Intro line here.\n\nFirst block one. First block two.\n\nSecond block one. Second block two."
    assert _lead_per_passage(blocks, 9) == "Intro line here.\nFirst block one.\nSecond block one."


def _is_subsequence(part: list[str], whole: list[str]) -> bool:
    remaining = iter(whole)
    return all(any(item == candidate for candidate in remaining) for item in part)


@pytest.mark.parametrize("name", ["lead-per-passage", "minilm-centroid"])
def test_new_baselines_are_verbatim_in_order_and_within_budget(name: str) -> None:
    counter = minilm_token_counter()
    method = build_method(name, counter)
    assert AGNOSTIC in method.settings and method.unavailable_reason() is None
    original = [PROMPT[a:b] for a, b in split_spans(PROMPT)]
    for budget in (5, 12, 20, 35, 60):
        text = method.compress(PROMPT, None, budget, sample_id="p").text
        kept = [text[a:b] for a, b in split_spans(text)]
        assert counter(text) <= budget and _is_subsequence(kept, original), (name, budget, text)


def test_minilm_centroid_ranks_the_off_topic_sentence_last() -> None:
    counter = minilm_token_counter()
    sentences = ["The Nile is the longest river in Africa.", "The river Nile flows north into the Mediterranean.",
                 "Bananas are rich in potassium.", "The Nile delta is fertile farmland.",
                 "Ancient Egypt grew along the banks of the Nile river."]  # fmt: skip
    scores = build_method("minilm-centroid", counter).scores(sentences, None, "s")
    assert min(range(len(scores)), key=scores.__getitem__) == 2
    text = " ".join(sentences)
    budget = counter(text) - counter(sentences[2])
    assert build_method("minilm-centroid", counter).compress(text, None, budget).text == " ".join(
        sentence for sentence in sentences if not sentence.startswith("Bananas")
    )


def test_evenly_spaced() -> None:
    assert evenly_spaced(list(range(100)), 3) == [0, 33, 66]
    assert evenly_spaced([1, 2], 5) == [1, 2] and evenly_spaced([1, 2], None) == [1, 2]
    with pytest.raises(ValueError):
        evenly_spaced([1, 2, 3], 0)


def test_score_summary_record_adds_recall_and_the_task_description() -> None:
    record = {"method": "tpc-mini", "prompt": "the cat sat", "evidence_recall": None, "answer_retention": None,
              "info": {"task_description": "Summarise the news."}}  # fmt: skip
    scored = score_summary_record(record, "the cat is here")
    assert scored["rouge1_recall"] == pytest.approx(2 / 4) and scored["rouge2_recall"] == pytest.approx(1 / 3)
    assert scored["task_description"] == "Summarise the news." and "prompt" not in scored
    assert "evidence_recall" not in scored
    failed = score_summary_record({"method": "m", "error": "RuntimeError: boom"}, "the cat")
    assert "rouge1_recall" not in failed


def _summ_sample(index: int) -> Sample:
    context = (f"Passage 1:\nStory {index} begins here. It goes on.\n\n"
               f"Passage 2:\nAnother view of story {index}. It ends.")  # fmt: skip
    return Sample(id=f"m{index}", dataset="multi_news", source="multi_news", context=context, question="",
                  answers=(f"Story {index} begins here and ends.",), template=DATASET2PROMPT["multi_news"],
                  metric="rouge_l", max_new_tokens=512)  # fmt: skip


class _Describing(Method):
    """Keeps the first sentence and reports a task description, like TPC's agnostic path."""

    name = "describing"

    def warm_up(self) -> None:
        pass

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        assert question is None  # prompt-agnostic: no question ever reaches the method
        start, end = split_spans(text)[4]  # the first sentence of passage 1
        return Compressed(text[start:end], {"task_description": "Summarise all the news."})


def test_evaluate_summ_budgets_the_filled_prompt_and_records_descriptions() -> None:
    counter = minilm_token_counter()
    samples = [_summ_sample(0)]
    methods = {"describing": _Describing(counter), "lead": build_method("lead", counter)}
    records, skipped = evaluate_summ(samples, methods, counter, rate=0.5)
    assert skipped == {}
    by_method = {record["method"]: record for record in records}
    filled = fill_template(samples[0].template, samples[0].context, "")
    assert {record["budget"] for record in records} == {counter(filled) // 2}
    assert by_method["describing"]["task_description"] == "Summarise all the news."
    assert by_method["describing"]["rouge1_recall"] == pytest.approx(4 / 6)  # story 0 begins here / 6 words
    with pytest.raises(ValueError, match="need a question"):
        evaluate_summ(samples, {"bm25": build_method("bm25", counter)}, counter, rate=0.5)


def test_cached_records_take_the_label_of_the_row_that_asks(tmp_path: Path) -> None:
    counter, cache = minilm_token_counter(), JsonCache(tmp_path / "c.sqlite")

    class Renamed(_Describing):
        def identity(self) -> str:
            return "same-weights"

    first, second = Renamed(counter), Renamed(counter)
    first.name, second.name = "tpc:a", "tpc:b"
    evaluate([_summ_sample(1)], {"tpc:a": first}, counter, rate=0.5, settings=("agnostic",), cache=cache)
    records, _ = evaluate([_summ_sample(1)], {"tpc:b": second}, counter, rate=0.5, settings=("agnostic",), cache=cache)
    assert cache.hits == 1 and records[0]["method"] == "tpc:b"


def _write_summ_jsonl(path: Path, count: int) -> Path:
    rows = [{"id": f"longbench-multi_news-{i}", "source": "LongBench/multi_news (Zefan-Cai/PyramidKV @ 5d4e2e1)",
             "context": _summ_sample(i).context, "question": None, "answers": [_summ_sample(i).answers[0]],
             "supporting_sentences": [], "task_type": "summarization", "split": "dev", "meta": {"context_words": 20}}
            for i in range(count)]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_summ_suite_end_to_end_with_the_cheap_baselines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_summ_jsonl(tmp_path / "data" / "summ_dev.jsonl", 3)
    out = tmp_path / "out"
    code = main(["--suite", "summ", "--data-dir", str(tmp_path / "data"), "--max-samples", "2", "--no-cache",
                 "--methods", "lead,lead-per-passage,random,minilm-centroid,full", "--out", str(out)])  # fmt: skip
    assert code == 0
    payload = json.loads((out / "summ.json").read_text())
    assert payload["samples"] == 2 and payload["sample_ids"] == ["longbench-multi_news-0", "longbench-multi_news-1"]
    assert payload["methods"] == ["lead", "lead-per-passage", "random", "minilm-centroid", "full"]
    assert len(payload["records"]) == 10 and all("rouge2_recall" in record for record in payload["records"])
    for method, row in payload["summary"].items():
        assert row["over_budget"] == 0 and 0 <= row["rouge2_recall"] <= row["rouge1_recall"] <= 1, method
    assert payload["summary"]["full"]["rouge1_recall"] == pytest.approx(5 / 6)  # all reference words but "and"
    table = (out / "summ.md").read_text()
    assert "| Method | ROUGE-1 recall | ROUGE-2 recall | Tokens | Budget | Over budget | 1/τ | s/prompt |" in table
    assert "| lead-per-passage |" in table and table in capsys.readouterr().out
    assert (out / "summ_rouge.png").stat().st_size > 0


def test_summ_suite_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--suite", "summ", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o"), "--no-cache"]) == 2
    assert "TPC_SUMM_DEV" in capsys.readouterr().err


def test_tpc_model_flag_is_repeatable_and_takes_comma_lists() -> None:
    assert parse_args([]).tpc_models == ["tpc-mini"]
    assert parse_args(["--tpc-model", "/runs/ckpt"]).tpc_models == ["/runs/ckpt"]  # the old single-name form
    args = parse_args(["--tpc-model", "tpc-mini,/runs/a/ckpt", "--tpc-model", "/runs/b/ckpt",
                       "--tpc-model", "tpc-mini"])  # fmt: skip
    assert args.tpc_models == ["tpc-mini", "/runs/a/ckpt", "/runs/b/ckpt"]
    assert tpc_model_labels(args.tpc_models) == {"tpc-mini": "tpc-mini", "/runs/a/ckpt": "tpc:a/ckpt",
                                                 "/runs/b/ckpt": "tpc:b/ckpt"}  # fmt: skip
    assert tpc_model_labels(["/runs/ckpt/", "org/tpc-x"]) == {"/runs/ckpt/": "tpc:ckpt", "org/tpc-x": "tpc:tpc-x"}
    with pytest.raises(SystemExit):
        parse_args(["--suite", "summ", "--methods", "lead,bm25"])  # bm25 needs a question


def test_method_specs_one_row_per_tpc_model() -> None:
    single = method_specs(["tpc-aware", "lead", "tpc-agnostic"], ["tpc-mini"])
    assert [spec.label for spec in single] == ["tpc-aware", "lead", "tpc-agnostic"]  # unchanged with one model
    several = method_specs(["tpc-aware", "lead"], ["tpc-mini", "/r/ckpt"])
    assert [(s.label, s.name, s.tpc_model) for s in several if s.name == "tpc-aware"] == [
        ("tpc-aware[tpc-mini]", "tpc-aware", "tpc-mini"), ("tpc-aware[tpc:ckpt]", "tpc-aware", "/r/ckpt")]  # fmt: skip
    by_model = method_specs(["tpc-agnostic", "lead"], ["tpc-mini", "/r/ckpt"], label_tpc_by_model=True)
    assert [spec.label for spec in by_model] == ["tpc-mini", "tpc:ckpt", "lead"]
    with pytest.raises(ValueError, match="labelled"):
        method_specs(["tpc-aware", "tpc-agnostic"], ["tpc-mini"], label_tpc_by_model=True)
    method = build_method("tpc-agnostic", minilm_token_counter(), tpc_model="/r/ckpt", label="tpc:ckpt")
    assert isinstance(method, TPCMethod)
    assert (method.name, method.kind, method.model) == ("tpc:ckpt", "tpc-agnostic", "/r/ckpt")


def test_checkpoint_fingerprint_follows_the_files(tmp_path: Path) -> None:
    assert _checkpoint_fingerprint("tpc-mini") == ""
    (tmp_path / "weights.bin").write_bytes(b"a")
    before = _checkpoint_fingerprint(str(tmp_path))
    (tmp_path / "weights.bin").write_bytes(b"ab")
    assert before.startswith(":ckpt=") and _checkpoint_fingerprint(str(tmp_path)) != before


def test_summ_suite_runs_several_tpc_checkpoints(tiny_checkpoint: Path, tmp_path: Path) -> None:
    """Two TPC rows through the public API on the tiny random checkpoint (no tpc-mini load)."""
    _write_summ_jsonl(tmp_path / "summ_dev.jsonl", 2)
    other = tmp_path / "other"
    other.symlink_to(tiny_checkpoint, target_is_directory=True)
    out = tmp_path / "out"
    code = main(["--suite", "summ", "--data-dir", str(tmp_path), "--max-samples", "1", "--no-cache",
                 "--methods", "tpc-agnostic,lead", "--tpc-model", f"{tiny_checkpoint},{other}", "--device", "cpu",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    payload = json.loads((out / "summ.json").read_text())
    labels = [f"tpc:{tiny_checkpoint.name}", "tpc:other"]
    assert payload["methods"] == [*labels, "lead"] and payload["skipped"] == {}
    assert payload["tpc_models"] == {str(tiny_checkpoint): labels[0], str(other): labels[1]}
    for record in payload["records"]:
        # within the budget, or over it only by the written request, which prompt-agnostic TPC always keeps (this
        # tiny prompt's "Write a one-page summary ..." lines alone exceed an 11-token budget)
        assert "error" not in record, record
        over_by_request = (record.get("info") or {}).get("request_over_budget") or record.get("request_over_budget")
        assert record["compressed_tokens"] <= record["budget"] or over_by_request, record
        if record["method"] in labels:
            assert "task_description" in record  # what the CTD wrote for this prompt


@pytest.mark.shared_data
def test_loader_reads_the_real_file_when_present() -> None:
    try:
        samples = load_summ_dev()
    except FileNotFoundError:
        pytest.skip("summ_dev.jsonl is not beside this checkout")
    assert len(samples) == 100 and all(sample.question == "" and sample.answers[0] for sample in samples)
    assert {sample.dataset for sample in samples} == {"multi_news"}
