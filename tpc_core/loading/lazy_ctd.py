"""The CTD of a compressor, loaded on first use: prompt-aware users never pay for it.

Thread-safe: the model loads once, and one generation runs at a time per compressor (the CTD tokenizer's padding
settings are set on every call), so a slow prompt-agnostic call never blocks the CSE or prompt-aware calls.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from tpc_core.config import TPCConfig
from tpc_core.engine.task.ctd import TaskDescriptor
from tpc_core.loading.checkpoint import HubOptions, load_ctd_parts

__all__ = ["LazyDescriptor"]


@dataclass
class LazyDescriptor:
    """A checkpoint's task descriptor, loaded on the first :meth:`get` or :meth:`describe`.

    Attributes:
        config: The checkpoint's config (its ``ctd`` section; ``None``: the checkpoint has no CTD).
        checkpoint_dir: Where the checkpoint's files are.
        hub_options: How the base model is fetched.
        device: The device it runs on.
        dtype: Its dtype.
        descriptor: The CTD once loaded (or one given already loaded).
    """

    config: TPCConfig
    checkpoint_dir: Path
    hub_options: HubOptions
    device: torch.device
    dtype: torch.dtype
    descriptor: TaskDescriptor | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def loaded(self) -> bool:
        """Whether the CTD is loaded."""
        return self.descriptor is not None

    def get(self) -> TaskDescriptor:
        """The CTD, loaded on first access.

        Raises:
            ValueError: The checkpoint has no CTD.
        """
        with self.lock:
            return self._load()

    def _load(self) -> TaskDescriptor:
        if self.descriptor is None:
            if self.config.ctd is None:
                raise ValueError(f"Checkpoint {self.config.name!r} has no task descriptor (ctd); pass a question.")
            model, tokenizer = load_ctd_parts(self.config.ctd, self.checkpoint_dir, self.hub_options, self.device,
                                              self.dtype)
            self.descriptor = TaskDescriptor(model, tokenizer, self.config.ctd, self.device)
        return self.descriptor

    def describe(self, prompts: list[str]) -> list[str]:
        """CTD descriptions of whole prompts (one generation at a time)."""
        with self.lock:
            return self._load().describe(prompts)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("lock")
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.lock = threading.Lock()
