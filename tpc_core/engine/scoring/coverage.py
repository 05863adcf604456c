"""Coverage-aware scoring for prompts that ask for no particular content (summaries, bare documents).

Cosine to a description such as "Summarise the main points" does not rank sentences: every sentence is
equally (ir)relevant to it. What a reader of a summary needs is coverage: sentences central to the prompt,
the openings of its sections, and no two sentences saying the same thing. These are pure functions over
the CSE's sentence embeddings; no model runs here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import torch

__all__ = ["SECTION_START", "coverage_scores", "section_ranks"]

# A line that opens a section: "Passage 3:", "Document [2] (Title: ...)", "Article 1", a markdown heading.
SECTION_START = re.compile(r"^[ \t]*(?:(?:Passage|Document|Article|Doc|Source|Text|Story)\s*\[?\d+\]?\b|#{1,6}\s)",
                           re.IGNORECASE | re.MULTILINE)


def section_ranks(document: str, spans: Sequence[tuple[int, int]]) -> list[int]:
    """For each sentence span, its rank (0 = first) within its section of ``document``.

    Sections start at lines matching :data:`SECTION_START`; a document without such lines is one section.
    A sentence that is only a short header (e.g. ``Passage 1:``) gets rank -1: it is no lead sentence, and
    the sentence after it is rank 0.
    """
    starts = [m.start() for m in SECTION_START.finditer(document)]
    ranks = []
    section = -1
    rank = 0
    for start, end in spans:
        current = sum(1 for s in starts if s <= start)
        if current != section:
            section = current
            rank = 0
        text = document[start:end]
        if SECTION_START.match(text) and len(text.split()) <= 6:
            ranks.append(-1)
            continue
        ranks.append(rank)
        rank += 1
    return ranks


def coverage_scores(relevance: torch.Tensor, embeddings: torch.Tensor, ranks: Sequence[int], *,
                    relevance_weight: float, centrality_weight: float, position_weight: float) -> torch.Tensor:
    """``relevance_weight * relevance + centrality_weight * centrality + position_weight * lead``.

    Args:
        relevance: (n,) cosine of each sentence to the task description.
        embeddings: (n, d) L2-normalised sentence embeddings of the whole prompt.
        ranks: Each sentence's rank within its section (:func:`section_ranks`; -1 for a header).
        relevance_weight: Weight of ``relevance``.
        centrality_weight: Weight of the cosine to the normalised mean embedding.
        position_weight: Weight of ``1 / sqrt(1 + rank)`` (0 for a header).
    """
    if len(relevance) != len(embeddings) or len(ranks) != len(embeddings):
        raise ValueError("relevance, embeddings and ranks must describe the same sentences.")
    scores = relevance.float() * relevance_weight
    if centrality_weight and len(embeddings):
        centroid = torch.nn.functional.normalize(embeddings.float().mean(dim=0), dim=0)
        scores = scores + centrality_weight * (embeddings.float() @ centroid)
    if position_weight:
        lead = torch.tensor([1.0 / math.sqrt(1.0 + r) if r >= 0 else 0.0 for r in ranks], dtype=torch.float32,
                            device=scores.device)
        scores = scores + position_weight * lead
    return scores
