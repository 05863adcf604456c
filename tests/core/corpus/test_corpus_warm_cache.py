"""``tpc compress-corpus IN OUT --warm-cache DIR``: every row's sentence-cache entry stored, its text kept
whole, so a query-time compressor given ``cache=DIR`` reads no row again; with the real tpc-mini and the bundled
text."""

from __future__ import annotations

import pytest
from corpus_helpers import TASK, corpus_rows, read_out, run_cli, write_jsonl

from tpc_core.corpus.io import CorpusInputError, CorpusSettings
from tpc_core.corpus.local import compress_corpus

pytestmark = pytest.mark.slow


def test_warm_cache_stores_every_row_and_keeps_its_text(tmp_path, tpc_mini):
    rows = corpus_rows()
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out, cache = tmp_path / "out", tmp_path / "entries"
    done = run_cli("compress-corpus", str(source), str(out), "--warm-cache", str(cache), "--batch-size", "4",
                   "--rows-per-file", "4")
    assert done.returncode == 0, done.stderr
    assert f"6 rows cached in {cache}, 0 already in {out}" in done.stderr
    written = read_out(out)
    assert [r["id"] for r in written] == [r["id"] for r in rows]
    for row, original in zip(written, rows):
        assert {k: row[k] for k in original} == original and row["compressed_text"] == original["text"]
        assert row["origin_tokens"] == row["compressed_tokens"] == tpc_mini.token_counter(original["text"])
        assert (row["compression"], row["task_description"], row["task_source"]) == ("cached", None, None)
    assert len(list(cache.rglob("*.tpcs"))) == len(rows)  # one entry file per row

    texts = [row["text"] for row in rows]
    served = tpc_mini.compress(texts, question=TASK, rate=0.4, cache=str(cache))
    assert (served.cache_hits, served.cache_misses) == (len(rows), 0)
    assert served.compressed_prompt == tpc_mini.compress(texts, question=TASK, rate=0.4).compressed_prompt

    again = run_cli("compress-corpus", str(source), str(out), "--warm-cache", str(cache))
    assert again.returncode == 0 and "0 rows cached" in again.stderr and "6 already" in again.stderr


def test_warm_cache_refuses_compression_options_and_an_unwritable_directory(tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", corpus_rows()[:2])
    refused = run_cli("compress-corpus", str(source), str(tmp_path / "out"), "--warm-cache", str(tmp_path / "c"),
                      "--rate", "0.3", "--task-description", TASK)
    assert refused.returncode == 2
    assert "--warm-cache keeps every row's text whole" in refused.stderr and "--rate, --task-description" in \
        refused.stderr
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(CorpusInputError, match=f"--warm-cache: .*{blocker}"):
        compress_corpus(source, tmp_path / "out2", CorpusSettings(model="tpc-mini", warm_cache=str(blocker / "c")))
    assert not (tmp_path / "out").exists() and not (tmp_path / "out2").exists()  # refused before OUT is written


def test_an_out_compressed_at_ingestion_is_not_resumed_as_a_warm_cache(tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", corpus_rows()[:2])
    out = tmp_path / "out"
    assert compress_corpus(source, out, CorpusSettings(model="tpc-mini", rate=0.5, task_description=TASK),
                           show_progress=False).compressed_rows == 2
    with pytest.raises(CorpusInputError, match="warm_cache: now '.*entries', OUT None"):
        compress_corpus(source, out, CorpusSettings(model="tpc-mini", warm_cache=str(tmp_path / "entries")))
