"""A populated Hugging Face cache that reproduces the layout of the authors' published CPC files, offline.

Repos (Hub ids of the ``cpc-llama-1b`` registry entry, so the real resolution code is exercised):

* ``unsloth/Llama-3.2-1B-Instruct``: a tiny *random* Llama (a real model of the real architecture, shapes
  shrunk) with a byte-level BPE tokenizer that puts a BOS first, like Llama-3's; safetensors.
* ``deadcode99/cpc-1.0-llama-1b-tokenizer``: that tokenizer plus CPC's two added tokens, ``mask_token="_"``
  (CPC's "blank" mask) and ``pad = eos``, as CPC's training saves it. Revision ``plain``: without the tokens.
* ``deadcode99/cpc-1.0-llama-1b-ds-v5-iter66-lora-bidirectional-attn``: a standard PEFT LoRA adapter on the
  bare decoder (CPC wraps ``model.model``) with CPC's ``initialize_peft`` settings (r=16, alpha=2r, dropout 0.05,
  q/k/v/o/gate/up/down), trained weights replaced by random ones, and the resized ``embed_tokens`` matrix PEFT
  saves when the vocabulary grew. Revisions: ``main`` (``adapter_model.safetensors``), ``bin-only``
  (``adapter_model.bin``), ``pickle-exploit`` (a ``.bin`` whose pickle runs code), ``no-config`` (no
  ``adapter_config.json``).

Each snapshot lives at ``models--org--name/snapshots/<commit>/`` with ``refs/<revision>`` holding the commit.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BASE = "unsloth/Llama-3.2-1B-Instruct"
ADAPTER = "deadcode99/cpc-1.0-llama-1b-ds-v5-iter66-lora-bidirectional-attn"
TOKENIZER = "deadcode99/cpc-1.0-llama-1b-tokenizer"
ADDED_TOKENS = ["<end_of_sent>", "<end_of_question>"]  # CPC's SpecTokenType (util/util.py)
CPC_TARGET_MODULES = ["q_proj", "v_proj", "k_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
CORPUS = ("The river flooded the valley in spring. Farmers moved their cattle to the hills. "
          "The council met on Tuesday to discuss the budget. A new bridge was approved after a long debate. "
          "Marie Curie won two Nobel prizes, in physics and chemistry. The museum opens at nine every morning. "
          "Who approved the bridge? What did the farmers do? When does the museum open?")


@dataclass
class HubCache:
    """Where the fixture cache is and what the loader must reproduce."""

    root: Path
    commits: dict[tuple[str, str], str] = field(default_factory=dict)  # (repo, revision) -> commit
    expected: dict[str, Any] = field(default_factory=dict)  # tensors the loaded model must hold


def _commit(repo: str, revision: str) -> str:
    return hashlib.sha1(f"{repo}@{revision}".encode()).hexdigest()


def _snapshot(cache: HubCache, repo: str, revision: str) -> Path:
    folder = cache.root / ("models--" + repo.replace("/", "--"))
    commit = _commit(repo, revision)
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / revision).write_text(commit)
    cache.commits[(repo, revision)] = commit
    path = folder / "snapshots" / commit
    path.mkdir(parents=True, exist_ok=True)
    return path


def _base_tokenizer() -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|eot_id|>"]
    backend.train_from_iterator([CORPUS] * 4, trainers.BpeTrainer(vocab_size=300, special_tokens=specials,
                                                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bos = backend.token_to_id(specials[0])
    backend.post_processor = processors.TemplateProcessing(single=f"{specials[0]} $A",
                                                           special_tokens=[(specials[0], bos)])
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=specials[0], eos_token=specials[1])


def build_hub_cache(root: Path) -> HubCache:
    """Write the three repos (and their variants) into ``root``; returns what the loader must reproduce."""
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import LlamaConfig, LlamaModel

    cache = HubCache(root)
    torch.manual_seed(0)
    tokenizer = _base_tokenizer()
    base = LlamaModel(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                                  max_position_embeddings=512, bos_token_id=tokenizer.bos_token_id,
                                  eos_token_id=tokenizer.eos_token_id)).eval()
    base_dir = _snapshot(cache, BASE, "main")
    base.save_pretrained(base_dir)  # safetensors
    tokenizer.save_pretrained(base_dir)

    plain_dir = _snapshot(cache, TOKENIZER, "plain")
    tokenizer.save_pretrained(plain_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ADDED_TOKENS})
    tokenizer.mask_token = "_"  # CPC's mask_token_type "blank" (model/common.py)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.save_pretrained(_snapshot(cache, TOKENIZER, "main"))

    # CPC's training (training/train.py): PEFT on the bare decoder, then resize to the tokenizer.
    trained = LlamaModel(copy.deepcopy(base.config))
    trained.load_state_dict(base.state_dict())
    trained.resize_token_embeddings(len(tokenizer))
    lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, target_modules=CPC_TARGET_MODULES, bias="none",
                      task_type=None)
    peft_model = get_peft_model(trained, lora)
    with torch.no_grad():  # stand-ins for trained weights: a zero lora_B would make the adapter a no-op
        for name, parameter in peft_model.named_parameters():
            if "lora_" in name:
                parameter.normal_(0.0, 0.2)
        peft_model.get_input_embeddings().weight[-len(ADDED_TOKENS):].normal_(0.0, 1.0)
    adapter_dir = _snapshot(cache, ADAPTER, "main")
    peft_model.save_pretrained(adapter_dir, save_embedding_layers=True)
    bin_dir = _snapshot(cache, ADAPTER, "bin-only")
    peft_model.save_pretrained(bin_dir, save_embedding_layers=True, safe_serialization=False)
    exploit_dir = _snapshot(cache, ADAPTER, "pickle-exploit")
    shutil.copy(adapter_dir / "adapter_config.json", exploit_dir)
    torch.save({"weights": _Exploit()}, exploit_dir / "adapter_model.bin")
    no_config = _snapshot(cache, ADAPTER, "no-config")
    shutil.copy(adapter_dir / "adapter_model.safetensors", no_config)

    merged = PeftModel.from_pretrained(_fresh(base, len(tokenizer)), str(adapter_dir)).merge_and_unload()
    cache.expected = {"embed_tokens": merged.get_input_embeddings().weight.detach().clone(),
                      "q_proj": merged.layers[0].self_attn.q_proj.weight.detach().clone(),
                      "base_q_proj": base.layers[0].self_attn.q_proj.weight.detach().clone()}
    return cache


def _fresh(base: Any, vocabulary: int) -> Any:
    from transformers import LlamaModel

    model = LlamaModel(copy.deepcopy(base.config))
    model.load_state_dict(base.state_dict())
    model.resize_token_embeddings(vocabulary)
    return model.eval()


class _Exploit:
    """Unpickling this runs a command: what a malicious ``adapter_model.bin`` would do."""

    def __reduce__(self) -> tuple[Any, ...]:
        import os

        return (os.system, ("echo pwned > /dev/null",))
