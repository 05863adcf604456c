"""What every training command does first: log in one format to stderr, and pin torch's CPU threads where asked."""

from __future__ import annotations

import logging
import sys

__all__ = ["LOG_FORMAT", "start_cli"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def start_cli(*, level: int | str = logging.INFO, threads: int | None = None) -> None:
    """Log ``level`` and above to stderr as ``time LEVEL logger: message``; with ``threads``, run torch on that many
    CPU threads (these commands share a small machine; one thread is what their timings assume)."""
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    if threads is not None:
        import torch  # only the commands that ask for threads need torch

        torch.set_num_threads(threads)
