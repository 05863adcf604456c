"""tpc compress-corpus --device: checked before anything is read or written; Ray actors reserve a GPU each for
CUDA, and a cluster without enough GPUs is refused instead of waited on."""

from __future__ import annotations

import pytest
import torch
from corpus_helpers import TASK, corpus_rows, read_out, write_jsonl

from tpc_core.corpus.io import CorpusInputError, CorpusSettings
from tpc_core.corpus.local import compress_corpus
from tpc_core.corpus.ray_engine import gpus_per_worker

SETTINGS = CorpusSettings(model="tpc-mini", rate=0.4, task_description=TASK)
no_gpu = pytest.mark.skipif(torch.cuda.is_available() or torch.backends.mps.is_available(),
                            reason="a machine without CUDA and MPS")


@no_gpu
@pytest.mark.parametrize("device", ["cuda", "mps", "gpu"])
def test_a_device_the_local_engine_cannot_use_is_refused_before_out_is_written(tmp_path, device):
    source = write_jsonl(tmp_path / "in.jsonl", corpus_rows()[:2])
    with pytest.raises(CorpusInputError, match=rf"device={device!r} (was requested but|is not a device name)"):
        compress_corpus(source, tmp_path / "out", SETTINGS, device=device)
    assert not (tmp_path / "out").exists()


def test_ray_checks_only_the_name_on_the_driver(tmp_path):
    pytest.importorskip("ray")
    source = write_jsonl(tmp_path / "in.jsonl", corpus_rows()[:2])
    with pytest.raises(CorpusInputError, match="is not a device name; use one of auto, cpu, cuda, cuda:N, mps"):
        compress_corpus(source, tmp_path / "out", SETTINGS, engine="ray", device="gpu")
    assert not (tmp_path / "out").exists()


def test_each_actor_reserves_one_gpu_for_cuda_and_none_otherwise():
    assert gpus_per_worker("cuda", 2, 2) == gpus_per_worker("cuda:0", 1, 8) == 1
    assert gpus_per_worker(None, 4, 8) is None and gpus_per_worker("cpu", 4, 8) is None
    assert gpus_per_worker("mps", 1, 0) is None
    with pytest.raises(CorpusInputError, match=r"each of the 3 Ray actor\(s\) a GPU of its own, but the cluster has "
                                               r"2 GPU\(s\): pass --num-workers 2 or fewer"):
        gpus_per_worker("cuda", 3, 2)


@pytest.mark.slow
def test_the_local_engine_with_device_cpu_writes_the_default_runs_rows(reference, tmp_path):
    report = compress_corpus(reference["source"], tmp_path / "out", SETTINGS, device="cpu", batch_size=4)
    assert report.compressed_rows == len(reference["rows"])
    assert read_out(tmp_path / "out") == reference["rows"]


@pytest.mark.slow
def test_ray_with_cuda_on_a_cluster_without_gpus_fails_at_once(ray_cluster, tmp_path):
    source = write_jsonl(tmp_path / "in.jsonl", corpus_rows()[:2])
    with pytest.raises(CorpusInputError, match="the cluster has 0 GPU"):
        compress_corpus(source, tmp_path / "out", SETTINGS, engine="ray", device="cuda", num_workers=1)
