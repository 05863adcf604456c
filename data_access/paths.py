"""Where the data lives: one root, resolved in one function (:func:`data_root`), for the benchmarks and training.

The root is ``$TPC_DATA`` when set, else ``shared/data`` beside the repository checkout (``../shared/data`` from
the checkout root; see its README). A file-specific variable (``$TPC_QA_DEV``, ``$TPC_SUMM_DEV``) or a command's
own option (``--qa``, ``--nq``, ``--data`` ...) still wins for that one file.

:data:`HELDOUT_IDS` is the list of train rows that the CSE and the request head never trained on (the CSE run's
``validation_ids.json``, the file the model card names): evaluations on "held-out train rows" read it from here.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CHECKOUT", "DATA_ENV", "HELDOUT_IDS", "data_file", "data_root"]

DATA_ENV = "TPC_DATA"
CHECKOUT = Path(__file__).resolve().parents[1]
"""The repository checkout this code runs from."""
HELDOUT_IDS = CHECKOUT / "training" / "results" / "2026-11-23" / "validation_ids.json"


def data_root() -> Path:
    """``$TPC_DATA`` when set, else ``shared/data`` beside the checkout."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    return CHECKOUT.parent / "shared" / "data"


def data_file(name: str, env: str | None = None) -> Path:
    """``$env`` when that variable is set, else ``name`` under :func:`data_root`."""
    if env and os.environ.get(env):
        return Path(os.environ[env])
    return data_root() / name
