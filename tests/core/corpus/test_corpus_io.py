"""tpc compress-corpus without a model: formats, validation, row ids and resuming (all checked before any load)."""

from __future__ import annotations

import json
import logging
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tpc_core.corpus.io import (
    MANIFEST_NAME,
    CorpusInputError,
    CorpusSettings,
    done_ids,
    input_files,
    pending_mask,
    plan_corpus,
    write_manifest,
)

ROWS = [{"id": f"doc-{i}", "text": f"Sentence {i}. Another sentence.", "lang": "en"} for i in range(5)]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def settings(**changes):
    return CorpusSettings(**{"model": "tpc-mini", "rate": 0.5, **changes})


def test_formats_and_directories(tmp_path):
    jsonl = write_jsonl(tmp_path / "a.jsonl", ROWS)
    assert input_files(jsonl) == ((jsonl,), "jsonl")
    shards = tmp_path / "shards"
    shards.mkdir()
    for k in range(2):
        pq.write_table(pa.Table.from_pylist(ROWS[k::2]), shards / f"part-{k}.parquet")
    (shards / "_SUCCESS").write_text("")
    files, file_format = input_files(shards)
    assert file_format == "parquet" and [p.name for p in files] == ["part-0.parquet", "part-1.parquet"]
    plan = plan_corpus(shards, tmp_path / "out", settings())
    assert plan.total_rows == 5 and plan.pending_rows == 5
    write_jsonl(shards / "c.jsonl", ROWS)
    with pytest.raises(CorpusInputError, match="mixes JSONL and Parquet"):
        input_files(shards)
    (tmp_path / "doc.csv").write_text("id,text\n")
    with pytest.raises(CorpusInputError, match="unknown format"):
        input_files(tmp_path / "doc.csv")
    with pytest.raises(CorpusInputError, match="no such file"):
        input_files(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(("rows", "options", "message"), [
    (ROWS, {"text_column": "body"}, "no text column 'body'"),
    ([{**r, "text": 3} for r in ROWS], {}, "holds int64, not text"),
    ([{**r, "text": None} if i == 2 else r for i, r in enumerate(ROWS)], {}, "row 2 of IN has no 'text'"),
    ([{**r, "id": "same"} for r in ROWS], {}, "id 'same' occurs more than once"),
    ([{**r, "id": None} if i == 1 else r for i, r in enumerate(ROWS)], {}, "row 1 of IN has no 'id'"),
    ([{**r, "compressed_text": ""} for r in ROWS], {}, "already has column"),
    (ROWS, {"rate": 1.5}, "(0, 1]"),
    (ROWS, {"rate": 0.2, "target_tokens": 10}, "not both"),
])
def test_bad_input_is_refused_with_a_reason(tmp_path, rows, options, message):
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    with pytest.raises(CorpusInputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        plan_corpus(source, tmp_path / "out", settings(**options))


def test_ids_default_to_row_numbers_unless_named(tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", [{k: v for k, v in r.items() if k != "id"} for r in ROWS])
    plan = plan_corpus(source, tmp_path / "out", settings(), explicit_id=False)
    assert plan.settings.id_column is None and plan.settings.id_field == "row"
    with pytest.raises(CorpusInputError, match="no id column 'id'"):
        plan_corpus(source, tmp_path / "out", settings(), explicit_id=True)
    with_row = write_jsonl(tmp_path / "row.jsonl", [{"row": i, "text": r["text"]} for i, r in enumerate(ROWS)])
    with pytest.raises(CorpusInputError, match="--id-column row"):
        plan_corpus(with_row, tmp_path / "out", settings(), explicit_id=False)


def _out_with(tmp_path, ids, chosen=None):
    out = tmp_path / "out"
    write_manifest(out, chosen or settings())
    table = pa.Table.from_pylist([{**r, "compressed_text": "x"} for r in ROWS if r["id"] in ids])
    pq.write_table(table, out / "part-a.parquet")
    return out


def test_resume_skips_rows_in_out_and_refuses_other_settings(tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", ROWS)
    out = _out_with(tmp_path, {"doc-0", "doc-3"})
    plan = plan_corpus(source, out, settings())
    assert plan.done == {"doc-0", "doc-3"} and plan.pending_rows == 3
    assert pending_mask([r["id"] for r in ROWS], plan.done) == [False, True, True, False, True]
    with pytest.raises(CorpusInputError, match="rate: now 0.3, OUT 0.5"):
        plan_corpus(source, out, settings(rate=0.3))
    with pytest.raises(CorpusInputError, match="does not have"):
        plan_corpus(write_jsonl(tmp_path / "other.jsonl", ROWS[1:]), out, settings())
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(CorpusInputError, match=f"no {MANIFEST_NAME}"):
        plan_corpus(source, foreign, settings())
    with pytest.raises(CorpusInputError, match="not a directory"):
        plan_corpus(source, foreign / "notes.txt", settings())


def test_a_truncated_part_is_removed_and_its_rows_redone(tmp_path, caplog):
    out = _out_with(tmp_path, {"doc-1"})
    whole = pa.Table.from_pylist([{**ROWS[2], "compressed_text": "x"}])
    pq.write_table(whole, out / "part-b.parquet")
    data = (out / "part-b.parquet").read_bytes()
    (out / "part-b.parquet").write_bytes(data[: len(data) // 2])  # a run killed while writing
    with caplog.at_level(logging.WARNING, logger="tpc_core.corpus.io"):
        assert done_ids(out, "id") == {"doc-1"}
    assert not (out / "part-b.parquet").exists() and "incomplete part file" in caplog.text


def test_cli_input_errors_exit_2_before_any_model_loads(tmp_path, monkeypatch, capsys):
    from tpc_core import cli

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the input was checked")

    monkeypatch.setattr("tpc_core.compressor.TPCCompressor.from_pretrained", no_model)
    source = write_jsonl(tmp_path / "in.jsonl", ROWS)
    out = str(tmp_path / "out")
    cases = {(str(tmp_path / "missing.jsonl"), out): "no such file",
             (str(source), out, "--text-column", "body"): "no text column",
             (str(source), out, "--id-column", "key"): "no id column 'key'",
             (str(source), out, "--rate", "0"): "(0, 1]",
             (str(source), out, "--batch-size", "0"): "batch_size must be a positive integer"}
    for args, message in cases.items():
        assert cli.main(["compress-corpus", *args]) == 2, args
        assert message in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert cli.main(["compress-corpus", str(source), out, "--engine", "ray"]) == 2
    assert "pip install 'tpc-langchain[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def _without_describe_bare(out):
    """OUT as a run before ``describe_bare`` existed left it: its manifest does not name the setting."""
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    del manifest["settings"]["describe_bare"]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest), encoding="utf-8")
    return out


def test_an_out_written_before_describe_bare_existed_resumes_only_with_the_ctd_on(tmp_path):
    """OUT manifests older than ``describe_bare`` were written with the CTD describing bare rows."""
    source = write_jsonl(tmp_path / "in.jsonl", ROWS)
    out = _without_describe_bare(_out_with(tmp_path, {"doc-0"}))
    with pytest.raises(CorpusInputError, match="describe_bare: now False, OUT True"):
        plan_corpus(source, out, settings())
    assert plan_corpus(source, out, settings(describe_bare=True)).done == {"doc-0"}
    # With one description for every row the CTD never runs, so the setting decides nothing.
    (tmp_path / "fixed").mkdir()
    fixed = _without_describe_bare(_out_with(tmp_path / "fixed", {"doc-1"}, settings(task_description="What?")))
    assert plan_corpus(source, fixed, settings(task_description="What?")).done == {"doc-1"}


def test_describe_bare_and_threads_are_checked_before_any_model_loads(tmp_path, monkeypatch, capsys):
    from tpc_core import cli
    from tpc_core.corpus.local import compress_corpus

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the options were checked")

    monkeypatch.setattr("tpc_core.compressor.TPCCompressor.from_pretrained", no_model)
    source = write_jsonl(tmp_path / "in.jsonl", ROWS)
    with pytest.raises(CorpusInputError, match="describe_bare must be True or False"):
        plan_corpus(source, tmp_path / "out", settings(describe_bare="yes"))
    for threads in (0, -2, 1.5, True, "2"):
        with pytest.raises(CorpusInputError, match="threads must be a positive integer"):
            compress_corpus(source, tmp_path / "out", settings(), threads=threads)
    for value in ("0", "two", "-1"):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["compress-corpus", str(source), str(tmp_path / "out"), "--threads", value])
        assert exit_info.value.code == 2
        assert f"--threads: must be a positive integer, got {value!r}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_torch_threads_applies_a_count_inside_its_block_and_restores_it():
    import torch

    from tpc_core.corpus.table import torch_threads

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
