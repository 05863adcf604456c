"""Components derived from recorded ones, with no model call: passage context and answer type.

* ``section_max``: each sentence gets the best cosine z-score of its section (a ``Document [k]`` / ``Passage k``
  block or markdown section, :func:`tpc_core.engine.scoring.coverage.section_ranks`; else its document), so a
  sentence of the passage that answers is lifted even when it does not repeat the question's words;
* ``neighbour``: the better cosine z-score of the sentence before and after it in the same document;
* ``numeric``: 1 for a sentence with a digit when the question asks for a number or a date
  (``when``, ``how many``, ``what year`` ...), else 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import torch

from tpc_core.engine.scoring.coverage import section_ranks
from tpc_core.engine.values import Segmented
from training.scorer.fusion import zscore

__all__ = ["DERIVED", "asks_for_number", "derived_component"]

DERIVED: tuple[str, ...] = ("section_max", "neighbour", "numeric")
_NUMBER_QUESTION = re.compile(
    r"^\W*(?:when\b|what (?:year|date|day|month|time|age|percentage|number|amount)\b|in what year\b|"
    r"how (?:many|much|long|old|far|often|big|tall|large|high|fast)\b)", re.IGNORECASE)
_DIGIT = re.compile(r"\d")


def asks_for_number(question: str) -> bool:
    """Whether the question asks for a number or a date (by its first words)."""
    return bool(_NUMBER_QUESTION.search(question))


def _sections(prompt: Segmented) -> list[tuple[int, int]]:
    """(document, section) of each sentence, flat in sentence order: a section starts at a header sentence
    (rank -1) or at a rank-0 sentence that no header precedes."""
    out = []
    for d, (document, spans) in enumerate(zip(prompt.documents, prompt.spans)):
        section = -1
        previous = None
        for rank in section_ranks(document, spans):
            if rank == -1 or (rank == 0 and previous != -1):
                section += 1
            out.append((d, section))
            previous = rank
    return out


def derived_component(name: str, prompt: Segmented, components: Mapping[str, torch.Tensor],
                      description: str) -> torch.Tensor:
    """One derived component of a prompt (see the module docstring)."""
    cos = zscore(components["cos"])
    n = cos.numel()
    if name == "numeric":
        if not asks_for_number(description):
            return torch.zeros(n, dtype=torch.float64)
        return torch.tensor([1.0 if _DIGIT.search(s) else 0.0 for s in prompt.sentences], dtype=torch.float64)
    if name == "section_max":
        keys = _sections(prompt)
        best: dict[tuple[int, int], float] = {}
        for key, value in zip(keys, cos.tolist()):
            best[key] = max(best.get(key, float("-inf")), value)
        return torch.tensor([best[key] for key in keys], dtype=torch.float64)
    if name == "neighbour":
        documents = [d for d, spans in enumerate(prompt.spans) for _ in spans]
        values = cos.tolist()
        out = []
        for i in range(n):
            around = [values[j] for j in (i - 1, i + 1) if 0 <= j < n and documents[j] == documents[i]]
            out.append(max(around) if around else min(values))
        return torch.tensor(out, dtype=torch.float64)
    raise ValueError(f"unknown derived component {name!r}; known: {DERIVED}")
