"""Finding the task of a prompt that comes with no question: :class:`~.finder.TaskFinder` (the cascade), where a
prompt writes its request (:mod:`.placement`), the request head (:mod:`.request_sequence`) over layout features
(:mod:`.request`, :mod:`.turns`, :mod:`.cues`), the request's own words (:mod:`.request`), the CTD (:mod:`.ctd`), the
causal LM that writes a description when the prompt writes none, and whether that description is grounded in the
prompt (:mod:`.grounding`); saying so when a request may have been missed (:mod:`.missed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (tpc_core.lazy).
_EXPORTS = {
    "DEFAULT_HEAD_FRACTION": "tpc_core.engine.task.ctd",
    "REPETITION_PENALTY": "tpc_core.engine.task.ctd",
    "TaskDescriptor": "tpc_core.engine.task.ctd",
    "bound_prompt": "tpc_core.engine.task.ctd",
    "finish_description": "tpc_core.engine.task.ctd",
    "FoundRequest": "tpc_core.engine.task.finder",
    "MissedRequestWarning": "tpc_core.engine.task.missed",
    "index_time": "tpc_core.engine.task.missed",
    "TaskFinder": "tpc_core.engine.task.finder",
    "FEATURE_NAMES": "tpc_core.engine.task.request",
    "content_words": "tpc_core.engine.task.grounding",
    "is_grounded": "tpc_core.engine.task.grounding",
    "layout_features": "tpc_core.engine.task.request",
    "pick_request": "tpc_core.engine.task.request",
    "request_covered": "tpc_core.engine.task.grounding",
    "request_text": "tpc_core.engine.task.request",
    "SentenceTagger": "tpc_core.engine.task.request_sequence",
    "SequenceRequestHead": "tpc_core.engine.task.request_sequence",
    "is_sequence_head": "tpc_core.engine.task.request_sequence",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["DEFAULT_HEAD_FRACTION", "FEATURE_NAMES", "FoundRequest", "MissedRequestWarning", "REPETITION_PENALTY",
           "SentenceTagger", "SequenceRequestHead", "TaskDescriptor", "TaskFinder", "bound_prompt", "content_words",
           "finish_description", "index_time", "is_grounded", "is_sequence_head", "layout_features", "pick_request",
           "request_covered", "request_text"]

if TYPE_CHECKING:
    from tpc_core.engine.task.ctd import DEFAULT_HEAD_FRACTION as DEFAULT_HEAD_FRACTION
    from tpc_core.engine.task.ctd import REPETITION_PENALTY as REPETITION_PENALTY
    from tpc_core.engine.task.ctd import TaskDescriptor as TaskDescriptor
    from tpc_core.engine.task.ctd import bound_prompt as bound_prompt
    from tpc_core.engine.task.ctd import finish_description as finish_description
    from tpc_core.engine.task.finder import FoundRequest as FoundRequest
    from tpc_core.engine.task.finder import TaskFinder as TaskFinder
    from tpc_core.engine.task.grounding import content_words as content_words
    from tpc_core.engine.task.grounding import is_grounded as is_grounded
    from tpc_core.engine.task.grounding import request_covered as request_covered
    from tpc_core.engine.task.missed import MissedRequestWarning as MissedRequestWarning
    from tpc_core.engine.task.missed import index_time as index_time
    from tpc_core.engine.task.request import FEATURE_NAMES as FEATURE_NAMES
    from tpc_core.engine.task.request import layout_features as layout_features
    from tpc_core.engine.task.request import pick_request as pick_request
    from tpc_core.engine.task.request import request_text as request_text
    from tpc_core.engine.task.request_sequence import SentenceTagger as SentenceTagger
    from tpc_core.engine.task.request_sequence import SequenceRequestHead as SequenceRequestHead
    from tpc_core.engine.task.request_sequence import is_sequence_head as is_sequence_head
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
