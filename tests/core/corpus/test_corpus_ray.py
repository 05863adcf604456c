"""tpc compress-corpus --engine ray on one local 2-CPU Ray cluster: the same rows as the local engine.

Every run compresses with a fixed task description (``TASK``): the compressor then generates nothing, and a
row's output does not depend on which rows share its batch. (Without one, the CTD's greedy generation runs on
left-padded batches, and Ray's batch boundaries are not the local engine's; see the README.)
"""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus_helpers import TASK, corpus_rows, read_out, run_cli, write_jsonl

from tpc_core.corpus.io import MANIFEST_NAME, CorpusSettings
from tpc_core.corpus.local import compress_corpus

pytestmark = pytest.mark.slow
SETTINGS = CorpusSettings(model="tpc-mini", rate=0.4, task_description=TASK)


def test_ray_writes_the_local_engines_rows(ray_cluster, reference, tmp_path):
    """read_json → two actors, one compressor each, 2 rows per batch → write_parquet; compared row by row."""
    report = compress_corpus(reference["source"], tmp_path / "out", SETTINGS, engine="ray", num_workers=2,
                             batch_size=2)
    assert (report.total_rows, report.skipped_rows, report.compressed_rows) == (6, 0, 6)
    assert len(list((tmp_path / "out").glob("*.parquet"))) > 1  # written by Ray, several files
    assert read_out(tmp_path / "out") == reference["rows"]


def test_ray_resumes_a_partial_out_through_the_command_and_a_running_cluster(ray_cluster, reference, tmp_path):
    """OUT holds the local engine's first file (4 rows); the command, joining the running cluster with
    --address, reads Parquet, compresses only the 2 missing rows and leaves that file alone."""
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(corpus_rows()), source)
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(reference["out"] / MANIFEST_NAME, out)
    first = min(reference["out"].glob("*.parquet"))
    shutil.copy(first, out)
    assert pq.read_table(out / first.name).num_rows == 4
    address = ray_cluster.get_runtime_context().gcs_address
    done = run_cli("compress-corpus", str(source), str(out), "--engine", "ray", "--address", address,
                   "--num-workers", "2", "--batch-size", "2", "--task-description", TASK, "--rate", "0.4", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "2 rows compressed, 4 already" in done.stderr
    assert (out / first.name).read_bytes() == first.read_bytes()
    assert read_out(out) == reference["rows"]


def test_rows_without_ids_are_numbered_as_in_the_input(ray_cluster, reference, tmp_path):
    rows = [{"text": r["text"], "source": r["source"]} for r in corpus_rows()[:3]]
    source = write_jsonl(tmp_path / "in.jsonl", rows)
    compress_corpus(source, tmp_path / "out", SETTINGS, engine="ray", num_workers=2, batch_size=1,
                    explicit_id=False)
    written = read_out(tmp_path / "out", key="row")
    assert [r["row"] for r in written] == [0, 1, 2]
    for row, expected in zip(written, reference["rows"][:3]):
        assert {k: v for k, v in row.items() if k != "row"} == {k: v for k, v in expected.items() if k != "id"}


def test_a_model_the_workers_cannot_load_is_reported_by_name(ray_cluster, reference, tmp_path):
    from tpc_core.corpus.ray_engine import CorpusWorkerError

    missing = tmp_path / "no-such-checkpoint"
    settings = CorpusSettings(model=str(missing), rate=0.4, task_description=TASK)
    with pytest.raises(CorpusWorkerError, match="could not build its compressor: .*no-such-checkpoint"):
        compress_corpus(reference["source"], tmp_path / "out", settings, engine="ray", num_workers=1)


def test_ray_warm_cache_stores_every_rows_entry_through_the_command(ray_cluster, reference, tmp_path, tpc_mini):
    """``--engine ray --warm-cache DIR``: two actors store each row's entry in DIR and keep its text whole;
    a query-time compressor given ``cache=DIR`` then reads no row again and gives the uncached result."""
    out, cache = tmp_path / "out", tmp_path / "entries"
    address = ray_cluster.get_runtime_context().gcs_address
    done = run_cli("compress-corpus", str(reference["source"]), str(out), "--warm-cache", str(cache), "--engine",
                   "ray", "--address", address, "--num-workers", "2", "--batch-size", "2", timeout=300)
    assert done.returncode == 0, done.stderr
    rows = read_out(out)
    texts = {row["id"]: row["text"] for row in corpus_rows()}
    assert sorted(row["id"] for row in rows) == sorted(texts)
    assert all(row["compressed_text"] == texts[row["id"]] and row["compression"] == "cached" for row in rows)
    assert len(list(cache.rglob("*.tpcs"))) == len(texts)
    ordered = [texts[key] for key in sorted(texts)]
    served = tpc_mini.compress(ordered, question=TASK, rate=0.4, cache=str(cache))
    assert (served.cache_hits, served.cache_misses) == (len(ordered), 0)
    assert served.compressed_prompt == tpc_mini.compress(ordered, question=TASK, rate=0.4).compressed_prompt
