"""Fit the structural request finder (:class:`tpc_core.engine.task.request_sequence.SequenceRequestHead`) on
encoded prompts.

``training.request_head`` encodes the prompts once (the CSE's context embeddings, cached on disk) and calls
:func:`fit_sequence_head` when the recipe says ``model: sequence``. Each prompt is one sequence of
``[embedding, layout features]`` rows; the tagger is trained with a class-weighted binary cross-entropy over
its sentences (padding masked), AdamW with a cosine learning-rate decay, shuffled mini-batches of prompts. It
checkpoints after every epoch (``resume`` continues from the last one), so an interrupted run loses at most one
epoch.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SequenceFitSettings", "fit_sequence_head", "prompt_inputs"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SequenceFitSettings:
    """How the tagger is shaped and fitted.

    Attributes:
        width: Model width.
        layers: Self-attention layers.
        heads: Attention heads.
        dropout: Dropout while training.
        window: Sentences read at once at inference (and the longest training sequence: a longer view is cut
            into random windows of this length that keep its request when it has one).
        epochs: Passes over the training prompts.
        batch_size: Prompts per step.
        learning_rate: AdamW's peak learning rate.
        weight_decay: AdamW's weight decay.
        seed: Initialisation and shuffling seed.
        checkpoint: Where the state after each epoch is written (``None``: nowhere); a run finds it and resumes.
    """

    width: int = 64
    layers: int = 2
    heads: int = 4
    dropout: float = 0.1
    window: int = 64
    epochs: int = 30
    batch_size: int = 32
    learning_rate: float = 2e-3
    weight_decay: float = 1e-2
    seed: int = 13
    checkpoint: str | None = None


def prompt_inputs(prompt: Any) -> Any:
    """The (n, d + F) input rows of one encoded prompt (``embeddings`` and ``sentences`` attributes)."""
    import torch  # lazy: loads torch

    from tpc_core.engine.task.request import layout_features  # lazy: loads torch

    return torch.cat([prompt.embeddings.float(), layout_features(prompt.sentences)], dim=1)


def _crop(rows: Any, labels: Any, window: int, rng: random.Random) -> tuple[Any, Any]:
    """A window of ``window`` rows from a longer sequence, holding its first request sentence when it has one."""
    count = rows.shape[0]
    if count <= window:
        return rows, labels
    positives = labels.nonzero().flatten().tolist()
    low = 0
    high = count - window
    if positives:
        first = positives[0]
        low = max(0, first - window + 1)
        high = min(high, first)
    start = rng.randint(low, max(low, high))
    return rows[start:start + window], labels[start:start + window]


def fit_sequence_head(prompts: Sequence[Any], settings: SequenceFitSettings,
                      on_epoch: Callable[[int], None] | None = None) -> Any:
    """A :class:`~tpc_core.engine.task.request_sequence.SequenceRequestHead` fitted on encoded prompts (``embeddings``,
    ``sentences`` and ``labels`` attributes).

    Args:
        prompts: The encoded training prompts.
        settings: Shape and fitting settings.
        on_epoch: Called with the number of epochs done, after each epoch's checkpoint is written.

    Raises:
        ValueError: No prompt, or no request sentence (or only request sentences) among them.
    """
    import torch  # lazy: loads torch

    from tpc_core.engine.task.request_sequence import SentenceTagger, SequenceRequestHead  # lazy: loads torch

    if not prompts:
        raise ValueError("No training prompts.")
    torch.manual_seed(settings.seed)
    rng = random.Random(settings.seed)
    data = [(prompt_inputs(p), torch.tensor([float(x) for x in p.labels])) for p in prompts]
    positives = float(sum(float(labels.sum()) for _, labels in data))
    total = float(sum(len(labels) for _, labels in data))
    if positives == 0 or positives == total:
        raise ValueError("The training prompts need both request and non-request sentences.")
    # Request sentences are rare: weigh them up by the square root of the imbalance, so probabilities stay usable
    # for a threshold (as the per-sentence head does).
    positive_weight = torch.tensor(((total - positives) / positives) ** 0.5)
    model = SentenceTagger(data[0][0].shape[1], settings.width, settings.layers, settings.heads, settings.dropout)
    optimiser = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    steps_per_epoch = math.ceil(len(data) / settings.batch_size)
    total_steps = steps_per_epoch * settings.epochs
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / max(1, steps_per_epoch)) * 0.5
        * (1 + math.cos(math.pi * min(step, total_steps) / total_steps)))
    start_epoch = 0
    checkpoint = Path(settings.checkpoint) if settings.checkpoint else None
    if checkpoint is not None and checkpoint.is_file():
        start_epoch = _resume(checkpoint, model, optimiser, schedule, rng)
    for epoch in range(start_epoch, settings.epochs):
        started = time.perf_counter()
        model_loss = 0.0
        seen = 0
        model.train()
        order = list(range(len(data)))
        rng.shuffle(order)
        for first in range(0, len(order), settings.batch_size):
            batch = [_crop(*data[k], settings.window, rng) for k in order[first:first + settings.batch_size]]
            inputs, labels, padding = _padded(batch)
            logits = model(inputs, padding)
            losses = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, pos_weight=positive_weight,
                                                                          reduction="none")
            loss = losses.masked_fill(padding, 0.0).sum() / (~padding).sum()
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            model_loss += float(loss.detach()) * len(batch)
            seen += len(batch)
        logger.info("sequence head: epoch %d/%d loss %.4f (%.1f s)", epoch + 1, settings.epochs, model_loss / seen,
                    time.perf_counter() - started)
        if checkpoint is not None:
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimiser": optimiser.state_dict(),
                        "schedule": schedule.state_dict(), "epoch": epoch + 1, "rng": _rng_list(rng.getstate())},
                       checkpoint)
        if on_epoch is not None:
            on_epoch(epoch + 1)
    return SequenceRequestHead(model, window=settings.window)


def _resume(checkpoint: Path, model: Any, optimiser: Any, schedule: Any, rng: random.Random) -> int:
    """Load the last epoch's checkpoint into the model, optimiser, schedule and ``rng``; the epochs it had done."""
    import torch  # lazy: loads torch

    state = torch.load(checkpoint, weights_only=True)
    model.load_state_dict(state["model"])
    optimiser.load_state_dict(state["optimiser"])
    schedule.load_state_dict(state["schedule"])
    start_epoch = int(state["epoch"])
    rng.setstate(_rng_state(state["rng"]))
    logger.info("sequence head: resumed after epoch %d from %s", start_epoch, checkpoint)
    return start_epoch


def _padded(batch: Sequence[tuple[Any, Any]]) -> tuple[Any, Any, Any]:
    """A batch of cropped prompts as zero-padded inputs and labels, and the padding mask (``True``: padding)."""
    import torch  # lazy: loads torch

    width = max(rows.shape[0] for rows, _ in batch)
    inputs = torch.zeros(len(batch), width, batch[0][0].shape[1])
    labels = torch.zeros(len(batch), width)
    padding = torch.ones(len(batch), width, dtype=torch.bool)
    for row, (rows, row_labels) in enumerate(batch):
        inputs[row, :rows.shape[0]] = rows
        labels[row, :rows.shape[0]] = row_labels
        padding[row, :rows.shape[0]] = False
    return inputs, labels, padding


def _rng_list(state: tuple[Any, ...]) -> list[Any]:
    """``random.getstate()`` as plain lists and ints (a weights-only checkpoint holds no tuples of other types)."""
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _rng_state(value: Sequence[Any]) -> tuple[Any, ...]:
    version, internal, gauss = value
    return int(version), tuple(int(x) for x in internal), gauss
