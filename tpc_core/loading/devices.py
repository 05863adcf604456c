"""Device and dtype selection: CUDA, then Apple MPS, then CPU; never assumes a GPU."""

from __future__ import annotations

import torch

__all__ = ["resolve_device", "resolve_dtype"]

_DTYPES = {"fp32": torch.float32, "float32": torch.float32, "bf16": torch.bfloat16,
           "bfloat16": torch.bfloat16, "fp16": torch.float16, "float16": torch.float16}


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """Return the requested device, or the best available one when ``device`` is ``None``/"auto"."""
    if device is None or device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was requested but CUDA is not available; use device='cpu' or None.")
    return resolved


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """Return the requested dtype; by default bf16 on CUDA and fp32 elsewhere (fp16 on CPU is slow)."""
    if dtype is None or dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in _DTYPES:
        raise ValueError(f"Unknown dtype {dtype!r}; use one of {sorted(_DTYPES)} or a torch.dtype.")
    return _DTYPES[dtype]
