"""Sentence spans for curation: exactly the segmentation the compressor uses at inference.

Training data must be cut like inference input (the CSE learns one embedding per inference sentence), so
this module only adapts ``tpc_core.segmentation.split_sentences`` (default ``nupunkt`` backend).
"""

from __future__ import annotations

from tpc_core.segmentation import split_sentences

__all__ = ["Span", "sentence_spans", "sentences_of"]

Span = tuple[int, int]


def sentence_spans(text: str) -> list[Span]:
    """Sorted, non-overlapping, whitespace-trimmed ``(start, end)`` spans covering all non-space characters."""
    return [(int(start), int(end)) for start, end in split_sentences(text)]


def sentences_of(text: str) -> tuple[list[Span], list[str]]:
    """Spans and their texts."""
    spans = sentence_spans(text)
    return spans, [text[start:end] for start, end in spans]
