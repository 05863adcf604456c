"""One base for the small trained heads that score sentences: their weights, config keys and safetensors file.

A scoring head is an output layer over standardised inputs, linear or after one GELU hidden layer: the lead
correction (:class:`tpc_core.engine.scoring.lead.LeadCorrection`) and the embedding salience head
(:class:`tpc_core.engine.scoring.salience.SalienceHead`) are two small subclasses of :class:`ScoringHead`. A
subclass says what it is in a few class attributes (its ``kind``, its feature names, its config keys, how wide
its inputs are) and how it builds its inputs; the base writes and reads one safetensors file for all of them:

* tensors ``weight``, ``bias``, the standardisation vectors (named by :attr:`ScoringHead.tensor_names`) and,
  for a hidden layer, ``hidden_weight`` and ``hidden_bias``, float32 and contiguous;
* the header's metadata: the caller's provenance strings (command, data, training recipe), then ``kind`` (where
  the head marks its files), ``features`` (the comma-joined feature names it was trained on) and each config
  key, JSON-encoded.

Loading checks the kind, the tensors present, the features and every shape, and says which file and why when
one does not fit. Safetensors only: no pickle is ever read. Finding a checkpoint's file (and keeping it inside
the checkpoint) is the loading package's job (``loading/heads.py``, whose table maps each kind to its class).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import torch

__all__ = ["ScoringHead", "head_metadata", "head_tensors"]

H = TypeVar("H", bound="ScoringHead")


def head_tensors(weight: torch.Tensor, bias: float, hidden_weight: torch.Tensor | None,
                 hidden_bias: torch.Tensor | None, **standardisation: torch.Tensor) -> dict[str, torch.Tensor]:
    """A small scoring head's tensors as saved: output layer, optional hidden layer, and the named
    standardisation vectors, float32 and contiguous."""
    tensors = {"weight": weight, "bias": torch.tensor([float(bias)]), **standardisation}
    if hidden_weight is not None and hidden_bias is not None:
        tensors.update(hidden_weight=hidden_weight, hidden_bias=hidden_bias)
    return {name: tensor.float().contiguous() for name, tensor in tensors.items()}


def head_metadata(path: str | Path) -> dict[str, str]:
    """The metadata strings in a safetensors file's header (empty when it has none); no tensor is read."""
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as handle:
        return dict(handle.metadata() or {})


@dataclass(frozen=True)
class ScoringHead:
    """Output weights over standardised inputs, linear or after one GELU hidden layer.

    Class attributes a subclass sets:
        kind: Its name in the loading table, and the ``kind`` written into its files where :attr:`marks_files`.
        marks_files: Whether its files carry :attr:`kind` (a salience head's files predate the mark: their
            ``kind`` is the training recipe, kept as provenance).
        what: What it is called in messages.
        features: The names of its standardised input columns, written into every file and checked on load.
        tensor_names: The file's names of :attr:`mean` and :attr:`std`.
        config_keys: Further fields saved as metadata (JSON) and read back on load.
        retrain: The command that retrains it, for the message when a file's features are stale.

    Attributes:
        weight: ``(H,)`` output weights after the hidden layer, or ``(width,)`` for a linear head.
        bias: Output intercept.
        mean: ``(F,)`` training mean of each feature.
        std: ``(F,)`` training standard deviation of each (1 where constant).
        hidden_weight: Optional ``(H, width)`` hidden-layer weights.
        hidden_bias: Optional ``(H,)`` hidden-layer biases.
    """

    weight: torch.Tensor
    bias: float
    mean: torch.Tensor
    std: torch.Tensor
    hidden_weight: torch.Tensor | None = None
    hidden_bias: torch.Tensor | None = None

    kind: ClassVar[str] = "scoring_head"
    marks_files: ClassVar[bool] = True
    what: ClassVar[str] = "scoring head"
    features: ClassVar[tuple[str, ...]] = ()
    tensor_names: ClassVar[tuple[str, str]] = ("mean", "std")
    config_keys: ClassVar[tuple[str, ...]] = ()
    retrain: ClassVar[str] = ""

    @classmethod
    def fits_width(cls, width: int) -> bool:
        """Whether an input of ``width`` columns fits this kind of head (default: exactly its features)."""
        return width == len(cls.features)

    def standardised(self, features: torch.Tensor) -> torch.Tensor:
        """``(features - mean) / std``, float32."""
        return (features.float() - self.mean) / self.std

    def output(self, inputs: torch.Tensor) -> torch.Tensor:
        """Raw scores ``(n,)`` of ``(n, width)`` inputs: the hidden layer where there is one, then the output."""
        if self.hidden_weight is not None and self.hidden_bias is not None:
            inputs = torch.nn.functional.gelu(inputs @ self.hidden_weight.T + self.hidden_bias)
        return inputs @ self.weight + self.bias

    def config(self) -> dict[str, Any]:
        """The values of its :attr:`config_keys`."""
        return {key: getattr(self, key) for key in self.config_keys}

    def save(self, path: str | Path, metadata: dict[str, str] | None = None) -> None:
        """Write the head as one safetensors file (``metadata``: provenance strings kept in its header)."""
        from safetensors.torch import save_file

        mean_name, std_name = self.tensor_names
        tensors = head_tensors(self.weight, self.bias, self.hidden_weight, self.hidden_bias,
                               **{mean_name: self.mean, std_name: self.std})
        header = {**(metadata or {}), **({"kind": self.kind} if self.marks_files else {}),
                  "features": ",".join(self.features),
                  **{key: json.dumps(value) for key, value in self.config().items()}}
        save_file(tensors, str(path), metadata=header)

    @classmethod
    def load(cls: type[H], path: str | Path) -> H:
        """Read a head written by :meth:`save`.

        Raises:
            ValueError: The file is not this kind of head, was made with other features, its shapes do not fit
                together, or a config value is not of its key's type.
        """
        from safetensors import safe_open

        mean_name, std_name = cls.tensor_names
        needed = {"weight", "bias", mean_name, std_name}
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
            if cls.marks_files and metadata.get("kind") != cls.kind:
                raise ValueError(f"{path} is not a {cls.what} (its kind is {metadata.get('kind')!r}).")
            names = set(handle.keys())
            if not needed <= names:
                raise ValueError(f"{path} is not a {cls.what}: it holds {sorted(names)}, not {sorted(needed)}.")
            features = metadata.get("features")
            if features != ",".join(cls.features):
                raise ValueError(f"{path} was trained with other layout features ({features}); retrain it with "
                                 f"{cls.retrain}.")
            tensors = {name: handle.get_tensor(name).float() for name in names}
        if not cls._shapes_fit(tensors):
            raise ValueError(f"{path}: inconsistent {cls.what} shapes "
                             f"({ {name: tuple(t.shape) for name, t in tensors.items()} }).")
        return cls(tensors["weight"], float(tensors["bias"].item()), tensors[mean_name], tensors[std_name],
                   tensors.get("hidden_weight"), tensors.get("hidden_bias"), **cls._read_config(metadata, path))

    @classmethod
    def _shapes_fit(cls, tensors: dict[str, torch.Tensor]) -> bool:
        """Whether saved tensors are a linear or a one-hidden-layer head whose input fits :meth:`fits_width`,
        with one mean and one positive spread per feature."""
        weight = tensors["weight"]
        bias = tensors["bias"]
        width = len(cls.features)
        mean_name, std_name = cls.tensor_names
        mean = tensors[mean_name]
        std = tensors[std_name]
        if weight.ndim != 1 or bias.numel() != 1 or mean.shape != (width,) or std.shape != (width,):
            return False
        if not bool((std > 0).all()):
            return False
        hidden_weight = tensors.get("hidden_weight")
        hidden_bias = tensors.get("hidden_bias")
        if hidden_weight is None:
            return cls.fits_width(int(weight.shape[0]))
        return (hidden_bias is not None and hidden_weight.ndim == 2 and hidden_weight.shape[0] == weight.shape[0]
                and hidden_bias.shape == (weight.shape[0],) and cls.fits_width(int(hidden_weight.shape[1])))

    @classmethod
    def _read_config(cls, metadata: dict[str, str], path: str | Path) -> dict[str, Any]:
        """Its config keys' values from a file's metadata (a key the file lacks keeps its field's default).

        Raises:
            ValueError: A value that is not JSON, or not of its field's type.
        """
        defaults = {field.name: field.default for field in fields(cls)}
        config: dict[str, Any] = {}
        for key in cls.config_keys:
            if key not in metadata:
                continue
            try:
                value = json.loads(metadata[key])
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}: {cls.what} config {key}={metadata[key]!r} is not JSON.") from error
            if not isinstance(value, type(defaults[key])):
                raise ValueError(f"{path}: {cls.what} config {key}={metadata[key]!r} is not a "
                                 f"{type(defaults[key]).__name__}.")
            config[key] = value
        return config
