"""Running Python in a fresh process on this checkout (what a user's own script or interpreter sees)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_in_checkout(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python *args`` in a new interpreter, from the checkout's root, with the checkout first on the path (a
    script's own directory would otherwise shadow it with whatever copy of the package is installed)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
