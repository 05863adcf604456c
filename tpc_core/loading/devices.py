"""Device and dtype selection: CUDA, then Apple MPS, then CPU; never assumes a GPU.

What ``TPCCompressor.from_pretrained(device=..., dtype=...)`` and every ``--device`` option accept:

* ``device``: ``None`` or ``"auto"`` (the best available: CUDA, then MPS, then the CPU), ``"cpu"``, ``"cuda"``,
  ``"cuda:N"``, ``"mps"``, or a ``torch.device`` of those types. Asking for a device this machine lacks raises a
  ``ValueError`` that names the devices it has (the same message for CUDA and for MPS); a string torch does not
  know, or a device type TPC does not run on, raises one that names the accepted strings.
* ``dtype``: ``None`` or ``"auto"`` (bf16 on CUDA, fp16 where the GPU has no bf16; fp32 on MPS and the CPU),
  ``"fp32"``, ``"bf16"``, ``"fp16"`` (or ``"float32"``, ``"bfloat16"``, ``"float16"``), or a ``torch.dtype``.
  **fp16 on the CPU is allowed, with a warning**: most CPUs have no fp16 arithmetic, so it runs no faster than
  fp32 (often slower) and with less precision; it is kept for CPUs that do have it and for reproducing a GPU's
  fp16 numbers.
"""

from __future__ import annotations

import torch

from tpc_core.loading.device_names import ACCEPTED_DEVICES

__all__ = ["ACCEPTED_DEVICES", "available_devices", "check_device_name", "resolve_device", "resolve_dtype"]

_DTYPES = {"fp32": torch.float32, "float32": torch.float32, "bf16": torch.bfloat16,
           "bfloat16": torch.bfloat16, "fp16": torch.float16, "float16": torch.float16}
_NAMES = {"cuda": "CUDA", "mps": "MPS (Apple silicon)"}


def _mps_available() -> bool:
    return getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()


def available_devices() -> list[str]:
    """The devices this machine can run TPC on, best first (e.g. ``["cuda:0", "cpu"]``)."""
    devices = [f"cuda:{index}" for index in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return [*devices, *(["mps"] if _mps_available() else []), "cpu"]


def check_device_name(device: str | torch.device | None) -> None:
    """Refuse a device string TPC does not accept, without asking whether this machine has it (a Ray driver
    checks ``--device`` for workers on other machines).

    Raises:
        ValueError: A string torch does not know or a device type TPC does not run on (naming the accepted ones).
        TypeError: ``device`` is neither a string nor a ``torch.device``.
    """
    if device is None or device == "auto":
        return
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be a string, a torch.device or None, got {type(device).__name__}.")
    try:
        kind = torch.device(device).type
    except RuntimeError as error:
        raise ValueError(f"device={device!r} is not a device name; use one of {', '.join(ACCEPTED_DEVICES)} "
                         "(auto: the best available).") from error
    if kind not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device={device!r} is not a device TPC runs on; use one of {', '.join(ACCEPTED_DEVICES)} "
                         "(auto: the best available).")


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The requested device, or the best available one when ``device`` is ``None``/``"auto"``.

    Raises:
        ValueError: A device this machine lacks (the message names those it has), a string torch does not know or a
            device type TPC does not run on (the message names :data:`ACCEPTED_DEVICES`).
        TypeError: ``device`` is neither a string nor a ``torch.device``.
    """
    if device is None or device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be a string, a torch.device or None, got {type(device).__name__}.")
    accepted = ", ".join(ACCEPTED_DEVICES)
    try:
        resolved = torch.device(device)
    except RuntimeError as error:
        raise ValueError(f"device={device!r} is not a device name; use one of {accepted} (auto: the best "
                         f"available); this machine has {', '.join(available_devices())}.") from error
    if resolved.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device={device!r} is not a device TPC runs on; use one of {accepted} (auto: the best "
                         f"available); this machine has {', '.join(available_devices())}.")
    present = torch.cuda.is_available() if resolved.type == "cuda" else resolved.type != "mps" or _mps_available()
    if not present:
        raise ValueError(f"device={device!r} was requested but {_NAMES[resolved.type]} is not available on this "
                         f"machine (it has {', '.join(available_devices())}); use device='cpu', or None for the best "
                         "available.")
    if resolved.type == "cuda" and resolved.index is not None and resolved.index >= torch.cuda.device_count():
        raise ValueError(f"device={device!r} was requested but this machine has {torch.cuda.device_count()} CUDA "
                         f"device(s): {', '.join(available_devices())}.")
    return resolved


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """The requested dtype; by default bf16 on CUDA (fp16 without bf16 support) and fp32 elsewhere.

    Warns:
        UserWarning: At the caller's line, for fp16 on the CPU (slow on most CPUs, less precise; see the module
            docstring).

    Raises:
        ValueError: An unknown dtype name (the message names the accepted ones).
    """
    if dtype is None or dtype == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if isinstance(dtype, torch.dtype):
        resolved = dtype
    elif dtype in _DTYPES:
        resolved = _DTYPES[dtype]
    else:
        raise ValueError(f"Unknown dtype {dtype!r}; use one of {sorted(_DTYPES)}, 'auto' or a torch.dtype.")
    if resolved == torch.float16 and device.type == "cpu":
        from tpc_core.diagnostics.caller import warn_at_caller

        warn_at_caller("dtype=fp16 on the CPU: most CPUs have no fp16 arithmetic, so it runs no faster than fp32 "
                       "(often slower) and less precisely; leave dtype=None (fp32 on the CPU) unless this CPU has "
                       "fp16 units.")
    return resolved
