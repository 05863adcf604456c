"""Shared fixtures: the real shipped tpc-mini, and tiny random checkpoints for wiring tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qa_dev.jsonl"
# Fixtures that read ../shared/data (skipping, or falling back to bundled text, without it): every test that uses
# one, directly or through another fixture, is marked ``shared_data``.
SHARED_DATA_FIXTURES = frozenset({"dev_rows", "sample"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "shared_data: reads ../shared (or falls back from it when it is missing); "
                                       "CI runs these again on a fresh clone with no ../shared beside it (.ci/run)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SHARED_DATA_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.shared_data)


@pytest.fixture(scope="session")
def tpc_mini():
    """The real offline default model (MiniLM CSE; SmolLM2 CTD loaded on first agnostic call)."""
    from tpc_core import TPCCompressor

    return TPCCompressor.from_pretrained("tpc-mini")


@pytest.fixture(scope="session")
def dev_rows() -> list[dict]:
    """Real QA rows of the dev split (skips when the shared data is not beside the checkout)."""
    if not DATA.is_file():
        pytest.skip(f"{DATA} not present")
    return [row for row in map(json.loads, DATA.read_text(encoding="utf-8").splitlines()) if row["split"] == "dev"]


def _tiny_tokenizer(directory: Path):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    from tpc_core.loading.offline import minilm_dir

    backend = Tokenizer.from_file(str(minilm_dir() / "tokenizer.json"))
    backend.no_truncation()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                        cls_token="[CLS]", sep_token="[SEP]", eos_token="[SEP]", bos_token="[CLS]")
    tokenizer.chat_template = ("{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}<assistant> {% endif %}")
    tokenizer.save_pretrained(directory)
    return tokenizer


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    """A TPC checkpoint of tiny random models: a BERT CSE and a Llama CTD, all saved as safetensors."""
    import torch
    from transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM

    from tpc_core import CSEConfig, CTDConfig, TPCConfig

    root = tmp_path_factory.mktemp("tiny_tpc")
    torch.manual_seed(0)
    cse_dir, ctd_dir = root / "cse_base", root / "ctd_base"
    tokenizer = _tiny_tokenizer(cse_dir)
    BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(cse_dir)
    _tiny_tokenizer(ctd_dir)
    LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=2, num_key_value_heads=2, intermediate_size=64,
                                 max_position_embeddings=512, bos_token_id=tokenizer.cls_token_id,
                                 eos_token_id=tokenizer.sep_token_id, pad_token_id=tokenizer.pad_token_id)
                     ).save_pretrained(ctd_dir)
    TPCConfig(cse=CSEConfig(base_model="cse_base", architecture="encoder", max_window_tokens=64,
                            window_overlap_tokens=16, pooling="marker"),
              ctd=CTDConfig(base_model="ctd_base", max_input_tokens=64, max_new_tokens=8),
              name="tiny").save(root)
    return root


@pytest.fixture(scope="session")
def tiny(tiny_checkpoint):
    from tpc_core import TPCCompressor

    return TPCCompressor.from_pretrained(tiny_checkpoint, device="cpu")
