"""Fixtures of the corpus tests: the corpus compressed once by the local engine, and one local 2-CPU Ray cluster
per Ray test module."""

from __future__ import annotations

import os

import pytest
from corpus_helpers import ROOT, TASK, corpus_rows, read_out, run_cli, write_jsonl


@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray cluster with 2 CPUs for a test module, shut down after it."""
    ray = pytest.importorskip("ray")
    # The workers must import this checkout's tpc_core (not another installed copy): they inherit this variable.
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), previous]))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 1024 ** 2)
    try:
        yield ray
    finally:
        ray.shutdown()
        if previous is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous


@pytest.fixture(scope="session")
def reference(tmp_path_factory) -> dict:
    """The corpus compressed once by the local engine through the command line (fixed task description, rate
    0.4, 4 rows per batch and per Parquet file): IN, OUT and OUT's rows."""
    root = tmp_path_factory.mktemp("corpus_reference")
    source = write_jsonl(root / "declaration.jsonl", corpus_rows())
    out = root / "out"
    done = run_cli("compress-corpus", str(source), str(out), "--task-description", TASK, "--rate", "0.4",
                   "--batch-size", "4", "--rows-per-file", "4")
    assert done.returncode == 0, done.stderr
    return {"source": source, "out": out, "rows": read_out(out), "stderr": done.stderr}
