"""What every training command does first (log in one format to stderr, pin torch's CPU threads where asked) and
last (print its JSON report, and write it where asked)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

__all__ = ["LOG_FORMAT", "report_json", "start_cli"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def start_cli(*, level: int | str = logging.INFO, threads: int | None = None) -> None:
    """Log ``level`` and above to stderr as ``time LEVEL logger: message``; with ``threads``, run torch on that many
    CPU threads (these commands share a small machine; one thread is what their timings assume)."""
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    if threads is not None:
        import torch  # only the commands that ask for threads need torch

        torch.set_num_threads(threads)


def report_json(report: Any, out: str | None) -> None:
    """Print ``report`` as indented JSON; with ``out``, write the same text there too (its folder made)."""
    text = json.dumps(report, indent=2)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text + "\n", encoding="utf-8")
    print(text)
