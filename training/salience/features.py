"""Per-sentence features for the salience head, cached per shard (safetensors) and resumable.

``python -m training.salience.features --labels runs/salience/labels.jsonl.gz --out runs/salience/features``
reads the labelled summ_train rows, splits each document set exactly as the engine does
(:func:`tpc_core.engine.reading.segment` with the ``nupunkt`` splitter and ``compressor.token_counter``; a list input,
so each source document is one document of the prompt), checks that the sentences are the labels' spans, and
stores per sentence:

* ``embeddings``: the tpc-mini CSE's contextual sentence embedding (``compressor.engine.scorer.embed``), float16;
* ``hand``: the hand features of :data:`HAND_FEATURES` (position in document and section, length,
  centrality, size of the document set), float32, computed by :func:`hand_features` (pure, no model).

Documents are capped at their first ``--max-sentences`` sentences (default 300: QMSum meetings average 852,
SQuALITY stories 476) and the big, truncated Multi-News+ subset is subsampled (``--per-subset``), so the source
mix stays balanced and encoding fits a shared CPU. Rows are processed round-robin over subsets, so a run cut
short still holds every subset. Each shard (``shard-00000.safetensors`` + ``.json``) holds ``--shard-size``
document sets; re-running skips finished shards.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from tpc_core import TPCCompressor
from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.reading import segment
from tpc_core.engine.scoring.salience import HAND_FEATURES as _HAND_FEATURES
from tpc_core.engine.scoring.salience import hand_features as _hand_features
from tpc_core.engine.scoring.salience import paragraph_ranks as _paragraph_ranks
from tpc_core.engine.scoring.salience import prompt_features
from tpc_core.segmentation import get_splitter
from training.common.cli import start_cli
from training.salience.data import DEFAULT_FEATURES, add_path_arguments, read_summ_rows

__all__ = [
    "DEFAULT_MAX_SENTENCES",
    "EncodedPrompt",
    "HAND_FEATURES",
    "balanced_order",
    "capped_documents",
    "encode_prompt",
    "hand_features",
    "load_features",
    "paragraph_ranks",
    "read_labels",
    "main",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_SENTENCES = 300
# The engine's own definitions (tpc_core.engine.scoring.salience): training reads exactly the inputs inference computes.
HAND_FEATURES = _HAND_FEATURES
hand_features = _hand_features
paragraph_ranks = _paragraph_ranks


def capped_documents(documents: Sequence[str], spans: Sequence[Sequence[int]], max_sentences: int
                     ) -> tuple[tuple[str, ...], int]:  # fmt: skip
    """The documents cut after the ``max_sentences``-th labelled sentence, and how many sentences remain.

    A document past the cap is dropped whole; the one the cap falls in ends at its last kept sentence.
    """
    kept = list(spans[:max_sentences])
    if len(kept) == len(spans):
        return tuple(documents), len(spans)
    last_document, _, last_end = kept[-1]
    cut = list(documents[: last_document + 1])
    cut[last_document] = cut[last_document][:last_end]
    return tuple(cut), len(kept)


def balanced_order(records: Sequence[Mapping[str, Any]], per_subset: Mapping[str, int]) -> list[Mapping[str, Any]]:
    """Records round-robin over subsets (sorted names), each subset cut to ``per_subset[subset]`` (evenly spaced).

    A subset missing from ``per_subset`` is kept whole. The order is deterministic: file order within a subset.
    """
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[record["subset"]].append(record)
    picked = {}
    for name, group in sorted(groups.items()):
        limit = per_subset.get(name, len(group))
        picked[name] = group if limit >= len(group) else [group[i * len(group) // limit] for i in range(limit)]
    order: list[Mapping[str, Any]] = []
    for position in range(max(map(len, picked.values()), default=0)):
        order.extend(group[position] for _, group in sorted(picked.items()) if position < len(group))
    return order


def load_features(directory: str | Path) -> list[dict[str, Any]]:
    """Every cached document set: ``id, dataset, subset, sentences, embeddings (n, d) float32, hand (n, f),
    prior (n,)``."""
    directory = Path(directory)
    documents = []
    for meta_path in sorted(directory.glob("shard-*.json")):
        meta = json.loads(meta_path.read_text())
        tensors = load_file(str(meta_path.with_suffix(".safetensors")))
        position = 0
        for item in meta["documents"]:
            n = item["sentences"]
            documents.append({**item, "embeddings": tensors["embeddings"][position: position + n].float(),
                              "hand": tensors["hand"][position: position + n],
                              "prior": tensors["prior"][position: position + n]})  # fmt: skip
            position += n
    if not documents:
        raise FileNotFoundError(f"no feature shards in {directory}: run python -m training.salience.features first")
    return documents


def read_labels(path: str | Path) -> list[dict[str, Any]]:
    """Label records of :mod:`training.salience.labels` (read only; a torn file raises).

    Raises:
        FileNotFoundError: No labels at ``path``; the message gives the command that writes them.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no labels at {path}: run python -m training.salience.labels --out {path} --rate 0.2")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


# ------------------------------------------------------------------------------------------------ the CLI


def _rows_by_id(path: Path, wanted: set[str]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in read_summ_rows(path) if row["id"] in wanted}


@dataclass(frozen=True)
class EncodedPrompt:
    """One prompt as the engine splits it, with the head's inputs.

    Attributes:
        segmented: :func:`tpc_core.engine.reading.segment` of the documents (spans, counts, budget).
        embeddings: ``(n, d)`` CSE sentence embeddings, flat order.
        hand: ``(n, len(HAND_FEATURES))`` hand features.
        prior: ``(n,)`` the engine's passage-lead prior (:func:`tpc_core.engine.scoring.salience.passage_lead_scores`).
    """

    segmented: Any
    embeddings: torch.Tensor
    hand: torch.Tensor
    prior: torch.Tensor


def encode_prompt(compressor: Any, documents: tuple[str, ...]) -> EncodedPrompt:
    """Split, count and embed ``documents`` with ``compressor`` (public API only) and compute the hand features.

    Each string of ``documents`` is one document of the prompt, as the engine sees a list input.
    """
    segmented = segment(documents, get_splitter("nupunkt"), compressor.token_counter, CompressionOptions())
    with torch.inference_mode():
        matrix = compressor.engine.scorer.embed([segmented])[0]
    hand, prior = prompt_features(segmented, matrix)
    return EncodedPrompt(segmented, matrix, hand, prior)


def _encode_shard(compressor: Any, records: Sequence[Mapping[str, Any]], rows: Mapping[str, Mapping[str, Any]],
                  max_sentences: int) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:  # fmt: skip
    embeddings = []
    hands = []
    priors = []
    items = []
    for record in records:
        started = time.perf_counter()
        documents, n = capped_documents(rows[record["id"]]["documents"], record["spans"], max_sentences)
        encoded = encode_prompt(compressor, documents)
        segmented = encoded.segmented
        spans = [[d, s, e] for d, doc_spans in enumerate(segmented.spans) for s, e in doc_spans]
        if spans != [list(span) for span in record["spans"][:n]]:
            raise ValueError(f"{record['id']}: the engine's sentences differ from the labels' spans")
        embeddings.append(encoded.embeddings.to(torch.float16))
        hands.append(encoded.hand)
        priors.append(encoded.prior)
        items.append({"id": record["id"], "dataset": record["dataset"], "subset": record["subset"],
                      "permissive": record["permissive"], "sentences": n, "capped": n < len(record["spans"]),
                      "tokens": sum(sum(c) for c in segmented.counts),
                      "seconds": round(time.perf_counter() - started, 3)})
    return {"embeddings": torch.cat(embeddings).contiguous(), "hand": torch.cat(hands).contiguous(),
            "prior": torch.cat(priors).contiguous()}, items


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.salience.features", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    add_path_arguments(parser, "input", "labels")
    parser.add_argument("--out", type=Path, default=DEFAULT_FEATURES)
    parser.add_argument("--max-sentences", type=int, default=DEFAULT_MAX_SENTENCES)
    parser.add_argument("--per-subset", default="multi_news+=300,multi_news=250,ectsum=200,scisummnet=200,qmsum=120",
                        help="subset=N,... documents kept per subset (evenly spaced); others are kept whole")
    parser.add_argument("--shard-size", type=int, default=25)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", default="tpc-mini")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Encode the balanced sample of labelled rows, one shard at a time, skipping shards already written."""
    args = parse_args(argv)
    start_cli(threads=args.threads)
    per_subset = {name: int(n) for name, n in (part.split("=") for part in args.per_subset.split(",") if part)}
    order = balanced_order(read_labels(args.labels), per_subset)
    shards = [order[i: i + args.shard_size] for i in range(0, len(order), args.shard_size)]
    args.out.mkdir(parents=True, exist_ok=True)
    todo = [(k, shard) for k, shard in enumerate(shards) if not (args.out / f"shard-{k:05d}.json").exists()]
    logger.info("%d document sets in %d shards, %d shards to do", len(order), len(shards), len(todo))
    if not todo:
        return 0
    rows = _rows_by_id(args.input, {record["id"] for _, shard in todo for record in shard})
    compressor = TPCCompressor.from_pretrained(args.model)
    started = time.perf_counter()
    sentences = 0
    for done, (k, shard) in enumerate(todo, 1):
        tensors, items = _encode_shard(compressor, shard, rows, args.max_sentences)
        path = args.out / f"shard-{k:05d}.safetensors"
        save_file(tensors, str(path))
        # the .json is written last: a shard counts as done only once both files exist
        path.with_suffix(".json").write_text(json.dumps({"max_sentences": args.max_sentences, "model": args.model,
                                                         "documents": items}) + "\n")  # fmt: skip
        sentences += sum(item["sentences"] for item in items)
        elapsed = time.perf_counter() - started
        logger.info("shard %d (%d/%d): %d sentences so far, %.0f s, about %.0f s left", k, done, len(todo),
                    sentences, elapsed, elapsed / done * (len(todo) - done))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
