"""examples/compress_corpus.py runs as documented (on the bundled text, as on a fresh machine)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from corpus_helpers import ROOT, corpus_rows, read_out

pytestmark = pytest.mark.slow


def test_corpus_example_compresses_then_resumes(tmp_path):
    # this checkout's tpc_core, whichever copy is installed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "compress_corpus.py"), "--data",
                           str(tmp_path / "absent.jsonl"), "--workdir", str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    count = len(corpus_rows())
    assert f"{count} rows compressed" in done.stdout
    assert f"second run: 0 rows compressed, {count} already" in done.stdout
    rows = read_out(tmp_path / "corpus_tpc")
    assert [row["text"] for row in rows] == [row["text"] for row in corpus_rows()]
    assert all(row["compressed_tokens"] <= row["origin_tokens"] for row in rows)
