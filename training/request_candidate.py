"""A candidate checkpoint: a shipped checkpoint with a newly trained request head and its thresholds.

``python -m training.request_candidate --run runs/seq/sequence --out runs/seq/candidate-sequence
[--base tpc_core/checkpoints/tpc-mini]``

The run directory is a ``training.request_head`` output (``request_head.safetensors`` and its summary, which holds
the chosen ``threshold`` and ``neighbour_threshold``). The base checkpoint is copied whole, the head replaced and
``agnostic.request_threshold`` / ``agnostic.request_neighbour_threshold`` set, so the benchmarks
(``--checkpoint DIR``) measure the whole prompt-agnostic path with it before anything ships. The candidate is
loaded once through ``TPCCompressor.from_pretrained`` so a broken one fails here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from tpc_core.config import CONFIG_NAME
from training.request_head import HEAD_FILE, SUMMARY_FILE

__all__ = ["build_candidate", "main"]


def build_candidate(run: str | Path, out: str | Path, base: str | Path = "tpc_core/checkpoints/tpc-mini") -> Path:
    """Copy ``base`` to ``out`` with the run's head and thresholds; returns ``out``.

    Raises:
        FileNotFoundError: The run lacks its head or summary, or the base is not a checkpoint.
        FileExistsError: ``out`` exists and is not an earlier candidate (it has no ``tpc_config.json``).
    """
    run = Path(run)
    out = Path(out)
    base = Path(base)
    for path in (run / HEAD_FILE, run / SUMMARY_FILE, base / CONFIG_NAME):
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found.")
    if out.exists():
        if not (out / CONFIG_NAME).is_file():
            raise FileExistsError(f"{out} exists and is not a checkpoint; choose another --out.")
        shutil.rmtree(out)
    shutil.copytree(base, out)
    summary = json.loads((run / SUMMARY_FILE).read_text(encoding="utf-8"))
    config = json.loads((out / CONFIG_NAME).read_text(encoding="utf-8"))
    agnostic = config["agnostic"]
    shutil.copyfile(run / HEAD_FILE, out / (agnostic.get("request_head") or HEAD_FILE))
    agnostic["request_head"] = agnostic.get("request_head") or HEAD_FILE
    agnostic["request_threshold"] = summary["threshold"]
    agnostic["request_neighbour_threshold"] = summary["neighbour_threshold"]
    (out / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    from tpc_core import TPCCompressor  # lazy: loads torch

    TPCCompressor.from_pretrained(str(out), device="cpu")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="python -m training.request_candidate", description=__doc__)
    parser.add_argument("--run", required=True, help="a training.request_head output directory")
    parser.add_argument("--out", required=True, help="where the candidate checkpoint is written")
    parser.add_argument("--base", default="tpc_core/checkpoints/tpc-mini")
    args = parser.parse_args(argv)
    print(build_candidate(args.run, args.out, args.base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
