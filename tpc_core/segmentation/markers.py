"""Chat-template markers: the special tokens and speaker labels that open and close a flattened chat's turns.

A chat rendered to one string keeps its turns only as markup. Every built-in splitter cuts before and after each
marker, so **a marker is always a span of its own** and never part of a sentence:

* an opening marker (``<|im_start|>user``, ``<|start_header_id|>user<|end_header_id|>``, ``<start_of_turn>user``,
  ``<|user|>``, ``[INST]``, ``<<SYS>>``, a ``User:`` label) is followed by the first sentence of its turn;
* a closing marker (``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>``, ``<|end|>``, ``[/INST]``, ``<</SYS>>``,
  ``</s>``) follows the last sentence of its turn, which no longer ends in markup
  (``"Three.<|im_end|>"`` is ``"Three."`` and ``"<|im_end|>"``).

Why spans of their own rather than glued to a sentence: selection keeps every marker whatever it drops
(:func:`is_turn_marker` is what :func:`tpc_core.engine.selection.assembly.apply_budget` forces in, at its token cost),
so a compressed flattened chat still has every turn, each opened and closed as before, in order, even a turn all of
whose sentences were dropped (its markers stay, around empty content); a kept marker keeps the whitespace before it
(:func:`tpc_core.engine.selection.budget.join_kept`), so a ``User:`` label still starts its line. The markers cost their
tokens: a budget that cannot hold them all keeps the first that fit. Glued to the turn's first or last sentence, a
marker would go wherever that sentence went. A sentence also reads as its own words (a request finder sees
``"Who won?"``, not ``"Who won?<|im_end|>"``).

The templates: ChatML, Llama 3 (``<|begin_of_text|>``, ``<|eot_id|>``, ``<|eom_id|>``), Llama 2 and Mistral
(``<s>[INST] <<SYS>> ... <</SYS>> ... [/INST] ... </s>``; ``<s>`` and ``</s>`` count only in a text that holds
``[INST]``, since ``<s>`` is also HTML's strike-through), Gemma (``<bos>``, ``<eos>``), Phi-3 (``<|system|>``,
``<|user|>``, ``<|assistant|>``, ``<|end|>``, ``<|endoftext|>``), and plain ``User:`` / ``Assistant:`` /
``System:`` / ``Human:`` / ``AI:`` labels at the start of a line, which count only where a text labels at least
two different roles (a lone ``User:`` line in a form is not a conversation). Special tokens are cut wherever they
stand, inside code fences too: they are never prose. The templates and role names are the tables of
:mod:`tpc_core.segmentation.vocabulary`: a template added there is cut here.
"""

from __future__ import annotations

from collections.abc import Sequence

from tpc_core.segmentation.contract import Span
from tpc_core.segmentation.vocabulary import vocabulary

__all__ = ["cut_at_markers", "is_turn_marker", "marker_spans"]


def marker_spans(text: str) -> list[Span]:
    """The chat-template markers of ``text``: sorted, non-overlapping, tight ``(start, end)`` spans.

    >>> text = "<|im_start|>user\\nOne. Two.<|im_end|>"
    >>> [text[s:e] for s, e in marker_spans(text)]
    ['<|im_start|>user', '<|im_end|>']
    >>> text = "User: hi there\\n## Assistant: hello"
    >>> [text[s:e] for s, e in marker_spans(text)]
    ['User:', '## Assistant:']
    >>> marker_spans("User: Bob\\nPriority: high")  # one role labelled: not a conversation
    []
    """
    words = vocabulary()
    found = list(words.ungated_spans(text))
    for only_with, gated in words.gated:
        if only_with in text:
            found.extend(match.span() for match in gated.finditer(text))
    first = words.first_label.match(text)
    labels = ([first] if first else []) + list(words.line_label.finditer(text))
    if len({words.label_roles[match.group("name").lower()] for match in labels}) >= 2:
        found.extend(match.span("marker") for match in labels)
    if not found:
        return found
    found.sort()
    spans: list[Span] = []
    for start, end in found:  # markers never overlap, but keep the contract whatever the input
        if not spans or start >= spans[-1][1]:
            spans.append((start, end))
    return spans


def is_turn_marker(sentence: str) -> bool:
    """Whether ``sentence`` is exactly one chat-template marker (what the built-in splitters cut out).

    >>> is_turn_marker("<|im_start|>assistant"), is_turn_marker("<|eot_id|>"), is_turn_marker("User:")
    (True, True, True)
    >>> is_turn_marker("Who won?<|im_end|>"), is_turn_marker("Priority:")
    (False, False)
    """
    text = sentence.strip()
    return len(text) <= 80 and vocabulary().whole.fullmatch(text) is not None


def cut_at_markers(bounds: list[int], markers: Sequence[Span], first: int) -> tuple[list[int], int]:
    """A unit's cut positions with a cut before and after every marker inside it, and none inside a marker.

    Args:
        bounds: ``[unit_start, cuts..., unit_end]``, sorted.
        markers: The text's :func:`marker_spans`.
        first: The first marker that does not end before the unit (units come in order, so the caller keeps it).

    Returns:
        The cuts, and the first marker after the unit.
    """
    end = bounds[-1]
    inside = []
    index = first
    while index < len(markers) and markers[index][0] < end:
        inside.append((markers[index][0], min(markers[index][1], end)))
        index += 1
    if not inside:
        return bounds, index
    cuts = {cut for cut in bounds if not any(left < cut < right for left, right in inside)}
    for left, right in inside:
        cuts.update((left, right))
    return sorted(cuts), index
