"""Construction-time checks of the adapters read, and never write: no checkpoint is assembled, nothing cached.

A ``cpc-*`` name is a checkpoint assembled from Hub parts plus another checkpoint's CTD; loading it writes that
checkpoint under ``TPC_CACHE`` once. Building an adapter only checks the name, so it must leave every cache as
it found it, and still refuse what ``from_pretrained`` would refuse.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tpc_core.loading.registry import REGISTRY
from tpc_integrations._checks import check_model


def _files(*roots: Path) -> list[Path]:
    return sorted(path for root in roots for path in root.rglob("*"))


@pytest.fixture
def caches(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """An empty TPC cache and an empty Hugging Face cache, both in force for the test."""
    tpc, hub = tmp_path / "tpc_cache", tmp_path / "hf_cache"
    tpc.mkdir()
    hub.mkdir()
    monkeypatch.setenv("TPC_CACHE", str(tpc))
    monkeypatch.setenv("HF_HOME", str(hub))
    return tpc, hub


@pytest.mark.parametrize("name", [name for name, model in REGISTRY.items() if model.hub_cse is not None])
def test_checking_a_hub_assembled_name_writes_nothing(caches, name):
    tpc, hub = caches
    check_model(name, None, {})
    check_model(name, None, {"ctd": "tpc-mini", "cache_dir": str(hub), "local_files_only": True})
    assert _files(tpc, hub) == []


def test_adapters_built_with_a_cpc_name_write_nothing(caches):
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer
    from tpc_integrations.llama_index import TPCNodePostprocessor, TPCTransform

    tpc, hub = caches
    for adapter in (TPCDocumentCompressor, TPCDocumentTransformer, TPCNodePostprocessor, TPCTransform):
        built = adapter(model_name_or_path="cpc-llama-1b", model_kwargs={"cache_dir": str(hub)})
        assert built.model_name_or_path == "cpc-llama-1b"
    assert _files(tpc, hub) == []


def test_the_check_still_refuses_what_loading_would_refuse(caches, tmp_path):
    tpc, hub = caches
    with pytest.raises(ValueError, match="model_name_or_path='cpc-llama-1b' cannot be loaded.*No such checkpoint"):
        check_model("cpc-llama-1b", None, {"ctd": str(tmp_path / "nowhere")})
    no_ctd = tmp_path / "no_ctd"
    shutil.copytree(REGISTRY["tpc-mini"].local_dir, no_ctd)
    config = json.loads((no_ctd / "tpc_config.json").read_text(encoding="utf-8"))
    config["ctd"] = None
    (no_ctd / "tpc_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match="has no task descriptor"):
        check_model("cpc-llama-1b", None, {"ctd": str(no_ctd)})
    with pytest.raises(ValueError, match="ctd= pairs a CTD with an encoder assembled from Hub parts"):
        check_model("tpc-mini", None, {"ctd": "tpc-mini"})
    with pytest.raises(ValueError, match="'tpc-base' .* is not published"):
        check_model("tpc-base", None, {})
    assert _files(tpc, hub) == []
