"""What every training stage shares: optimiser settings, LoRA settings, stage CLIs, and one resumable loop.

The loop runs through :mod:`accelerate`, so the same script trains on one CPU, one GPU, or many GPUs
(``accelerate launch --config_file ... -m training.cse_train ...`` for DDP / FSDP / DeepSpeed) unchanged.
Batches are sharded across processes by the loop itself (examples ``i`` with ``i % world == rank``), and
``batch_size`` is the effective batch: ``micro_batch_size × accumulation × processes``.

Resuming: every ``save_every_steps`` optimiser steps the loop writes ``accelerator.save_state`` into
``<output_dir>/checkpoints/step-<N>`` plus ``progress.json``; a rerun with the same config restores the
latest one and skips the micro-batches already consumed (the order is a function of ``seed`` and epoch).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from training.common.cli import start_cli
from training.common.config import add_config_arguments, from_dict, parse_override, read_config_file

__all__ = ["LoraSettings", "OptimSettings", "TrainResult", "load_stage_config", "run_stage_cli", "train_loop",
           "apply_lora", "weights_dtype"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class OptimSettings:
    """AdamW with linear warm-up/decay.

    Attributes:
        learning_rate: Peak learning rate.
        epochs: Passes over the data (fractions allowed: 0.5 = half the data once).
        batch_size: Effective batch (examples per optimiser step, all processes together).
        micro_batch_size: Examples per forward pass on one process.
        weight_decay: AdamW weight decay (never applied to the new special-token rows).
        warmup_ratio: Share of the steps spent warming up.
        max_grad_norm: Gradient clipping (0 disables).
        max_steps: Stop after this many optimiser steps (``None``: the epochs decide).
        save_every_steps: Write a resumable state this often (0: only at the end).
        log_every_steps: Log the running loss this often.
        mixed_precision: accelerate's ``no`` / ``bf16`` / ``fp16``.
        seed: Shuffling, sampling and initialisation seed.
    """

    learning_rate: float = 5e-5
    epochs: float = 2.0
    batch_size: int = 32
    micro_batch_size: int = 8
    weight_decay: float = 0.0
    warmup_ratio: float = 0.05
    max_grad_norm: float = 1.0
    max_steps: int | None = None
    save_every_steps: int = 50
    log_every_steps: int = 1
    mixed_precision: Literal["no", "bf16", "fp16"] = "no"
    seed: int = 13

    def __post_init__(self) -> None:
        if self.learning_rate <= 0 or self.epochs <= 0:
            raise ValueError("train.learning_rate and train.epochs must be > 0.")
        if self.micro_batch_size < 1 or self.batch_size < self.micro_batch_size:
            raise ValueError(f"train.batch_size ({self.batch_size}) must be >= train.micro_batch_size "
                             f"({self.micro_batch_size}) >= 1.")
        if self.batch_size % self.micro_batch_size:
            raise ValueError(f"train.batch_size ({self.batch_size}) must be a multiple of train.micro_batch_size "
                             f"({self.micro_batch_size}).")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("train.max_steps must be >= 1 or null.")


@dataclass
class LoraSettings:
    """PEFT LoRA (``enabled: false`` fine-tunes every weight instead).

    Attributes:
        enabled: Train a LoRA adapter (the checkpoint ships only the adapter).
        r: Rank (the paper uses 16).
        alpha: Scaling numerator (``alpha / r`` scales the update).
        dropout: Dropout on the LoRA input.
        target_modules: Module names, or ``["all-linear"]`` for every linear layer but the output head.
    """

    enabled: bool = True
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] = field(default_factory=lambda: ["all-linear"])

    def __post_init__(self) -> None:
        if self.r < 1 or self.alpha < 1:
            raise ValueError("lora.r and lora.alpha must be >= 1.")
        if not 0 <= self.dropout < 1:
            raise ValueError("lora.dropout must be in [0, 1).")
        if not self.target_modules:
            raise ValueError("lora.target_modules must name at least one module (or 'all-linear').")


def weights_dtype(settings: OptimSettings) -> Any:
    """dtype to load frozen base weights in: bf16/fp16 under mixed precision (halves a 7B's memory), else fp32.

    PEFT keeps the LoRA weights themselves in fp32.
    """
    import torch  # lazy: loads torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(settings.mixed_precision, torch.float32)


def apply_lora(model: Any, settings: LoraSettings, task_type: str | None = None) -> Any:
    """Wrap ``model`` with a fresh LoRA adapter (or return it unchanged when LoRA is off)."""
    if not settings.enabled:
        return model
    from peft import LoraConfig, get_peft_model  # lazy: loads torch

    targets: str | list[str] = "all-linear" if settings.target_modules == ["all-linear"] else settings.target_modules
    config = LoraConfig(r=settings.r, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                        target_modules=targets, task_type=task_type)
    return get_peft_model(model, config)


def load_stage_config(path: str | Path | None, config_class: type[T], section: str,
                      overrides: Sequence[str] = ()) -> T:
    """Load a stage config from its own file, or from ``section`` of a whole recipe (``tpc-base.yaml``).

    A recipe file holds one top-level mapping per stage (``cse_train:``, ``ctd_sft:``, ``ctd_rl:``,
    ``export:``); a stage file holds the stage's keys directly. ``--set`` overrides apply to the stage's keys.
    """
    data: dict[str, Any] = read_config_file(Path(path)) if path is not None else {}
    source = str(path) if path is not None else "<defaults>"
    if section in data and isinstance(data[section], dict):
        data = dict(data[section])
        source = f"{source} [{section}]"
    for item in overrides:
        keys, value = parse_override(item)
        node = data
        for key in keys[:-1]:
            node = node.setdefault(key, {})
            if not isinstance(node, dict):
                raise ValueError(f"--set {item!r}: {key!r} is not a section")
        node[keys[-1]] = value
    return from_dict(config_class, data, source=source)


def run_stage_cli(argv: Sequence[str] | None, *, prog: str, description: str, config_class: type[T], section: str,
                  run: Callable[[T, argparse.Namespace], Any],
                  extra_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
                  check: Callable[[T, argparse.Namespace], None] | None = None) -> int:
    """Parse ``--config`` / ``--set``, validate (before any model loads), then ``run(config, args)``.

    Validation is the config class's own checks, then its ``check_paths()`` when it has one, then ``check``.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_config_arguments(parser)
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    if extra_arguments is not None:
        extra_arguments(parser)
    args = parser.parse_args(argv)
    start_cli(level=args.log_level)
    try:
        config = load_stage_config(args.config, config_class, section, args.overrides)
        check_paths = getattr(config, "check_paths", None)
        if callable(check_paths):
            check_paths()
        if check is not None:
            check(config, args)
    except (ValueError, FileNotFoundError) as error:  # a config problem: say what is wrong, no traceback
        parser.exit(2, f"error: {error}\n")
    run(config, args)
    return 0


def stage_main(module: str, section: str, config_class: type[T], train: Callable[[T], Any],
               description: str) -> Callable[[Sequence[str] | None], int]:
    """A training stage's ``main(argv)``: :func:`run_stage_cli` as ``python -m <module>``, then ``train(config)``."""

    def main(argv: Sequence[str] | None = None) -> int:
        return run_stage_cli(argv, prog=f"python -m {module}", section=section, description=description,
                             config_class=config_class, run=lambda config, _: train(config))

    main.__doc__ = f"CLI entry point (``python -m {module}``)."
    return main


@dataclass
class TrainResult:
    """What a finished loop reports (also written to ``<output_dir>/train_log.jsonl``)."""

    steps: int
    losses: list[float]
    seconds: float
    resumed_from: int = 0


def _micro_batches(count: int, micro: int, epochs: float, seed: int, rank: int, world: int) -> list[list[int]]:
    """The whole run's micro-batches for one process: seeded shuffles per epoch, fractional last epoch."""
    batches: list[list[int]] = []
    whole = int(epochs)
    fraction = epochs - int(epochs)
    for epoch in range(whole + (1 if fraction > 0 else 0)):
        order = list(range(count))
        random.Random(seed + epoch).shuffle(order)
        if epoch == whole:
            order = order[: max(1, int(round(count * fraction)))]
        mine = order[rank::world]
        batches.extend(mine[i: i + micro] for i in range(0, len(mine), micro))
    return batches


def train_loop(model: Any, parameters: Sequence[Any] | Sequence[dict[str, Any]], examples: Sequence[Any],
               loss_fn: Callable[[Any, list[Any]], tuple[Any, dict[str, float]]], settings: OptimSettings,
               output_dir: str | Path, *, accelerator: Any = None) -> TrainResult:
    """Optimise ``loss_fn`` over ``examples`` with AdamW, gradient accumulation and resumable states.

    Args:
        model: The ``torch.nn.Module`` holding every trainable parameter (prepared by accelerate).
        parameters: Trainable parameters or AdamW parameter groups.
        examples: Training examples; ``loss_fn`` receives a list of them (one micro-batch).
        loss_fn: ``loss_fn(prepared_model, micro_batch)`` returns the mean loss and scalar metrics to log; it
            must run the forward through the model it is given (the DDP/FSDP wrapper syncs gradients).
        settings: Optimiser settings.
        output_dir: Where ``checkpoints/`` and ``train_log.jsonl`` go.
        accelerator: An ``accelerate.Accelerator`` (one is made from ``settings`` if ``None``).
    """
    import torch  # lazy: loads torch
    from accelerate import Accelerator  # lazy: loads torch
    from transformers import get_linear_schedule_with_warmup  # lazy: loads torch

    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    if accelerator is None:
        accelerator = Accelerator(mixed_precision=settings.mixed_precision)
    world = accelerator.num_processes
    per_step = settings.micro_batch_size * world
    accumulation = max(1, settings.batch_size // per_step)
    batches = _micro_batches(len(examples), settings.micro_batch_size, settings.epochs, settings.seed,
                             accelerator.process_index, world)
    total_steps = _step_count(len(batches), accumulation, settings.max_steps)
    optimizer = torch.optim.AdamW(list(parameters), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(settings.warmup_ratio * total_steps), total_steps)
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    accelerator.register_for_checkpointing(scheduler)

    start_step = _restore(accelerator, output)
    log_path = output / "train_log.jsonl"
    losses: list[float] = []
    started = time.perf_counter()
    model.train()
    step = start_step
    for step in range(start_step, total_steps):
        chunk = batches[step * accumulation: (step + 1) * accumulation]
        if not chunk:
            break
        step_loss, metrics_sum = _accumulate(model, chunk, examples, loss_fn, accelerator)
        if not math.isfinite(step_loss):
            raise FloatingPointError(f"loss became {step_loss} at step {step + 1}; lower train.learning_rate.")
        if settings.max_grad_norm > 0:
            accelerator.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(step_loss)
        record = {"step": step + 1, "of": total_steps, "loss": round(step_loss, 6),
                  "lr": scheduler.get_last_lr()[0], "seconds": round(time.perf_counter() - started, 2),
                  **{k: round(v, 6) for k, v in metrics_sum.items()}}
        if accelerator.is_main_process:
            _log_step(log_path, record, step_loss, metrics_sum, settings.log_every_steps)
        if settings.save_every_steps and (step + 1) % settings.save_every_steps == 0 and step + 1 < total_steps:
            _save(accelerator, output, step + 1)
    accelerator.wait_for_everyone()
    if start_step and log_path.is_file():  # a resumed run reports the whole run, not just its last segment
        losses, seconds = _logged_run(log_path, total_steps)
    else:
        seconds = time.perf_counter() - started
    return TrainResult(steps=total_steps, losses=losses, seconds=seconds, resumed_from=start_step)


def _step_count(micro_batches: int, accumulation: int, max_steps: int | None) -> int:
    """Optimiser steps in the run: every micro-batch once, at most ``max_steps``."""
    total_steps = max(1, math.ceil(micro_batches / accumulation))
    return total_steps if max_steps is None else min(total_steps, max_steps)


def _accumulate(model: Any, chunk: list[list[int]], examples: Sequence[Any],
                loss_fn: Callable[[Any, list[Any]], tuple[Any, dict[str, float]]],
                accelerator: Any) -> tuple[float, dict[str, float]]:
    """Backpropagate one optimiser step's micro-batches; their mean loss and mean metrics."""
    step_loss = 0.0
    metrics_sum: dict[str, float] = {}
    for indices in chunk:
        loss, metrics = loss_fn(model, [examples[i] for i in indices])
        accelerator.backward(loss / len(chunk))
        step_loss += float(loss.detach()) / len(chunk)
        for key, value in metrics.items():
            metrics_sum[key] = metrics_sum.get(key, 0.0) + value / len(chunk)
    return step_loss, metrics_sum


def _log_step(log_path: Path, record: dict[str, Any], loss: float, metrics: dict[str, float],
              log_every_steps: int) -> None:
    """Append a step's record to the run's log, and show it every ``log_every_steps`` steps and at the last."""
    with open(log_path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    step = record["step"]
    if step % log_every_steps == 0 or step == record["of"]:
        logger.info("step %d/%d loss %.4f %s", step, record["of"], loss,
                    " ".join(f"{k}={v:.4f}" for k, v in metrics.items()))


def _logged_run(log_path: Path, total_steps: int) -> tuple[list[float], float]:
    """Losses of steps 1..total (the latest record of each step) and training seconds over all segments."""
    by_step: dict[int, float] = {}
    seconds = 0.0
    previous = 0.0
    for line in log_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["seconds"] < previous:  # a new segment (the run was resumed)
            seconds += previous
        previous = record["seconds"]
        if record["step"] <= total_steps:
            by_step[record["step"]] = record["loss"]
    return [by_step[k] for k in sorted(by_step)], seconds + previous


def _save(accelerator: Any, output: Path, step: int) -> None:
    target = output / "checkpoints" / f"step-{step}"
    accelerator.save_state(str(target))
    if accelerator.is_main_process:
        (target / "progress.json").write_text(json.dumps({"step": step}), encoding="utf-8")
        for old in (output / "checkpoints").glob("step-*"):  # keep only the newest state
            if old != target:
                shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()


def _restore(accelerator: Any, output: Path) -> int:
    states = sorted((output / "checkpoints").glob("step-*/progress.json"),
                    key=lambda p: int(p.parent.name.split("-")[1]))
    if not states:
        return 0
    latest = states[-1].parent
    accelerator.load_state(str(latest))
    step = int(json.loads(states[-1].read_text(encoding="utf-8"))["step"])
    logger.info("resuming from %s (step %d)", latest, step)
    return step
