"""CPC encoders from Hub parts (``cpc-llama-1b``): offline from a populated HF cache, through the real resolution.

The cache (``tests/core/loading/hub_cache.py``) holds a tiny *random* Llama under the real repo ids: a real model of
the real architecture with shrunk shapes, so these tests check the wiring (resolution, adapter, tokenizer,
embedding rows, pooling, pinning, errors), not the published weights' quality.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
from hub_cache import ADAPTER, ADDED_TOKENS, BASE, TOKENIZER, HubCache, build_hub_cache

from tpc_core import TPCCompressor

TEXT = ("The river flooded the valley in spring. Farmers moved their cattle to the hills. The council met on "
        "Tuesday to discuss the budget. A new bridge was approved after a long debate. The museum opens at nine "
        "every morning.")
QUESTION = "Who approved the bridge?"


@pytest.fixture(scope="module", autouse=True)
def _offline(tmp_path_factory):
    """No network, and assembled checkpoints go to a temporary TPC cache, for the whole module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TPC_CACHE", str(tmp_path_factory.mktemp("tpc_cache")))
        yield


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory) -> HubCache:
    return build_hub_cache(tmp_path_factory.mktemp("hf_cache"))


def _load(hub_cache: HubCache, **kwargs):
    return TPCCompressor.from_pretrained("cpc-llama-1b", cache_dir=str(hub_cache.root), local_files_only=True,
                                         device="cpu", **kwargs)


@pytest.fixture(scope="module")
def cpc(hub_cache):
    return _load(hub_cache)


def test_loads_offline_from_the_cache_and_compresses(cpc, hub_cache):
    result = cpc.compress(TEXT, question=QUESTION, rate=0.5)
    assert 0 < result.compressed_tokens <= result.budget < result.origin_tokens
    kept = [s for s in result.sentences if s.kept]
    assert kept and all(TEXT[s.start:s.end] == s.text for s in result.sentences)
    assert result.compressed_prompt == " ".join(s.text for s in kept)
    info = cpc.info()
    assert info["cse_pooling"] == "cpc" and info["cse_architecture"] == "decoder"
    assert info["hub_parts"] == {
        "tokenizer": {"repo": TOKENIZER, "revision": None, "commit": hub_cache.commits[(TOKENIZER, "main")]},
        "adapter": {"repo": ADAPTER, "revision": None, "commit": hub_cache.commits[(ADAPTER, "main")]},
        "base": {"repo": BASE, "revision": None, "commit": hub_cache.commits[(BASE, "main")]}}


def test_adapter_and_embedding_rows_are_applied(cpc, hub_cache):
    """The merged LoRA weights and the resized embedding matrix (added tokens' rows included) are the adapter's."""
    model = cpc.encoder.model
    assert torch.equal(model.get_input_embeddings().weight, hub_cache.expected["embed_tokens"])
    assert torch.allclose(model.layers[0].self_attn.q_proj.weight, hub_cache.expected["q_proj"], atol=1e-6)
    assert not torch.allclose(model.layers[0].self_attn.q_proj.weight, hub_cache.expected["base_q_proj"])
    tokenizer = cpc.encoder.tokenizer
    ids = [tokenizer.convert_tokens_to_ids(token) for token in ADDED_TOKENS]
    assert ids == [len(tokenizer) - 2, len(tokenizer) - 1]


def _cpc_reference_scores(model, tokenizer, sentences: list[str], question: str) -> list[float]:
    """CPC's inference written out from its code (util/preprocessing.py, util/torch_util.py, model/llama.py):
    sentence ids concatenated with add_special_tokens=False (no BOS), one full-attention pass (CPC zeroes the
    causal mask: an all-zero additive 4-D mask), mean over each sentence's span, the question alone without
    special tokens, mean over its tokens, L2-normalised cosine."""
    import torch.nn.functional as F

    pieces = [tokenizer.encode(s, add_special_tokens=False) for s in sentences]
    ids = torch.tensor([[t for piece in pieces for t in piece]])
    question_ids = torch.tensor([tokenizer.encode(question, add_special_tokens=False)])
    with torch.no_grad():
        zeros = torch.zeros((1, 1, ids.shape[1], ids.shape[1]))
        hidden = model(input_ids=ids, attention_mask=zeros).last_hidden_state[0]
        q_zeros = torch.zeros((1, 1, question_ids.shape[1], question_ids.shape[1]))
        q = F.normalize(model(input_ids=question_ids, attention_mask=q_zeros).last_hidden_state[0].mean(0), dim=-1)
    scores, start = [], 0
    for piece in pieces:
        vector = F.normalize(hidden[start:start + len(piece)].mean(0), dim=-1)
        scores.append(float(vector @ q))
        start += len(piece)
    return scores


def test_sentence_representation_is_cpcs(cpc):
    result = cpc.compress(TEXT, question=QUESTION, rate=0.5)
    sentences = [s.text for s in result.sentences]
    reference = _cpc_reference_scores(cpc.encoder.model, cpc.encoder.tokenizer, sentences, QUESTION)
    assert [s.score for s in result.sentences] == pytest.approx(reference, abs=1e-4)
    # The check can fail: a BOS before the question (what a default encode adds) changes the scores.
    with_bos = _cpc_reference_scores(cpc.encoder.model, cpc.encoder.tokenizer, sentences,
                                     cpc.encoder.tokenizer.bos_token + QUESTION)
    assert [s.score for s in result.sentences] != pytest.approx(with_bos, abs=1e-4)


def test_save_pretrained_pins_the_resolved_commits(cpc, hub_cache, tmp_path):
    saved = cpc.save_pretrained(tmp_path / "saved")
    cse = json.loads((saved / "tpc_config.json").read_text())["cse"]
    assert (cse["base_revision"], cse["adapter_revision"], cse["tokenizer_revision"]) == (
        hub_cache.commits[(BASE, "main")], hub_cache.commits[(ADAPTER, "main")], hub_cache.commits[(TOKENIZER, "main")])
    assert (saved / "ctd_adapter" / "adapter_model.safetensors").is_file()  # the paired tpc-mini CTD travels along
    reloaded = TPCCompressor.from_pretrained(saved, cache_dir=str(hub_cache.root), local_files_only=True, device="cpu")
    before = cpc.compress(TEXT, question=QUESTION, rate=0.5)
    after = reloaded.compress(TEXT, question=QUESTION, rate=0.5)
    assert after.compressed_prompt == before.compressed_prompt
    assert [s.score for s in after.sentences] == pytest.approx([s.score for s in before.sentences], abs=1e-6)


def test_bin_adapter_is_read_weights_only(cpc, hub_cache):
    from_bin = _load(hub_cache, revision="bin-only")
    assert from_bin.info()["hub_parts"]["adapter"]["commit"] == hub_cache.commits[(ADAPTER, "bin-only")]
    assert torch.equal(from_bin.encoder.model.get_input_embeddings().weight, hub_cache.expected["embed_tokens"])
    scores = [s.score for s in from_bin.compress(TEXT, question=QUESTION, rate=0.5).sentences]
    assert scores == pytest.approx([s.score for s in cpc.compress(TEXT, question=QUESTION, rate=0.5).sentences],
                                   abs=1e-5)


def test_a_pickle_that_runs_code_is_refused(hub_cache):
    with pytest.raises(ValueError, match="refused by the weights-only loader"):
        _load(hub_cache, revision="pickle-exploit")


def _checkpoint(tmp_path: Path, hub_cache: HubCache, **cse_changes) -> Path:
    """A saved cpc-llama-1b checkpoint whose CSE section is edited (a user's checkpoint referencing Hub parts)."""
    import dataclasses

    from tpc_core import TPCConfig
    from tpc_core.loading.hub_cse import hub_cse_config
    from tpc_core.loading.registry import REGISTRY

    cse = dataclasses.replace(hub_cse_config(REGISTRY["cpc-llama-1b"]), **cse_changes)
    TPCConfig(cse=cse, name="edited").save(tmp_path)
    return tmp_path


def _load_dir(path: Path, hub_cache: HubCache):
    return TPCCompressor.from_pretrained(path, cache_dir=str(hub_cache.root), local_files_only=True, device="cpu")


def test_bin_adapter_without_the_safe_loader_is_refused(hub_cache, tmp_path):
    path = _checkpoint(tmp_path, hub_cache, adapter_revision="bin-only", adapter_allow_bin=False)
    with pytest.raises(ValueError, match="adapter_allow_bin=true"):
        _load_dir(path, hub_cache)


def test_missing_file_in_the_adapter_repo(hub_cache, tmp_path):
    path = _checkpoint(tmp_path, hub_cache, adapter_revision="no-config")
    with pytest.raises(FileNotFoundError, match="has no adapter_config.json"):
        _load_dir(path, hub_cache)


def test_wrong_base_revision_names_the_cached_ones(hub_cache, tmp_path):
    path = _checkpoint(tmp_path, hub_cache, base_revision="v9.9")
    with pytest.raises(FileNotFoundError, match=r"Revision 'v9.9' of unsloth/Llama-3.2-1B-Instruct \(base\).*main"):
        _load_dir(path, hub_cache)


def test_tokenizer_without_the_added_tokens(hub_cache, tmp_path):
    path = _checkpoint(tmp_path, hub_cache, tokenizer_revision="plain")
    with pytest.raises(ValueError, match="lacks the 2 added token"):
        _load_dir(path, hub_cache)


def test_uncached_parts_say_how_to_get_them(tmp_path):
    with pytest.raises(FileNotFoundError, match="not in the local Hub cache"):
        TPCCompressor.from_pretrained("cpc-llama-1b", cache_dir=str(tmp_path), local_files_only=True, device="cpu")


def test_gated_base_without_a_token_fails_before_any_download(monkeypatch, tmp_path):
    import huggingface_hub

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))  # no stored token there
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    monkeypatch.setattr(huggingface_hub, "snapshot_download",
                        lambda *a, **k: pytest.fail("nothing may be downloaded for a gated repo without a token"))
    from tpc_core.loading.hub import GatedRepoAccessError

    with pytest.raises(GatedRepoAccessError, match="mistralai/Mistral-7B-Instruct-v0.2 is a gated repository"):
        TPCCompressor.from_pretrained("cpc-mistral-7b", cache_dir=str(tmp_path / "empty"), device="cpu")


def test_prompt_agnostic_mode_uses_the_ctd_named(hub_cache, tiny_checkpoint):
    compressor = _load(hub_cache, ctd=tiny_checkpoint)
    assert compressor.config.ctd.base_model == "ctd_base" and compressor.config.agnostic.request_head is None
    result = compressor.compress(TEXT, rate=0.5)
    assert result.task_source in ("generated", "fallback") and result.compressed_tokens <= result.budget


def test_default_ctd_is_tpc_minis(cpc):
    from tpc_core.config import TPCConfig
    from tpc_core.loading.registry import REGISTRY

    assert cpc.config.ctd == TPCConfig.load(REGISTRY["tpc-mini"].local_dir).ctd
    assert (cpc.checkpoint_dir / cpc.config.ctd.adapter_dir / "adapter_model.safetensors").is_file()


def test_ctd_option_is_only_for_hub_assembled_names(tiny_checkpoint):
    with pytest.raises(ValueError, match="ctd= pairs a CTD"):
        TPCCompressor.from_pretrained(tiny_checkpoint, ctd="tpc-mini")


@pytest.mark.parametrize("name", ["tpc-base", "tpc-large", "tpc-huge"])
def test_unpublished_names_fail_before_any_download(name, monkeypatch):
    import huggingface_hub

    from tpc_core.loading.registry import UnpublishedModelError

    monkeypatch.setattr(huggingface_hub, "snapshot_download", lambda *a, **k: pytest.fail("downloaded"))
    with pytest.raises(UnpublishedModelError) as error:
        TPCCompressor.from_pretrained(name)
    message = str(error.value)
    assert "not published" in message and f"training/configs/{name}.yaml" in message and "cpc-llama-1b" in message


def test_cli_info_says_the_same(capsys):
    from tpc_core.cli import main
    from tpc_core.loading.registry import REGISTRY, unpublished_message

    assert main(["info", "--model", "tpc-large"]) == 2
    assert unpublished_message(REGISTRY["tpc-large"]) in capsys.readouterr().err


@pytest.mark.parametrize("repo", ["../outside", "/abs/path", "org/.."])
def test_hub_parts_must_be_hub_ids(repo):
    from tpc_core.config import CSEConfig

    with pytest.raises(ValueError, match="Hub repo id"):
        CSEConfig(base_model="org/base", adapter_repo=repo, pooling="cpc", use_special_tokens=False)


def test_benchmark_row_runs_only_where_the_weights_are_cached(hub_cache, monkeypatch, tmp_path):
    from huggingface_hub import constants

    from evaluation.methods.tpc import TPCMethod

    method = TPCMethod(counter=None, aware=True, model="cpc-llama-1b")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    assert "no local weights for cpc-llama-1b" in method.unavailable_reason()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub_cache.root))
    assert method.unavailable_reason() is None
    assert method.identity().endswith(":hub=" + ",".join(hub_cache.commits[(repo, "main")][:12]
                                                         for repo in (BASE, ADAPTER, TOKENIZER)))


def test_mistral_decoder_is_run_bidirectionally():
    """cpc-mistral-7b's base family: the engine's 4-D mask must reach Mistral's attention too (v0.2 has no
    sliding window), so the first token sees the last."""
    from transformers import MistralConfig, MistralModel

    from tpc_core.engine.scoring.cse import bidirectional_mask

    torch.manual_seed(0)
    model = MistralModel(MistralConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                       num_key_value_heads=1, intermediate_size=32, sliding_window=None)).eval()
    first, second = torch.tensor([[3, 4, 5, 6]]), torch.tensor([[3, 4, 5, 9]])
    mask = bidirectional_mask(torch.ones_like(first), model.dtype)
    with torch.no_grad():
        causal = [model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state[0, 0]
                  for ids in (first, second)]
        both = [model(input_ids=ids, attention_mask=mask).last_hidden_state[0, 0] for ids in (first, second)]
    assert torch.allclose(*causal) and not torch.allclose(*both)


def test_cli_models_lists_what_the_registry_says(capsys):
    from tpc_core.cli import main
    from tpc_core.loading.registry import REGISTRY, unpublished_message

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert unpublished_message(REGISTRY["tpc-huge"]) in out
    assert REGISTRY["cpc-llama-1b"].hub_cse.adapter in out


def test_marker_pooling_needs_the_markers_in_the_published_tokenizer(hub_cache, tmp_path):
    path = _checkpoint(tmp_path, hub_cache, tokenizer_revision="plain", pooling="marker", use_special_tokens=True)
    with pytest.raises(ValueError, match="lacks them"):
        _load_dir(path, hub_cache)


def test_a_base_beside_hub_parts_is_a_hub_id_too():
    from tpc_core.config import CSEConfig

    with pytest.raises(ValueError, match="cse.base_model must be a Hub repo id"):
        CSEConfig(base_model="../elsewhere/base", adapter_repo="org/adapter", pooling="cpc", use_special_tokens=False)
