"""The per-sentence request head: an MLP over each sentence's ``[CSE embedding, layout features]``, and its fit.

It judges each sentence alone, so it learns the surfaces of the layouts it saw; the library's request head is the
structural one (:class:`tpc_core.engine.task.request_sequence.SequenceRequestHead`), which reads the prompt as a
sequence. No shipped checkpoint uses this head any more, and the library refuses to load one; it stays here for
research (``python -m training.request_head`` with ``model: mlp``, and as a baseline to measure against).
:func:`load_any_head` reads either kind of head file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tpc_core.engine.task.request import FEATURE_NAMES, layout_features
from tpc_core.engine.task.request_sequence import SequenceRequestHead, is_sequence_head

__all__ = ["RequestHead", "fit_request_head", "load_any_head"]


@dataclass(frozen=True)
class RequestHead:
    """A small classifier over ``[sentence embedding, layout features]`` of each sentence alone: logistic
    regression, or one ReLU hidden layer before it when ``hidden_weight`` is set.

    Attributes:
        weight: (d + F,) output weights (or (H,) after a hidden layer).
        bias: Output intercept.
        hidden_weight: Optional (H, d + F) hidden-layer weights.
        hidden_bias: Optional (H,) hidden-layer biases.
    """

    weight: torch.Tensor
    bias: float
    hidden_weight: torch.Tensor | None = None
    hidden_bias: torch.Tensor | None = None

    @property
    def input_width(self) -> int:
        """Width of the input ``[embedding, layout features]`` the head was trained on."""
        return int(self.weight.shape[0] if self.hidden_weight is None else self.hidden_weight.shape[1])

    def logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Raw scores of (n, d + F) inputs."""
        hidden = inputs.float()
        if self.hidden_weight is not None:
            hidden = torch.relu(hidden @ self.hidden_weight.float().T + self.hidden_bias.float())
        return hidden @ self.weight.float() + self.bias

    def probabilities(self, embeddings: torch.Tensor, sentences: Sequence[str]) -> torch.Tensor:
        """Probability that each sentence states the request.

        Args:
            embeddings: (n, d) L2-normalised CSE sentence embeddings of one prompt.
            sentences: The same n sentences' texts.

        Raises:
            ValueError: If the embedding width does not match the head.
        """
        if len(sentences) != len(embeddings):
            raise ValueError(f"{len(embeddings)} embeddings for {len(sentences)} sentences.")
        if not len(sentences):
            return torch.zeros(0)
        inputs = torch.cat([embeddings.float(), layout_features(sentences)], dim=1)
        if inputs.shape[1] != self.input_width:
            raise ValueError(f"The request head expects {self.input_width - len(FEATURE_NAMES)}-d embeddings; "
                             f"the encoder gives {embeddings.shape[1]}-d. Train a head for this encoder.")
        return torch.sigmoid(self.logits(inputs))

    def save(self, path: str | Path) -> None:
        """Write the head as safetensors (``weight``, ``bias``)."""
        from safetensors.torch import save_file

        tensors = {"weight": self.weight.detach().float().contiguous(), "bias": torch.tensor([float(self.bias)])}
        if self.hidden_weight is not None and self.hidden_bias is not None:
            tensors.update(hidden_weight=self.hidden_weight.detach().float().contiguous(),
                           hidden_bias=self.hidden_bias.detach().float().contiguous())
        save_file(tensors, str(path), metadata={"features": ",".join(FEATURE_NAMES)})

    @classmethod
    def load(cls, path: str | Path) -> RequestHead:
        """Read a head written by :meth:`save`.

        Raises:
            ValueError: If the file lacks ``weight`` / ``bias`` or was made with other layout features.
        """
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as handle:
            names = set(handle.keys())
            if not {"weight", "bias"} <= names:
                raise ValueError(f"{path} is not a request head: it holds {sorted(names)}, not weight and bias.")
            features = (handle.metadata() or {}).get("features")
            if features is not None and features != ",".join(FEATURE_NAMES):
                raise ValueError(f"{path} was trained with other layout features ({features}); retrain it.")
            weight = handle.get_tensor("weight")
            bias = handle.get_tensor("bias")
            hidden = (handle.get_tensor("hidden_weight"), handle.get_tensor("hidden_bias")) \
                if {"hidden_weight", "hidden_bias"} <= names else (None, None)
        if weight.ndim != 1 or bias.numel() != 1:
            raise ValueError(f"{path}: weight must be 1-D and bias a single number.")
        if hidden[0] is not None and (hidden[0].ndim != 2 or hidden[0].shape[0] != weight.shape[0]
                                      or hidden[1].shape != (weight.shape[0],)):
            raise ValueError(f"{path}: hidden_weight must be (H, d + F) and hidden_bias (H,) with H = len(weight).")
        return cls(weight.float(), float(bias.item()), *hidden)


def fit_request_head(prompts: Sequence[Any], *, hidden: int, iterations: int, l2: float, seed: int) -> RequestHead:
    """A per-sentence request head fitted full-batch on encoded prompts' sentence labels.

    Args:
        prompts: Encoded prompts (``embeddings``, ``sentences`` and ``labels`` attributes:
            :class:`training.request_head.EncodedPrompt`).
        hidden: Units of the ReLU hidden layer (0: a logistic regression, fitted by L-BFGS).
        iterations: Optimiser iterations (L-BFGS steps, or full-batch Adam steps with a hidden layer).
        l2: Weight decay.
        seed: Initialisation seed of the hidden layer.

    Raises:
        ValueError: The prompts hold no request sentence, or only request sentences.
    """
    inputs = torch.cat([torch.cat([p.embeddings.float(), layout_features(p.sentences)], dim=1) for p in prompts])
    labels = torch.tensor([float(label) for p in prompts for label in p.labels])
    positives = float(labels.sum())
    if positives == 0 or positives == len(labels):
        raise ValueError("The training prompts need both request and non-request sentences.")
    # Request sentences are rare (about 1 in 40): weigh them up, by the square root of the imbalance only, so
    # probabilities stay usable for a threshold.
    positive_weight = torch.tensor(((len(labels) - positives) / positives) ** 0.5)
    torch.manual_seed(seed)
    width = inputs.shape[1]
    if hidden:
        hidden_weight = torch.nn.Parameter(torch.randn(hidden, width) * (2.0 / width) ** 0.5)
        hidden_bias = torch.nn.Parameter(torch.zeros(hidden))
        weight = torch.nn.Parameter(torch.randn(hidden) * (1.0 / hidden) ** 0.5)
    else:
        hidden_weight = hidden_bias = None
        weight = torch.nn.Parameter(torch.zeros(width))
    bias = torch.nn.Parameter(torch.zeros(1))
    parameters = [p for p in (hidden_weight, hidden_bias, weight, bias) if p is not None]

    def loss() -> Any:
        head = RequestHead(weight, bias, hidden_weight, hidden_bias)
        value = torch.nn.functional.binary_cross_entropy_with_logits(head.logits(inputs), labels,
                                                                     pos_weight=positive_weight)
        return value + l2 * sum(p.pow(2).sum() for p in parameters if p.ndim > 1 or p is weight)

    if hidden:
        optimiser = torch.optim.Adam(parameters, lr=1e-2)
        for _ in range(iterations):
            optimiser.zero_grad()
            value = loss()
            value.backward()
            optimiser.step()
    else:
        lbfgs = torch.optim.LBFGS(parameters, max_iter=iterations, line_search_fn="strong_wolfe")

        def closure() -> Any:
            lbfgs.zero_grad()
            value = loss()
            value.backward()
            return value

        lbfgs.step(closure)
    detach = (lambda t: None if t is None else t.detach())
    return RequestHead(weight.detach(), float(bias.detach()), detach(hidden_weight), detach(hidden_bias))


def load_any_head(path: str | Path) -> RequestHead | SequenceRequestHead:
    """The request head in ``path``, of either kind (the file's metadata says which): a head to measure against."""
    return SequenceRequestHead.load(path) if is_sequence_head(path) else RequestHead.load(path)
