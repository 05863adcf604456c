"""Pooling a batch's hidden states into span vectors: a sentence's mean (or marker) state, many at once.

:func:`plan_pooling` makes a batch's table on the host before its pass (numpy; nothing read back from a device);
:func:`pool_spans` reads the pass's states with it in one batched product (the CSE's windows and questions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch

__all__ = ["PoolPlan", "plan_pooling", "pool_question", "pool_sentence", "pool_spans"]


def pool_sentence(hidden: torch.Tensor, start: int, end: int, marker: int, pooling: str) -> torch.Tensor:
    """A sentence's vector from one window's hidden states ``(L, d)``: its marker's state, or the mean of its
    own tokens (``pooling="mean"``)."""
    return hidden[marker] if pooling == "marker" else hidden[start: max(end, start + 1)].mean(dim=0)


def pool_question(hidden: torch.Tensor, length: int, suffix_length: int, pooling: str) -> torch.Tensor:
    """A question window's vector from its hidden states ``(L, d)``: the ``<end_of_question>`` state (just
    before the frame suffix), or the mean over its ``length`` real tokens."""
    return hidden[length - suffix_length - 1] if pooling == "marker" else hidden[:length].mean(dim=0)


class PoolPlan(NamedTuple):
    """How :func:`pool_spans` reads one batch's spans, made on the host before the batch's pass.

    Attributes:
        rows: Each span's batch row.
        places: Each span's place among its row's spans.
        markers: Each span's marker position.
        selector: ``(rows, most spans in a row, width)``: 1 on each span's tokens (``None`` for marker pooling).
        sizes: ``(n, 1)``: each span's token count (at least one).
    """

    rows: torch.Tensor
    places: torch.Tensor
    markers: torch.Tensor
    selector: torch.Tensor | None
    sizes: torch.Tensor


def plan_pooling(spans: Sequence[tuple[int, int, int, int]], batch_rows: int, width: int, pooling: str) -> PoolPlan:
    """The :class:`PoolPlan` of ``spans`` (``(row, start, end, marker)``) over a batch of ``batch_rows`` rows of
    ``width`` positions: host tensors, built with numpy, so nothing is read back from a device and each batch's
    table reaches it in a few small copies."""
    count = len(spans)
    table = np.asarray(spans, dtype=np.int64).reshape(count, 4)
    rows = table[:, 0]
    starts = table[:, 1]
    ends = np.maximum(table[:, 2], starts + 1)  # an empty span reads the token at its start
    places = np.zeros(count, dtype=np.int64)
    seen: dict[int, int] = {}
    for index, row in enumerate(rows.tolist()):
        places[index] = seen.get(row, 0)
        seen[row] = places[index] + 1
    selector = None
    if pooling != "marker" and count:
        grid = np.zeros((batch_rows, max(seen.values()), width), dtype=np.float32)
        for row, place, start, end in zip(rows.tolist(), places.tolist(), starts.tolist(), ends.tolist()):
            grid[row, place, start:end] = 1.0
        selector = torch.from_numpy(grid)
    return PoolPlan(torch.from_numpy(rows), torch.from_numpy(places), torch.from_numpy(table[:, 3].copy()), selector,
                    torch.from_numpy(ends - starts)[:, None])


def pool_spans(hidden: torch.Tensor, spans: Sequence[tuple[int, int, int, int]] | PoolPlan,
               pooling: str) -> torch.Tensor:
    """The vectors of many spans of one batch's hidden states ``(B, L, d)`` at once: ``(n, d)``, on ``hidden``'s
    device (what :func:`pool_sentence` gives for each, in one batched product instead of ``n`` small ops).

    Args:
        hidden: A batch's last hidden states.
        spans: ``(row, start, end, marker)`` of each span: its tokens ``start`` to ``end`` (exclusive; an empty
            span reads the token at ``start``) in batch row ``row``, and its marker position; or their
            :func:`plan_pooling` made beforehand (for ``hidden``'s shape).
        pooling: ``"marker"`` (the marker's state) or a mean over the span's tokens.
    """
    if not isinstance(spans, PoolPlan):
        if not spans:
            return hidden.new_zeros((0, hidden.shape[-1]))
        spans = plan_pooling(spans, hidden.shape[0], hidden.shape[1], pooling)
    if not len(spans.rows):
        return hidden.new_zeros((0, hidden.shape[-1]))
    device = hidden.device
    rows = spans.rows.to(device)
    places = spans.places.to(device)
    if pooling == "marker":
        return hidden[rows, spans.markers.to(device)]
    assert spans.selector is not None
    selector = spans.selector.to(device=device, dtype=hidden.dtype)
    return torch.bmm(selector, hidden)[rows, places] / spans.sizes.to(device=device, dtype=hidden.dtype)
