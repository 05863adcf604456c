"""Stage 2: supervised fine-tuning of the Context-relevant Task Descriptor (paper Section 3.2, Algorithm 2).

``python -m training.ctd_sft --config training/configs/tpc-mini.yaml [--set key=value ...]``

The input is exactly what inference feeds the CTD: ``TaskDescriptor.build_chat_inputs(prompt)`` (the prompt
bounded to ``ctd.max_input_tokens`` by head and tail, the instruction, the chat template, the response
prefix). The target is the continuation of the response prefix, ``target_template`` filled with the
curated task description, then the end-of-turn token; the loss covers the target tokens only.

Output: ``ctd_adapter/`` (or ``ctd_weights/``), ``ctd_config.json`` (the ``CTDConfig`` to ship) and
``ctd_sft_summary.json``; ``training.ctd_rl`` and ``training.export`` read them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tpc_core.config import CTDConfig
from training.common.jsonl import read_jsonl
from training.common.loop import LoraSettings, OptimSettings, apply_lora, stage_main, train_loop, weights_dtype

__all__ = ["CTDSFTConfig", "CTDExample", "CausalLMLoss", "encode_example", "load_ctd_records", "load_policy",
           "save_ctd", "train_ctd_sft", "main"]

logger = logging.getLogger(__name__)
ADAPTER_DIR = "ctd_adapter"
WEIGHTS_DIR = "ctd_weights"
CTD_CONFIG = "ctd_config.json"


def _sft_defaults() -> OptimSettings:
    return OptimSettings(learning_rate=1.5e-4, epochs=2.0, batch_size=16, micro_batch_size=1)


@dataclass
class CTDSFTConfig:
    """CTD SFT settings (the ``ctd_sft:`` section of a recipe).

    Attributes:
        data_path: CTD JSONL from ``training.curation`` (``prompt``, ``task_description``).
        output_dir: Run directory.
        ctd: The inference settings trained for (base model, instruction, prefix, input bound).
        train: Optimiser settings (paper: AdamW, lr 1.5e-4, 2 epochs, batch 16).
        lora: LoRA settings (paper: r = 16).
        target_template: Continuation of ``ctd.response_prefix``; ``{task_description}`` is replaced.
        max_examples: Use a seeded random subset of N records (all sources stay represented).
        local_files_only: Never contact the Hub for the base model.
    """

    data_path: str
    output_dir: str
    ctd: CTDConfig
    train: OptimSettings = field(default_factory=_sft_defaults)
    lora: LoraSettings = field(default_factory=LoraSettings)
    target_template: str = " answer the question: {task_description}"
    max_examples: int | None = None
    local_files_only: bool = False

    def __post_init__(self) -> None:
        if "{task_description}" not in self.target_template:
            raise ValueError("target_template must contain {task_description}.")
        if self.ctd.adapter_dir or self.ctd.weights_dir:
            raise ValueError("ctd.adapter_dir / weights_dir describe a trained checkpoint; leave them unset here.")

    def check_paths(self) -> None:
        """Fail before any model loads when the data is missing."""
        if not Path(self.data_path).is_file():
            raise FileNotFoundError(f"data_path {self.data_path} not found; run training.curation first.")


@dataclass
class CTDExample:
    """Token ids of one training sequence; ``labels`` is -100 over the input part."""

    input_ids: list[int]
    labels: list[int]


def load_ctd_records(path: str | Path, max_examples: int | None = None, seed: int = 13) -> list[dict[str, Any]]:
    """CTD records with a non-empty prompt and task description; ``max_examples`` draws a seeded subset.

    Records of held-out template families (``split`` other than ``"train"``) are never trained on.

    A random subset (not the file's head) keeps every source of a mixed file represented.
    """
    records = [r for r in read_jsonl(path) if str(r.get("prompt", "")).strip() and
               str(r.get("task_description", "")).strip() and r.get("split", "train") == "train"]
    if not records:
        raise ValueError(f"{path} has no CTD record with a prompt and a task_description.")
    if max_examples is not None and max_examples < len(records):
        keep = sorted(random.Random(seed).sample(range(len(records)), max_examples))
        records = [records[i] for i in keep]
    return records


def encode_example(descriptor: Any, prompt: str, continuation: str) -> CTDExample:
    """Inference input for ``prompt`` + ``continuation`` + end-of-turn, labels on the continuation only.

    Args:
        descriptor: A ``tpc_core.engine.task.ctd.TaskDescriptor`` (its ``build_chat_inputs`` makes the input).
        prompt: The raw prompt.
        continuation: What should follow the response prefix.
    """
    tokenizer = descriptor.tokenizer
    source = tokenizer(descriptor.build_chat_inputs(prompt), add_special_tokens=False)["input_ids"]
    target = tokenizer(continuation, add_special_tokens=False)["input_ids"]
    if tokenizer.eos_token_id is not None:
        target = [*target, tokenizer.eos_token_id]
    return CTDExample([*source, *target], [-100] * len(source) + target)


class CausalLMLoss:
    """Mean next-token loss over the label tokens of a micro-batch of :class:`CTDExample`."""

    def __init__(self, pad_id: int, device: Any) -> None:
        self.pad_id = pad_id
        self.device = device

    def __call__(self, model: Any, examples: list[CTDExample]) -> tuple[Any, dict[str, float]]:
        import torch  # lazy: loads torch

        width = max(len(e.input_ids) for e in examples)
        input_ids = torch.full((len(examples), width), self.pad_id, dtype=torch.long)
        labels = torch.full((len(examples), width), -100, dtype=torch.long)
        attention = torch.zeros((len(examples), width), dtype=torch.long)
        for row, example in enumerate(examples):  # right padding: positions match an unpadded forward
            input_ids[row, : len(example.input_ids)] = torch.tensor(example.input_ids)
            labels[row, : len(example.labels)] = torch.tensor(example.labels)
            attention[row, : len(example.input_ids)] = 1
        output = model(input_ids=input_ids.to(self.device), attention_mask=attention.to(self.device),
                            labels=labels.to(self.device))
        return output.loss, {}


def load_policy(ctd: CTDConfig, checkpoint_dir: Path, lora: LoraSettings, device: Any, *,
                local_files_only: bool = False, fresh_adapter: bool = True, dtype: Any = None) -> tuple[Any, Any]:
    """The CTD model for training and a ``TaskDescriptor`` around it (tokenizer, chat format).

    ``ctd`` may name an adapter of an earlier run (``checkpoint_dir``-relative); it is loaded trainable.
    """
    import torch  # lazy: loads torch

    from tpc_core.engine.task.ctd import TaskDescriptor  # lazy: loads torch
    from tpc_core.loading.checkpoint import HubOptions, load_ctd_parts  # lazy: loads torch

    base = replace(ctd, adapter_dir=None)
    options = HubOptions(local_files_only=local_files_only, confine_paths=False)
    model, tokenizer = load_ctd_parts(base, checkpoint_dir, options, device, dtype or torch.float32)
    if ctd.adapter_dir:
        from peft import PeftModel  # lazy: loads torch

        model = PeftModel.from_pretrained(model, str(checkpoint_dir / ctd.adapter_dir), is_trainable=True)
    elif fresh_adapter:
        model.requires_grad_(not lora.enabled)
        model = apply_lora(model, lora, task_type="CAUSAL_LM")
    return model, TaskDescriptor(model, tokenizer, ctd, device)


def save_ctd(model: Any, tokenizer: Any, ctd: CTDConfig, lora_enabled: bool, output: Path) -> CTDConfig:
    """Write the adapter (or full weights) and ``ctd_config.json``; returns the config to ship."""
    if lora_enabled:
        model.save_pretrained(str(output / ADAPTER_DIR), save_embedding_layers=False)
        shipped = replace(ctd, adapter_dir=ADAPTER_DIR, weights_dir=None)
    else:
        model.save_pretrained(str(output / WEIGHTS_DIR), safe_serialization=True)
        tokenizer.save_pretrained(str(output / WEIGHTS_DIR))
        shipped = replace(ctd, adapter_dir=None, weights_dir=WEIGHTS_DIR)
    (output / CTD_CONFIG).write_text(json.dumps(asdict(shipped), indent=2) + "\n", encoding="utf-8")
    return shipped


def data_facts(path: str | Path) -> dict[str, Any]:
    """Path, record count and a content hash of a data file (for summaries and model cards)."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    return {"path": str(path), "sha256_16": digest, "records": sum(1 for _ in read_jsonl(path))}


def train_ctd_sft(config: CTDSFTConfig) -> Path:
    """Run CTD SFT; returns the run directory."""
    import torch  # lazy: loads torch
    from accelerate import Accelerator  # lazy: loads torch

    config.check_paths()
    started = time.perf_counter()
    records = load_ctd_records(config.data_path, config.max_examples, config.train.seed)
    accelerator = Accelerator(mixed_precision=config.train.mixed_precision)
    torch.manual_seed(config.train.seed)
    model, descriptor = load_policy(config.ctd, Path.cwd(), config.lora, accelerator.device,
                                    local_files_only=config.local_files_only,
                                    dtype=weights_dtype(config.train) if config.lora.enabled else None)
    examples = [encode_example(descriptor, r["prompt"], config.target_template.format(
        task_description=r["task_description"].strip())) for r in records]
    logger.info("CTD SFT: %s, %d examples (mean %.0f tokens)", config.ctd.base_model, len(examples),
                sum(len(e.input_ids) for e in examples) / len(examples))
    trainable = [p for p in model.parameters() if p.requires_grad]
    pad_id = descriptor.tokenizer.pad_token_id or 0
    result = train_loop(model, trainable, examples, CausalLMLoss(pad_id, accelerator.device), config.train,
                        config.output_dir, accelerator=accelerator)
    if accelerator.is_main_process:
        output = Path(config.output_dir)
        save_ctd(accelerator.unwrap_model(model), descriptor.tokenizer, config.ctd, config.lora.enabled, output)
        summary = {"stage": "ctd_sft", "config": json.loads(json.dumps(asdict(config), default=str)),
                   "data": data_facts(config.data_path), "records": len(records), "steps": result.steps,
                   "resumed_from_step": result.resumed_from,
                   "first_loss": result.losses[0] if result.losses else None,
                   "last_loss": result.losses[-1] if result.losses else None,
                   "train_seconds": round(result.seconds, 1),
                   "total_seconds": round(time.perf_counter() - started, 1), "processes": accelerator.num_processes,
                   "command": " ".join(["python", "-m", "training.ctd_sft", *sys.argv[1:]])}
        (output / "ctd_sft_summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        logger.info("CTD adapter written to %s", output)
    accelerator.wait_for_everyone()
    return Path(config.output_dir)


main = stage_main("training.ctd_sft", "ctd_sft", CTDSFTConfig, train_ctd_sft,
                  "Supervised fine-tuning of the task descriptor (paper Section 3.2).")


if __name__ == "__main__":
    sys.exit(main())
