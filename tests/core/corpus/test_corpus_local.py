"""tpc compress-corpus, local engine, with the real tpc-mini over a small real corpus (the bundled text)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus_helpers import BUNDLED_QUESTION, TASK, corpus_rows, read_out

import tpc_core.corpus.local as corpus
from tpc_core.corpus.io import CorpusSettings
from tpc_core.corpus.local import compress_corpus

pytestmark = pytest.mark.slow
SETTINGS = CorpusSettings(model="tpc-mini", rate=0.4, task_description=TASK)


def test_every_row_is_written_once_as_the_api_compresses_it(reference, tpc_mini):
    rows, inputs = reference["rows"], corpus_rows()
    assert [r["id"] for r in rows] == [r["id"] for r in inputs]
    assert "6 rows compressed, 0 already" in reference["stderr"]
    for row, original in zip(rows, inputs):
        assert {k: row[k] for k in original} == original  # the input row, unchanged
        expected = tpc_mini.compress(original["text"], question=TASK, rate=0.4)
        assert row["origin_tokens"] == expected.origin_tokens
        assert (row["task_description"], row["task_source"]) == (TASK, "question")
        if expected.compressed_prompt:
            assert row["compressed_text"] == expected.compressed_prompt
            assert (row["compressed_tokens"], row["compression"]) == (expected.compressed_tokens, "compressed")
        else:  # no sentence fits the budget: the row is kept whole, never emptied
            assert row["compressed_text"] == original["text"]
            assert (row["compressed_tokens"], row["compression"]) == (expected.origin_tokens, "kept_whole")
    assert {r["compression"] for r in rows} == {"compressed", "kept_whole"}  # this corpus has both
    assert sum(r["compressed_tokens"] for r in rows) < sum(r["origin_tokens"] for r in rows)


def test_an_interrupted_run_resumes_without_redoing_or_losing_a_row(reference, tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_part = corpus._write_part
    calls = []

    def interrupt_on_second_part(table, out_dir, name):
        calls.append(name)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C after the first file was written
        return write_part(table, out_dir, name)

    monkeypatch.setattr(corpus, "_write_part", interrupt_on_second_part)
    with pytest.raises(KeyboardInterrupt):
        compress_corpus(reference["source"], out, SETTINGS, batch_size=2, rows_per_file=2)
    first = sorted(out.glob("*.parquet"))
    assert len(first) == 1 and pq.read_table(first[0]).num_rows == 2
    kept_bytes = first[0].read_bytes()
    monkeypatch.setattr(corpus, "_write_part", write_part)

    report = compress_corpus(reference["source"], out, SETTINGS, batch_size=2, rows_per_file=2)
    assert (report.total_rows, report.skipped_rows, report.compressed_rows) == (6, 2, 4)
    assert first[0].read_bytes() == kept_bytes  # the rows done before the interrupt were not redone
    assert read_out(out) == reference["rows"]  # every row once, as an uninterrupted run writes it
    again = compress_corpus(reference["source"], out, SETTINGS)
    assert (again.skipped_rows, again.compressed_rows) == (6, 0)


def test_parquet_without_ids_and_the_compressors_own_task_description(tmp_path, tpc_mini):
    """No --task-description: each row is compressed prompt-agnostically and carries the compressor's own
    description (the row writes its request, a question, so the request head can take it from the text without
    a CTD generation); no id column: rows are numbered."""
    question = json.loads(BUNDLED_QUESTION.read_text(encoding="utf-8"))["question"]
    text = f"{corpus_rows()[1]['text']}\n\nQuestion: {question}"
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist([{"body": text}]), source)
    settings = CorpusSettings(model="tpc-mini", rate=0.5, text_column="body")
    report = compress_corpus(source, tmp_path / "out", settings, explicit_id=False)
    assert (report.compressed_rows, report.origin_tokens) == (1, tpc_mini.token_counter(text))
    [row] = read_out(tmp_path / "out", key="row")
    expected = tpc_mini.compress(text, rate=0.5)
    assert row["row"] == 0 and row["body"] == text
    assert row["compressed_text"] == expected.compressed_prompt
    assert (row["compressed_tokens"], row["compression"]) == (expected.compressed_tokens, "compressed")
    assert (row["task_description"], row["task_source"]) == (expected.task_description, expected.task_source)
    assert row["task_source"] != "question"


def test_bare_rows_skip_the_ctd_by_default_on_the_threads_asked_for(tmp_path, tpc_mini, monkeypatch):
    """No --task-description: rows with a written request take it, bare rows the fallback task, and no row costs
    a CTD generation (the engine's compressor may not call it); the model loads and runs on --threads."""
    import torch

    import tpc_core.corpus.table as corpus_table

    rows = corpus_rows()[:3]  # para-0 is given a written request the head finds; para-1 and para-2 are bare
    # (the question follows two paragraphs: the shipped sequence head misses a request after a one-sentence text,
    # a known miss written in the model card)
    rows[0] = {**rows[0], "text": f"{rows[0]['text']}\n\n{rows[1]['text']}\n\nQuestion: What does a decent "
                                  "respect to the opinions of mankind require?"}
    threads_seen = []
    load = corpus_table.load_compressor

    def load_watching_threads(*args, **kwargs):
        compressor = load(*args, **kwargs)
        threads_seen.append(torch.get_num_threads())
        compressor.engine.task_finder.describe = _no_generation
        return compressor

    monkeypatch.setattr(corpus, "load_compressor", load_watching_threads)
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source)
    before = torch.get_num_threads()
    report = compress_corpus(source, tmp_path / "out", CorpusSettings(model="tpc-mini", rate=0.4), threads=1)
    assert report.compressed_rows == 3 and threads_seen == [1] and torch.get_num_threads() == before
    out = read_out(tmp_path / "out")
    assert [row["task_source"] for row in out] == ["extracted", "fallback", "fallback"]
    for row, original in zip(out, rows):
        expected = tpc_mini.compress(original["text"], rate=0.4, describe_bare=False)
        text, tokens, status = corpus.row_outcome(original["text"], expected)
        assert (row["compressed_text"], row["compressed_tokens"], row["compression"]) == (text, tokens, status)
        assert row["task_description"] == expected.task_description


def _no_generation(prompts):
    raise AssertionError("compress-corpus ran a CTD generation on a bare row")
