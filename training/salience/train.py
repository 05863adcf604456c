"""Salience heads: score each sentence of a prompt with no question, trained on summary labels.

A head maps a sentence's inputs (the CSE embedding and/or the hand features of
:mod:`training.salience.features`) to one score; the engine ranks by it and selects under the budget. Kinds:

* ``hand-logreg``: logistic regression on the hand features (position, centrality, length), oracle labels;
* ``emb-logreg``: logistic regression on [embedding, hand features], oracle labels;
* ``emb-mlp``: one hidden layer on [embedding, hand features], oracle labels;
* ``emb-mlp-listwise``: the same network, a listwise softmax per document against the soft gains
  (``gains_standalone``: ROUGE-1 F1 + ROUGE-2 F1 of each sentence alone, normalised to a distribution).

Binary losses weigh every document equally (each sentence by ``1 / sentences in its document``), so the long
meetings do not drown the news. Training is full-data, deterministic (``torch.manual_seed``, no shuffling
randomness outside the seeded generator) and takes seconds to a minute on one CPU thread.

``python -m training.salience.train --kind emb-mlp --out runs/salience/heads/emb-mlp`` trains on every cached
document (or ``--exclude-dataset`` / ``--only-dataset``) and saves ``head.safetensors`` + ``config.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from training.common.cli import start_cli
from training.salience.data import add_path_arguments
from training.salience.features import HAND_FEATURES, load_features, read_labels

__all__ = ["HEAD_KINDS", "HeadConfig", "SalienceHead", "TrainingSet", "build_training_set", "load_head", "save_head",
           "train_head"]  # fmt: skip

logger = logging.getLogger(__name__)

HEAD_KINDS: tuple[str, ...] = ("hand-logreg", "emb-logreg", "emb-mlp", "emb-mlp-listwise")


@dataclass(frozen=True)
class HeadConfig:
    """What a saved head needs to score: its kind, inputs and the hand features' normalisation.

    Attributes:
        kind: One of :data:`HEAD_KINDS`.
        use_embedding: Whether the CSE embedding is part of the input.
        embedding_dim: Its width (0 without it).
        hand_features: Names of the hand feature columns, in order (:data:`HAND_FEATURES`).
        hand_mean: Training mean of each hand feature.
        hand_std: Training standard deviation of each hand feature (1.0 where it is constant).
        hidden: Hidden units (0: linear).
        target: ``"oracle"`` (binary) or ``"gains_standalone"`` (listwise).
        seed: Torch seed of the initialisation.
        epochs: Passes over the training sentences.
        trained_on: Datasets (``meta.dataset``) of the training documents.
        documents: Training documents.
        sentences: Training sentences.
    """

    kind: str
    use_embedding: bool
    embedding_dim: int
    hand_features: tuple[str, ...]
    hand_mean: tuple[float, ...]
    hand_std: tuple[float, ...]
    hidden: int
    target: str
    seed: int = 0
    epochs: int = 0
    trained_on: tuple[str, ...] = ()
    documents: int = 0
    sentences: int = 0


class SalienceHead(torch.nn.Module):
    """Scores sentences: ``forward(embeddings (n, d), hand (n, f)) -> (n,)`` logits; higher keeps first."""

    def __init__(self, config: HeadConfig) -> None:
        super().__init__()
        if config.kind not in HEAD_KINDS:
            raise ValueError(f"unknown head kind {config.kind!r}; choose from {', '.join(HEAD_KINDS)}")
        self.config = config
        width = (config.embedding_dim if config.use_embedding else 0) + len(config.hand_features)
        if config.hidden:
            self.net = torch.nn.Sequential(torch.nn.Linear(width, config.hidden), torch.nn.GELU(),
                                           torch.nn.Linear(config.hidden, 1))  # fmt: skip
        else:
            self.net = torch.nn.Sequential(torch.nn.Linear(width, 1))
        self.register_buffer("hand_mean", torch.tensor(config.hand_mean, dtype=torch.float32))
        self.register_buffer("hand_std", torch.tensor(config.hand_std, dtype=torch.float32))

    def inputs(self, embeddings: torch.Tensor, hand: torch.Tensor) -> torch.Tensor:
        """The network's input: normalised hand features, after the embedding when the head uses it."""
        normalised = (hand.float() - self.hand_mean) / self.hand_std
        return torch.cat([embeddings.float(), normalised], dim=1) if self.config.use_embedding else normalised

    def forward(self, embeddings: torch.Tensor, hand: torch.Tensor) -> torch.Tensor:
        return self.net(self.inputs(embeddings, hand)).squeeze(-1)


@dataclass(frozen=True)
class TrainingSet:
    """Every training sentence, documents contiguous: inputs, labels and which document each belongs to."""

    embeddings: torch.Tensor
    hand: torch.Tensor
    oracle: torch.Tensor
    gains: torch.Tensor
    document: torch.Tensor
    datasets: tuple[str, ...]


def build_training_set(documents: Sequence[Mapping[str, Any]], labels: Mapping[str, Mapping[str, Any]]) -> TrainingSet:
    """Stack cached documents with their labels (each label list cut to the document's cached sentences).

    Args:
        documents: :func:`training.salience.features.load_features` items.
        labels: Label records by id (:mod:`training.salience.labels`).

    Raises:
        ValueError: No document, or a document without labels.
    """
    if not documents:
        raise ValueError("no training document")
    oracle = []
    gains = []
    owner = []
    for k, document in enumerate(documents):
        record = labels.get(document["id"])
        if record is None:
            raise ValueError(f"{document['id']}: no label record; relabel with training.salience.labels")
        n = document["sentences"]
        chosen = torch.zeros(n)
        chosen[[index for index in record["oracle"] if index < n]] = 1.0
        oracle.append(chosen)
        gains.append(torch.tensor(record["gains_standalone"][:n], dtype=torch.float32))
        owner.append(torch.full((n,), k, dtype=torch.long))
    return TrainingSet(torch.cat([d["embeddings"] for d in documents]).float(),
                       torch.cat([d["hand"] for d in documents]),
                       torch.cat(oracle), torch.cat(gains), torch.cat(owner),
                       tuple(sorted({d["dataset"] for d in documents})))  # fmt: skip


def _listwise_loss(scores: torch.Tensor, gains: torch.Tensor, document: torch.Tensor, documents: int) -> torch.Tensor:
    """Mean over documents of the cross-entropy between ``gains / sum(gains)`` and ``softmax(scores)``."""
    top = torch.full((documents,), float("-inf")).scatter_reduce(0, document, scores.detach(), "amax")
    shifted = scores - top[document]
    log_norm = torch.log(torch.zeros(documents).index_add(0, document, shifted.exp())) + top
    totals = torch.zeros(documents).index_add(0, document, gains)
    target = gains / totals[document].clamp_min(1e-9)
    per_document = torch.zeros(documents).index_add(0, document, -target * (scores - log_norm[document]))
    has_gain = totals > 0
    return per_document[has_gain].mean()


def train_head(data: TrainingSet, kind: str, *, seed: int = 0, epochs: int | None = None, hidden: int = 64,
               lr: float = 3e-3, weight_decay: float = 1e-4, batch_documents: int = 64) -> SalienceHead:  # fmt: skip
    """Fit a head of ``kind`` on ``data``; deterministic for a given seed and data.

    Minibatches are whole documents (``batch_documents`` at a time, in a seeded order), so the listwise loss
    sees complete lists and binary losses weigh documents equally.
    """
    if kind not in HEAD_KINDS:
        raise ValueError(f"unknown head kind {kind!r}; choose from {', '.join(HEAD_KINDS)}")
    torch.manual_seed(seed)
    use_embedding = kind != "hand-logreg"
    hidden_units = hidden if "mlp" in kind else 0
    epochs = epochs if epochs is not None else (30 if hidden_units == 0 else 12)
    mean = data.hand.mean(dim=0)
    std = data.hand.std(dim=0)
    std = torch.where(std > 1e-6, std, torch.ones_like(std))
    documents = int(data.document.max()) + 1
    sizes = torch.bincount(data.document, minlength=documents).float()
    config = HeadConfig(kind=kind, use_embedding=use_embedding,
                        embedding_dim=data.embeddings.shape[1] if use_embedding else 0,
                        hand_features=HAND_FEATURES, hand_mean=tuple(mean.tolist()), hand_std=tuple(std.tolist()),
                        hidden=hidden_units, target="gains_standalone" if kind.endswith("listwise") else "oracle",
                        seed=seed, epochs=epochs, trained_on=data.datasets, documents=documents,
                        sentences=len(data.document))  # fmt: skip
    head = SalienceHead(config)
    optimiser = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=weight_decay)
    starts = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(sizes.long(), 0)])
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(documents, generator=generator)
        for first in range(0, documents, batch_documents):
            batch = order[first: first + batch_documents]
            rows = torch.cat([torch.arange(int(starts[k]), int(starts[k + 1])) for k in batch.tolist()])
            local = torch.repeat_interleave(torch.arange(len(batch)), sizes[batch].long())
            scores = head(data.embeddings[rows], data.hand[rows])
            if config.target == "oracle":
                weights = 1.0 / sizes[data.document[rows]]
                losses = torch.nn.functional.binary_cross_entropy_with_logits(scores, data.oracle[rows],
                                                                              reduction="none")
                loss = (losses * weights).sum() / len(batch)
            else:
                loss = _listwise_loss(scores, data.gains[rows], local, len(batch))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    head.eval()
    return head


def save_head(head: SalienceHead, directory: str | Path) -> Path:
    """Write ``head.safetensors`` and ``config.json`` to ``directory``; returns the directory."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_file({name: tensor.contiguous() for name, tensor in head.state_dict().items()},
              str(directory / "head.safetensors"))  # fmt: skip
    (directory / "config.json").write_text(json.dumps(asdict(head.config), indent=2) + "\n")
    return directory


def load_head(directory: str | Path) -> SalienceHead:
    """A head saved by :func:`save_head`, in eval mode.

    Raises:
        FileNotFoundError: ``directory`` lacks ``config.json`` or ``head.safetensors``.
    """
    directory = Path(directory)
    for name in ("config.json", "head.safetensors"):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory / name} is missing: save a head there with save_head first")
    raw = json.loads((directory / "config.json").read_text())
    config = HeadConfig(**{key: tuple(value) if isinstance(value, list) else value for key, value in raw.items()})
    head = SalienceHead(config)
    head.load_state_dict(load_file(str(directory / "head.safetensors")))
    head.eval()
    return head


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.salience.train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    add_path_arguments(parser, "features", "labels")
    parser.add_argument("--kind", choices=HEAD_KINDS, default="emb-mlp")
    parser.add_argument("--exclude-dataset", action="append", default=[], help="hold out a meta.dataset")
    parser.add_argument("--only-dataset", action="append", default=[], help="train on these meta.datasets only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Train one head on the cached features and save it."""
    args = parse_args(argv)
    start_cli(threads=1)
    documents = [d for d in load_features(args.features) if d["dataset"] not in args.exclude_dataset
                 and (not args.only_dataset or d["dataset"] in args.only_dataset)]  # fmt: skip
    labels = {record["id"]: record for record in read_labels(args.labels)}
    started = time.perf_counter()
    head = train_head(build_training_set(documents, labels), args.kind, seed=args.seed)
    save_head(head, args.out)
    logger.info("%s on %d documents (%s): %.1f s -> %s", args.kind, head.config.documents,
                ", ".join(head.config.trained_on), time.perf_counter() - started, args.out)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
