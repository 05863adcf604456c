"""The structural request finder: a small transformer over a prompt's sentences.

A head that judges each sentence alone, from its embedding and a few layout features, learns the surfaces of the
layouts it saw. This model reads the prompt as a sequence: every sentence's ``[CSE embedding, layout features]``
is projected, mixed with its neighbours (a width-3 convolution: "the line after ``Question:``"), then two
self-attention layers let each sentence see the whole prompt ("a question that opens the last user turn" against
"a question quoted inside the material"; "the customer's request" against a trailing "Internal notes: check the
docs first"). It tags the sentences that state the request (``probabilities``), which the task finder reads.

Its input is what compression computes anyway: the CSE's context embeddings of the sentences and
:func:`tpc_core.engine.task.request.features.layout_features` (which read positions from either end, capped, and
each sentence's speaker over the whole prompt). A long prompt is read in overlapping windows of ``window``
sentences (each sentence scored by the window where it sits most centrally), so the cost grows linearly with the
prompt, and the model sees sequences as long as those it trained on.

A head file without this kind (the per-sentence head that earlier checkpoints shipped) is refused when loaded,
with the version that dropped it (:data:`tpc_core.engine.task.request.DROPPED_PER_SENTENCE_HEAD`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn

from tpc_core.engine.task.request import DROPPED_PER_SENTENCE_HEAD
from tpc_core.engine.task.request.features import FEATURE_NAMES, layout_features

__all__ = ["KIND", "SequenceRequestHead", "SentenceTagger", "is_sequence_head", "windows"]

KIND = "sequence"
"""The ``kind`` a sequence head's safetensors metadata carries."""


class SentenceTagger(nn.Module):
    """``[embedding, features]`` per sentence -> one request logit per sentence.

    Args:
        input_width: Embedding width plus the number of layout features.
        width: The model's width.
        layers: Self-attention layers.
        heads: Attention heads per layer.
        dropout: Dropout while training.
    """

    def __init__(self, input_width: int, width: int = 64, layers: int = 2, heads: int = 4,
                 dropout: float = 0.1) -> None:
        super().__init__()
        self.project = nn.Linear(input_width, width)
        self.local = nn.Conv1d(width, width, kernel_size=3, padding=1)
        layer = nn.TransformerEncoderLayer(width, heads, dim_feedforward=2 * width, dropout=dropout,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, 1)

    def forward(self, inputs: torch.Tensor, padding: torch.Tensor | None = None) -> torch.Tensor:
        """Logits (B, n) of inputs (B, n, input_width); ``padding`` (B, n) is ``True`` at padded places."""
        hidden = self.project(inputs)
        if padding is not None:
            hidden = hidden.masked_fill(padding.unsqueeze(-1), 0.0)
        hidden = hidden + torch.relu(self.local(hidden.transpose(1, 2)).transpose(1, 2))
        hidden = self.encoder(hidden, src_key_padding_mask=padding)
        return self.out(self.norm(hidden)).squeeze(-1)


def windows(count: int, window: int) -> list[tuple[int, int, int, int]]:
    """How a prompt of ``count`` sentences is read: ``(start, end, keep_start, keep_end)`` per window, where the
    window covers ``[start, end)`` and its logits are kept for ``[keep_start, keep_end)``. Windows overlap by a
    quarter of their length; each sentence's logit comes from a window where it has at least an eighth of a
    window of context on either side (except at the prompt's ends), and the kept parts cover every sentence once.

    >>> windows(5, 8)
    [(0, 5, 0, 5)]
    >>> windows(20, 8)
    [(0, 8, 0, 7), (6, 14, 7, 13), (12, 20, 13, 20)]
    """
    if count <= window:
        return [(0, count, 0, count)]
    stride = max(1, window - window // 4)
    starts = list(range(0, count - window, stride)) + [count - window]
    result: list[tuple[int, int, int, int]] = []
    for number, start in enumerate(starts):
        keep_start = 0 if number == 0 else result[-1][3]
        last = number == len(starts) - 1
        keep_end = count if last else (start + window + starts[number + 1]) // 2
        result.append((start, start + window, keep_start, keep_end))
    return result


class SequenceRequestHead:
    """A trained :class:`SentenceTagger`: the probability that each sentence of a prompt states its request.

    Args:
        model: The tagger (put in eval mode here).
        window: Sentences read at once (see :func:`windows`).
    """

    def __init__(self, model: SentenceTagger, *, window: int = 64) -> None:
        if window < 2:
            raise ValueError(f"window must be >= 2, got {window}.")
        self.model = model.eval()
        self.window = window

    @property
    def input_width(self) -> int:
        """Width of the input ``[embedding, layout features]`` the head was trained on."""
        return int(self.model.project.in_features)

    def inputs(self, embeddings: torch.Tensor, sentences: Sequence[str]) -> torch.Tensor:
        """The (n, d + F) input of one prompt, checked against the head.

        Raises:
            ValueError: The counts differ, or the embedding width does not match the head.
        """
        if len(sentences) != len(embeddings):
            raise ValueError(f"{len(embeddings)} embeddings for {len(sentences)} sentences.")
        features = layout_features(sentences).to(embeddings.device)
        inputs = torch.cat([embeddings.float(), features], dim=1)
        if inputs.shape[1] != self.input_width:
            raise ValueError(f"The request head expects {self.input_width - len(FEATURE_NAMES)}-d embeddings; "
                             f"the encoder gives {embeddings.shape[1]}-d. Train a head for this encoder.")
        return inputs

    def probabilities(self, embeddings: torch.Tensor, sentences: Sequence[str]) -> torch.Tensor:
        """Probability that each sentence states the request (on the host, float32).

        Args:
            embeddings: (n, d) CSE sentence embeddings of one prompt, in sentence order.
            sentences: The same n sentences' texts.
        """
        if not len(sentences):
            return torch.zeros(0)
        inputs = self.inputs(embeddings, sentences)
        spans = windows(len(sentences), self.window)
        parameter = next(self.model.parameters())
        batch = torch.stack([inputs[start:end] for start, end, _, _ in spans])  # every window has one length
        with torch.inference_mode():
            logits = self.model(batch.to(device=parameter.device, dtype=parameter.dtype)).float()
        pieces = [logits[k, keep_start - start: keep_end - start]
                  for k, (start, _, keep_start, keep_end) in enumerate(spans)]
        return torch.sigmoid(torch.cat(pieces)).cpu()

    def save(self, path: str | Path) -> None:
        """Write the head as safetensors; its shape and features go in the metadata."""
        from safetensors.torch import save_file

        model = self.model
        shape = {"input_width": model.project.in_features, "width": model.project.out_features,
                 "layers": len(model.encoder.layers), "heads": model.encoder.layers[0].self_attn.num_heads,
                 "window": self.window}
        tensors = {name: value.detach().float().contiguous().cpu() for name, value in model.state_dict().items()}
        save_file(tensors, str(path), metadata={"kind": KIND, "features": ",".join(FEATURE_NAMES),
                                                "shape": json.dumps(shape)})

    @classmethod
    def load(cls, path: str | Path) -> SequenceRequestHead:
        """Read a head written by :meth:`save`.

        Raises:
            ValueError: The file is not a sequence head (a per-sentence head: :data:`DROPPED_PER_SENTENCE_HEAD`),
                was made with other layout features, or its tensors do not fit the shape it declares.
        """
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            if metadata.get("kind") != KIND and {"weight", "bias"} <= set(handle.keys()):
                raise ValueError(f"{path} holds a per-sentence request head. {DROPPED_PER_SENTENCE_HEAD}")
            if metadata.get("kind") != KIND:
                raise ValueError(f"{path} is not a sequence request head (metadata kind {metadata.get('kind')!r}).")
            if metadata.get("features") != ",".join(FEATURE_NAMES):
                raise ValueError(f"{path} was trained with other layout features ({metadata.get('features')}); "
                                 f"retrain it.")
            tensors = {name: handle.get_tensor(name) for name in handle.keys()}
        try:
            shape = json.loads(metadata.get("shape", ""))
            model = SentenceTagger(int(shape["input_width"]), int(shape["width"]), int(shape["layers"]),
                                   int(shape["heads"]), dropout=0.0)
            model.load_state_dict(tensors, strict=True)
        except (ValueError, KeyError, TypeError, RuntimeError) as error:
            raise ValueError(f"{path}: the sequence head's tensors do not fit its declared shape ({error}).") \
                from error
        return cls(model, window=int(shape["window"]))


def is_sequence_head(path: str | Path) -> bool:
    """Whether a head file holds a sequence head (its metadata says so), without building it."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as handle:
        return (handle.metadata() or {}).get("kind") == KIND
