"""An index-time head from question-free evidence labels of TRAINING QA data, chosen by leaving sources out.

A context of the qa_dev **train** split is labelled without its questions: a sentence is positive when it is
(part of) a gold supporting sentence of any train question about that context. For each source S, a head is
trained on the contexts of the other sources and scores S's contexts, so the index-time proxy
(:mod:`training.salience.index_proxy`) never scores a context with a head that saw its source's labels.
Caveat: the shipped tpc-mini CSE itself was trained on qa_dev train questions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from training.salience.train import TrainingSet, train_head

__all__ = ["evidence_labels", "leave_source_out_scores"]

_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def evidence_labels(text: str, spans: Sequence[tuple[int, int]], supporting: Sequence[str]) -> torch.Tensor:
    """1.0 for each sentence that is part of, or contains, a gold supporting sentence; else 0.0.

    >>> evidence_labels("A b. C d. E f.", [(0, 4), (5, 9), (10, 14)], ["C d."]).tolist()
    [0.0, 1.0, 0.0]
    """
    gold = [_normal(sentence) for sentence in supporting if len(_normal(sentence)) > 3]
    labels = []
    for start, end in spans:
        sentence = _normal(text[start:end])
        labels.append(float(len(sentence) > 3 and any(sentence in g or g in sentence for g in gold)))
    return torch.tensor(labels)


def leave_source_out_scores(encoded: Mapping[str, Mapping[str, Any]], texts: Mapping[str, str],
                            source_of: Mapping[str, str], supporting: Mapping[str, Sequence[str]], kind: str,
                            seed: int = 0) -> dict[str, list[float]]:
    """Per context id, the scores of a head trained on every other source's contexts (binary evidence labels).

    Args:
        encoded: Per context id: ``spans``, ``embeddings``, ``hand`` (the proxy's cache).
        texts: Per context id, its text.
        source_of: Per context id, its source.
        supporting: Per context id, every train question's supporting sentences together.
        kind: A :data:`training.salience.train.HEAD_KINDS` binary kind.
    """
    labels = {cid: evidence_labels(texts[cid], [tuple(s) for s in item["spans"]], supporting.get(cid, ()))
              for cid, item in encoded.items()}
    scores: dict[str, list[float]] = {}
    for source in sorted(set(source_of.values())):
        train_ids = [cid for cid in encoded if source_of[cid] != source and float(labels[cid].sum()) > 0]
        owner = torch.cat([torch.full((len(labels[cid]),), k, dtype=torch.long) for k, cid in enumerate(train_ids)])
        target = torch.cat([labels[cid] for cid in train_ids])
        data = TrainingSet(torch.cat([encoded[cid]["embeddings"].float() for cid in train_ids]),
                           torch.cat([encoded[cid]["hand"] for cid in train_ids]), target, target, owner,
                           tuple(sorted({source_of[cid] for cid in train_ids})))
        head = train_head(data, kind, seed=seed)
        for cid in encoded:
            if source_of[cid] == source:
                with torch.inference_mode():
                    scores[cid] = head(encoded[cid]["embeddings"].float(), encoded[cid]["hand"]).tolist()
    return scores
