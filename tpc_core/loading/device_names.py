"""The device strings TPC accepts, checked without torch (a command line refuses a typo before any heavy import).

:mod:`tpc_core.loading.devices` resolves them (and ``torch.device`` values) on the machine at hand.
"""

from __future__ import annotations

import re

__all__ = ["ACCEPTED_DEVICES", "check_device_string"]

ACCEPTED_DEVICES = ("auto", "cpu", "cuda", "cuda:N", "mps")
"""The device strings TPC accepts (``N``: a CUDA device index)."""

_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?|mps")


def check_device_string(device: str) -> None:
    """Refuse a string that is not one of :data:`ACCEPTED_DEVICES` (whether this machine has it is not asked).

    Raises:
        ValueError: Naming the accepted strings.
    """
    if not _DEVICE.fullmatch(device):
        raise ValueError(f"device={device!r} is not a device name; use one of {', '.join(ACCEPTED_DEVICES)} "
                         "(auto: the best available).")
