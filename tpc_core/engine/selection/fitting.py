"""The one budget loop: kept sentences of several parts, the weakest dropped until the parts fit a budget.

A part is what the caller counts as one text: a document of a prompt (joined to the others by a separator), a text
part of a conversation's message (sent apart), a structured tool result. Each part keeps some of its sentences,
named by any sortable id, in their order. :func:`drop_to_fit` recounts a part only when it loses a sentence, with the
caller's counter, and asks the caller's ``total`` for the count of the whole assembly: the parts' sum by default;
parts joined by a separator add what the separator costs (:func:`tpc_core.engine.selection.budget.fit_to_budget`).

Pins are sentences never dropped (a user's request). Floors are groups of parts that keep at least one sentence
together: :func:`fill_floors` gives a group that kept none its strongest sentence, and :func:`drop_to_fit` never
drops a group's last. Where pins and floors alone exceed the budget the loop stops with them, over it.

Context sentences (a section's heading) have no standing of their own: each serves some sentences, and is kept only
while one of them is. A context sentence that serves no kept sentence is dropped before the first count; while the
assembly is over the budget, context goes first, before any sentence, so none outlives the sentences it serves.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

__all__ = ["CountPart", "CountTotal", "Fitted", "drop_to_fit", "droppable", "fill_floors", "summed", "unserved"]

SentenceId = TypeVar("SentenceId", bound="SupportsRichComparison")

CountPart = Callable[[int, Sequence[Any]], int]
"""``count(part, kept)``: the caller's count of part ``part`` keeping the sentences ``kept`` (0 for none)."""

CountTotal = Callable[[Sequence[int], Sequence[Sequence[Any]]], int]
"""``total(counts, kept)``: the count of the whole assembly, from each part's count and kept sentences."""


@dataclass(frozen=True)
class Fitted(Generic[SentenceId]):
    """The parts after the loop.

    Attributes:
        kept: Each part's kept sentences, in their order.
        counts: Each part's count.
        total: The assembly's count: at most the budget, unless pins and floors alone exceed it.
    """

    kept: tuple[tuple[SentenceId, ...], ...]
    counts: tuple[int, ...]
    total: int


def summed(counts: Sequence[int], _kept: Sequence[Sequence[Any]]) -> int:
    """The count of parts sent apart (a conversation's text parts): the sum of their own counts."""
    return sum(counts)


def fill_floors(kept: Sequence[Sequence[SentenceId]], sentences: Sequence[Sequence[SentenceId]],
                floors: Sequence[Collection[int]], strongest: Callable[[SentenceId], Any]
                ) -> list[list[SentenceId]]:
    """``kept`` where every floor group that kept no sentence gets its strongest one (the highest ``strongest``).

    Args:
        kept: Each part's kept sentences, in order (sortable ids).
        sentences: Each part's sentences, kept or not.
        floors: Groups of part indices.
        strongest: A sentence's rank; the highest is taken.
    """
    filled = [list(part) for part in kept]
    for group in floors:
        options = [(part, sentence) for part in group for sentence in sentences[part]]
        if options and not any(filled[part] for part in group):
            part, sentence = max(options, key=lambda option: strongest(option[1]))
            filled[part] = sorted([*filled[part], sentence])
    return filled


def droppable(kept: Sequence[Sequence[SentenceId]], pinned: Sequence[Collection[SentenceId]],
              floors: Sequence[Collection[int]]) -> list[tuple[int, SentenceId]]:
    """The ``(part, sentence)`` pairs the loop may drop: not pinned, and not the last kept sentence of a floor."""
    held = {part for group in floors if sum(len(kept[part]) for part in group) == 1 for part in group}
    return [(part, sentence) for part, sentences in enumerate(kept) if part not in held for sentence in sentences
            if not (part < len(pinned) and sentence in pinned[part])]


def unserved(kept: Sequence[Sequence[SentenceId]], serves: Mapping[SentenceId, Collection[SentenceId]]
             ) -> set[SentenceId]:
    """The kept context sentences that serve no kept sentence (a heading whose section kept nothing)."""
    held = {sentence for part in kept for sentence in part}
    return {sentence for sentence in held if sentence in serves and held.isdisjoint(serves[sentence])}


def drop_to_fit(kept: Sequence[Sequence[SentenceId]], budget: int, count: CountPart, *,
                weakest: Callable[[SentenceId], Any], total: CountTotal = summed,
                pinned: Sequence[Collection[SentenceId]] = (), floors: Sequence[Collection[int]] = (),
                serves: Mapping[SentenceId, Collection[SentenceId]] | None = None) -> Fitted[SentenceId]:
    """Drop the weakest kept sentence, one at a time, until the assembly's count is at most ``budget``.

    Args:
        kept: Each part's kept sentences, in their order.
        budget: The most the assembly may count.
        count: Counts one part from its kept sentences (called again only for the part that lost one).
        weakest: A sentence's rank; the lowest is dropped first (give it a tie-break: the ranks must differ).
        total: Counts the assembly from the parts' counts (default: their sum).
        pinned: Each part's sentences never dropped (parts past its end pin none).
        floors: Groups of part indices whose last kept sentence is never dropped.
        serves: Context sentences (never pinned) and the sentences each serves: one that serves no kept sentence is
            dropped before the first count, and context goes first while the assembly is over ``budget``.

    Returns:
        The kept sentences, the parts' counts and the assembly's: within ``budget``, or over it with only pinned
        sentences and floors' last sentences left.
    """
    context = serves or {}
    orphans = unserved(kept, context)
    parts = [[sentence for sentence in part if sentence not in orphans] for part in kept]
    counts = [count(index, part) for index, part in enumerate(parts)]
    assembly = total(counts, parts)
    while assembly > budget:
        candidates = droppable(parts, pinned, floors)
        if not candidates:
            break
        part, sentence = min(candidates, key=lambda candidate: (candidate[1] not in context, weakest(candidate[1])))
        parts[part].remove(sentence)
        counts[part] = count(part, parts[part])
        assembly = total(counts, parts)
    return Fitted(tuple(tuple(part) for part in parts), tuple(counts), assembly)
