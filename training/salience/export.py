"""Ship a salience head in a checkpoint: train it on the cached features, convert it, record where it came from.

``python -m training.salience.export --kind emb-logreg --only-dataset qmsum --only-dataset squality
--only-dataset scisummnet --lead-weight 1.0 --checkpoint tpc_core/checkpoints/tpc-mini`` trains the head (the
same :func:`training.salience.train.train_head` the recipe study used), converts it to the engine's
:class:`tpc_core.engine.scoring.salience.SalienceHead`, checks that both score identically, writes
``salience_head.safetensors`` into the checkpoint, and sets ``agnostic.salience_head`` /
``agnostic.salience_lead_weight`` and ``extra.training.salience`` (command, data sha256, documents per dataset
and their licences, times) in its ``tpc_config.json``. Nothing outside the checkpoint is referenced.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import torch

from tpc_core.engine.scoring.salience import SalienceHead as EngineHead
from training.common.cli import start_cli
from training.salience.data import DATASET_LICENCES, add_path_arguments
from training.salience.features import load_features, read_labels
from training.salience.train import HEAD_KINDS, SalienceHead, build_training_set, train_head

__all__ = ["HEAD_FILE", "to_engine_head", "main"]

logger = logging.getLogger(__name__)

HEAD_FILE = "salience_head.safetensors"


def to_engine_head(head: SalienceHead) -> EngineHead:
    """The engine's frozen head with the same weights as a trained :class:`training.salience.train.SalienceHead`.

    Raises:
        ValueError: A head without the CSE embedding (the engine head always reads it).
    """
    if not head.config.use_embedding:
        raise ValueError(f"{head.config.kind} does not read the sentence embedding; ship an emb-* head")
    layers = [module for module in head.net if isinstance(module, torch.nn.Linear)]
    mean = head.hand_mean.detach().clone()
    std = head.hand_std.detach().clone()
    if len(layers) == 1:
        return EngineHead(layers[0].weight.detach()[0].clone(), float(layers[0].bias.item()), mean, std)
    hidden, output = layers
    return EngineHead(output.weight.detach()[0].clone(), float(output.bias.item()), mean, std,
                      hidden.weight.detach().clone(), hidden.bias.detach().clone())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.salience.export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_path_arguments(parser, "features", "labels", "input")
    parser.add_argument("--kind", choices=HEAD_KINDS, required=True)
    parser.add_argument("--only-dataset", action="append", default=[], help="train on these meta.datasets only")
    parser.add_argument("--lead-weight", type=float, required=True, help="agnostic.salience_lead_weight")
    parser.add_argument("--redundancy", type=float, default=None, help="agnostic.redundancy (default: unchanged)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--recipe-note", default="", help="why this recipe (goes into extra.training.salience)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Train, convert, verify and write the head and its provenance into the checkpoint."""
    args = parse_args(argv)
    start_cli(threads=1)
    config_path = args.checkpoint / "tpc_config.json"
    if not config_path.is_file():
        raise FileNotFoundError(f"{args.checkpoint} is not a checkpoint: it has no tpc_config.json")
    documents = [d for d in load_features(args.features) if not args.only_dataset or d["dataset"] in args.only_dataset]
    if not documents:
        raise ValueError(f"no cached document of {args.only_dataset} in {args.features}")
    labels = {record["id"]: record for record in read_labels(args.labels)}
    started = time.perf_counter()
    trained = train_head(build_training_set(documents, labels), args.kind, seed=args.seed)
    seconds = time.perf_counter() - started
    head = to_engine_head(trained)
    probe = documents[0]
    with torch.inference_mode():
        expected = trained(probe["embeddings"], probe["hand"])
    if not torch.allclose(head.logits(probe["embeddings"], probe["hand"]), expected, atol=1e-5):
        raise AssertionError("the converted head scores differently from the trained one")
    per_dataset = dict(sorted(Counter(d["dataset"] for d in documents).items()))
    licences = {name: DATASET_LICENCES.get(name, "unknown") for name in per_dataset}
    head.save(args.checkpoint / HEAD_FILE, {"kind": args.kind, "trained_on": ",".join(per_dataset)})
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["agnostic"].update(salience_head=HEAD_FILE, salience_lead_weight=args.lead_weight)
    if args.redundancy is not None:
        config["agnostic"]["redundancy"] = args.redundancy
    command = "python -m training.salience.export " + " ".join(sys.argv[1:] if argv is None else argv)
    config.setdefault("extra", {}).setdefault("training", {})["salience"] = {
        "command": command,
        "kind": args.kind, "hidden": trained.config.hidden, "epochs": trained.config.epochs, "seed": args.seed,
        "lead_weight": args.lead_weight,
        "data": {"path": str(args.input), "sha256": _sha256(args.input) if args.input.is_file() else None,
                 "labels_sha256": _sha256(args.labels), "documents": per_dataset,
                 "sentences": trained.config.sentences, "licences": licences},
        "train_seconds": round(seconds, 1),
        "head_sha256": _sha256(args.checkpoint / HEAD_FILE),
        "note": args.recipe_note,
    }
    config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    logger.info("%s on %s (%d sentences), %.1f s -> %s", args.kind, per_dataset, trained.config.sentences, seconds,
                args.checkpoint / HEAD_FILE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
