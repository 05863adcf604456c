"""The request a prompt writes: its sentences' layout features (:mod:`.features`) and the text rules that pick
the request's sentences and give its own words (:mod:`.text`).

The structural request head that reads the features is :mod:`tpc_core.engine.task.request_sequence`; the rules
that judge a generated description against the prompt are :mod:`tpc_core.engine.task.grounding` (re-exported
here too).

The library has no per-sentence request head (``RequestHead``, an MLP over each sentence alone): no shipped or
registered checkpoint uses one. Importing it from here raises :class:`ImportError` naming the version that dropped
it.
"""

from __future__ import annotations

from tpc_core.engine.task.grounding import content_words, is_grounded, match_sentences, request_covered
from tpc_core.engine.task.request.features import FEATURE_NAMES, POSITION_CAP, layout_features
from tpc_core.engine.task.request.text import (
    asks_for_summary,
    complete_request,
    pick_request,
    request_text,
    sentence_core,
)

__all__ = ["DROPPED_PER_SENTENCE_HEAD", "FEATURE_NAMES", "POSITION_CAP", "asks_for_summary", "complete_request",
           "content_words", "is_grounded", "layout_features", "match_sentences", "pick_request", "request_covered",
           "request_text", "sentence_core"]

DROPPED_PER_SENTENCE_HEAD = (
    "The per-sentence request head (RequestHead, an MLP over each sentence alone) was dropped in tpc-langchain "
    "0.1.0: no shipped or registered checkpoint uses it. The checkpoint's request head is the structural one "
    "(tpc_core.engine.task.request_sequence.SequenceRequestHead): train one with python -m training.request_head "
    "--config training/configs/tpc-mini.yaml (model: sequence).")
"""What loading or importing the per-sentence request head says."""


def __getattr__(name: str) -> object:
    if name == "RequestHead":
        raise ImportError(DROPPED_PER_SENTENCE_HEAD, name=name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
