"""Checkpoints: registry, local dirs, save/load round trip, Hub errors, safety."""

import json

import pytest

from tpc_core import TPCCompressor, TPCConfig
from tpc_core.loading.registry import REGISTRY


def test_registry_names():
    assert REGISTRY["tpc-mini"].local_dir is not None and (REGISTRY["tpc-mini"].local_dir / "tpc_config.json").is_file()
    for name in ("tpc-base", "tpc-large", "tpc-huge"):  # not published: no Hub id that would not resolve
        assert not REGISTRY[name].published and REGISTRY[name].repo_id is None
    for name in ("cpc-llama-1b", "cpc-mistral-7b"):
        assert REGISTRY[name].hub_cse is not None


def test_missing_path_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="No such checkpoint directory"):
        TPCCompressor.from_pretrained(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no tpc_config.json"):
        TPCCompressor.from_pretrained(tmp_path)


def test_a_misspelt_model_name_gets_a_did_you_mean():
    with pytest.raises(FileNotFoundError, match=r"directory: tpc-mni\..*\(did you mean .tpc-mini.\?\)"):
        TPCCompressor.from_pretrained("tpc-mni")
    with pytest.raises(FileNotFoundError, match="cpc-lama-1b.*did you mean 'cpc-llama-1b'"):
        TPCCompressor.from_pretrained("cpc-lama-1b")
    with pytest.raises(FileNotFoundError) as far:
        TPCCompressor.from_pretrained("no-model-like-this")
    assert "did you mean" not in str(far.value)


def test_unreachable_hub_id_says_how_to_work_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OSError, match="offline default"):
        TPCCompressor.from_pretrained("some-org/not-a-real-tpc-model", local_files_only=True)
    with pytest.raises(OSError, match="'tpc-base' .* is not published"):
        TPCCompressor.from_pretrained("tpc-base", local_files_only=True)


def test_bad_config_is_rejected_with_the_key(tmp_path):
    (tmp_path / "tpc_config.json").write_text(json.dumps({"cse": {"base_model": "x", "poolin": "mean"}}))
    with pytest.raises(ValueError, match="poolin"):
        TPCCompressor.from_pretrained(tmp_path)
    (tmp_path / "tpc_config.json").write_text(json.dumps({"cse": {"base_model": "x", "pooling": "max"}}))
    with pytest.raises(ValueError, match="pooling"):
        TPCConfig.load(tmp_path)


def test_save_and_reload_round_trip(tiny, tmp_path):
    text = "Alpha is first. Beta is second. Gamma is third. Delta is fourth."
    before = tiny.compress(text, question="Which is third?", rate=0.5)
    saved = tiny.save_pretrained(tmp_path / "copy")
    reloaded = TPCCompressor.from_pretrained(saved, device="cpu")
    after = reloaded.compress(text, question="Which is third?", rate=0.5)
    assert after.compressed_prompt == before.compressed_prompt
    assert [s.score for s in after.sentences] == pytest.approx([s.score for s in before.sentences], abs=1e-5)


def test_pickle_adapters_are_refused(tiny_checkpoint, tmp_path):
    import shutil

    root = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, root)
    (root / "adapter").mkdir()
    (root / "adapter" / "adapter_model.bin").write_bytes(b"not loaded")
    config = json.loads((root / "tpc_config.json").read_text())
    config["cse"]["adapter_dir"] = "adapter"
    (root / "tpc_config.json").write_text(json.dumps(config))
    with pytest.raises(FileNotFoundError, match="pickle"):
        TPCCompressor.from_pretrained(root, device="cpu")


def test_cuda_request_without_cuda_is_a_clear_error(tiny_checkpoint):
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    with pytest.raises(ValueError, match="CUDA is not available"):
        TPCCompressor.from_pretrained(tiny_checkpoint, device="cuda")


def test_dtypes(tiny_checkpoint):
    import torch

    compressor = TPCCompressor.from_pretrained(tiny_checkpoint, device="cpu", dtype="bf16")
    assert compressor.encoder.model.dtype == torch.bfloat16
    result = compressor.compress("One fact here. Another fact there. A third one.", question="fact?", rate=0.5)
    assert result.compressed_tokens <= result.budget


def test_push_to_hub_uploads_a_loadable_checkpoint(tiny, monkeypatch, tmp_path):
    """No network here: HfApi is replaced by a recorder that copies the uploaded folder, which must load."""
    import shutil

    import huggingface_hub

    uploaded = tmp_path / "uploaded"

    class RecordingApi:
        def __init__(self, token=None):
            self.token = token

        def create_repo(self, repo_id, private=None, exist_ok=False):
            assert repo_id == "me/tiny-tpc" and exist_ok

        def upload_folder(self, repo_id, folder_path, commit_message, revision=None):
            shutil.copytree(folder_path, uploaded)
            return f"https://huggingface.co/{repo_id}/commit/abc"

    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingApi)
    url = tiny.push_to_hub("me/tiny-tpc", token="t")
    assert url.endswith("/commit/abc")
    assert TPCCompressor.from_pretrained(uploaded, device="cpu").config.name == "tiny"


def test_reading_a_checkpoint_config_writes_nothing(tmp_path, monkeypatch):
    """``read_checkpoint_config`` (the adapters' construction check) finds a Hub repo's config in the HF cache
    and an assembled cpc-* config in memory; it refuses an offline miss; it never writes a file."""
    import shutil

    from tpc_core.loading.checkpoint import HubOptions, read_checkpoint_config

    monkeypatch.setenv("TPC_CACHE", str(tmp_path / "tpc_cache"))
    cache = tmp_path / "hf_cache"
    commit = "0123456789abcdef0123456789abcdef01234567"
    snapshot = cache / "models--some-org--tpc-test" / "snapshots" / commit
    shutil.copytree(REGISTRY["tpc-mini"].local_dir, snapshot)
    (cache / "models--some-org--tpc-test" / "refs").mkdir()
    (cache / "models--some-org--tpc-test" / "refs" / "main").write_text(commit)
    before = sorted(tmp_path.rglob("*"))
    options = HubOptions(cache_dir=str(cache), local_files_only=True)

    assert read_checkpoint_config("some-org/tpc-test", options) == TPCConfig.load(snapshot)
    with pytest.raises(OSError, match="offline default"):
        read_checkpoint_config("some-org/not-cached", options)
    assembled = read_checkpoint_config("cpc-llama-1b", options, ctd=str(snapshot))
    assert assembled.ctd == TPCConfig.load(snapshot).ctd and assembled.cse.adapter_repo is not None
    assert assembled.extra["ctd_from"] == str(snapshot)
    assert sorted(tmp_path.rglob("*")) == before


def _head_file(kind, path):
    """A small random head of ``kind`` ("request_head" / "salience_head") written to ``path``."""
    import torch

    from tpc_core.engine.scoring.salience import HAND_FEATURES, SalienceHead
    from tpc_core.engine.task.request import FEATURE_NAMES
    from tpc_core.engine.task.request_sequence import SentenceTagger, SequenceRequestHead

    if kind == "request_head":
        SequenceRequestHead(SentenceTagger(4 + len(FEATURE_NAMES), width=8, layers=1, heads=2), window=8).save(path)
    else:
        features = len(HAND_FEATURES)
        SalienceHead(torch.randn(4 + features), 0.5, torch.zeros(features), torch.ones(features)).save(path)


@pytest.mark.parametrize("kind", ["request_head", "salience_head"])
def test_both_heads_load_through_one_loader_that_keeps_them_inside_the_checkpoint(kind, tmp_path):
    from tpc_core.config import AgnosticConfig
    from tpc_core.engine.scoring.salience import SalienceHead
    from tpc_core.engine.task.request_sequence import SequenceRequestHead
    from tpc_core.loading.heads import load_request_head, load_salience_head

    load, head_type = {"request_head": (load_request_head, SequenceRequestHead),
                       "salience_head": (load_salience_head, SalienceHead)}[kind]
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    _head_file(kind, checkpoint / "head.safetensors")
    _head_file(kind, tmp_path / "outside.safetensors")
    (checkpoint / "link.safetensors").symlink_to(tmp_path / "outside.safetensors")

    assert load(AgnosticConfig(), checkpoint) is None
    assert isinstance(load(AgnosticConfig(**{kind: "head.safetensors"}), checkpoint), head_type)
    for leaving in ("../outside.safetensors", str(tmp_path / "outside.safetensors"), "link.safetensors"):
        with pytest.raises(ValueError, match=f"agnostic.{kind}"):
            load(AgnosticConfig(**{kind: leaving}), checkpoint)
    with pytest.raises(FileNotFoundError, match=f"names agnostic.{kind} 'nope.safetensors' but .* is missing"):
        load(AgnosticConfig(**{kind: "nope.safetensors"}), checkpoint)


def test_a_checkpoint_with_a_per_sentence_request_head_is_refused_with_the_version_that_dropped_it(tmp_path):
    """The per-sentence head (weight and bias, no ``kind``) that earlier checkpoints shipped is no longer run."""
    import shutil

    import torch
    from safetensors.torch import save_file

    from tpc_core.engine.task.request import FEATURE_NAMES

    target = tmp_path / "tpc-old"
    shutil.copytree(REGISTRY["tpc-mini"].local_dir, target)
    save_file({"weight": torch.zeros(384 + len(FEATURE_NAMES)), "bias": torch.zeros(1)},
              str(target / "request_head.safetensors"), metadata={"features": ",".join(FEATURE_NAMES)})
    with pytest.raises(ValueError, match="per-sentence request head.*dropped in tpc-langchain 0.1.0"):
        TPCCompressor.from_pretrained(str(target))
