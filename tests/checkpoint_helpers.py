"""Helpers shared by tests that load edited copies of a checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any


def edited_checkpoint(checkpoint: Path, tmp_path: Path, section: str, **values: Any) -> Path:
    """A copy of ``checkpoint`` under ``tmp_path/ckpt`` whose ``tpc_config.json`` section ``section`` is updated
    with ``values``."""
    root = tmp_path / "ckpt"
    shutil.copytree(checkpoint, root)
    config = json.loads((root / "tpc_config.json").read_text())
    config[section].update(values)
    (root / "tpc_config.json").write_text(json.dumps(config))
    return root
