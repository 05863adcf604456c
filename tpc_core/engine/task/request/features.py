"""Layout features of a prompt's sentences: what the request heads read beside each sentence's embedding.

Each sentence gets :data:`FEATURE_NAMES` numbers from its text and its neighbours': its position from either end
(capped), question marks, labels and option lines around it, the words it starts with, whose turn of a
flattened chat it sits in (:mod:`tpc_core.engine.task.turns`) and whether it addresses the reader
(:mod:`tpc_core.engine.task.cues`). Pure functions of the texts; the heads that read them are
:class:`tpc_core.engine.task.request_sequence.SequenceRequestHead` (shipped) and the heads ``training/`` fits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import torch

from tpc_core.engine.task.cues import addresses_reader, imperative_start
from tpc_core.engine.task.request.text import (
    LEAD_MARKUP,
    OPTION_MARKER,
    REQUEST_CUE,
    sentence_core,
    without_trailing_markup,
)
from tpc_core.engine.task.turns import read_turns

__all__ = ["FEATURE_NAMES", "POSITION_CAP", "layout_features"]

_LABEL = re.compile(r"^\W{0,3}(?:[A-Za-z]+(?: [A-Za-z]+)?)\s*:")
# Words a written request starts with (after a label such as "Question:").
_ASK_WORDS = ("what|who|whom|whose|when|where|which|why|how|is|are|was|were|do|does|did|can|could|should|would|will|"
              "has|have|name|list|find|extract|give|tell|identify")
_ASKING = re.compile(rf"^\W{{0,3}}(?:[A-Za-z]+\s*:\s*)?(?:{_ASK_WORDS})\b", re.IGNORECASE)
# The request cues in lower case: on a lower-cased ASCII text, a faster search.
_CUE_LOWER = re.compile(REQUEST_CUE.pattern)
_ANSWER_CUE = re.compile(r"^\W{0,4}(?:answer|response|output|assistant|a|your (?:answer|choice|reply)|result|summary|"
                         r"label)\b[\w ]{0,20}\W*$", re.IGNORECASE)
_ASKING_CORE = re.compile(rf"^(?:{_ASK_WORDS}|in which|according to)\b", re.IGNORECASE)
_MARKUP_START = frozenset("<{[\"'#*|`-")
# Positions are counted from either end and capped, so a feature means the same in a short prompt and in a
# 10k-token one (and in the head-and-tail views training uses).
POSITION_CAP = 16
FEATURE_NAMES: tuple[str, ...] = (
    "from_start", "from_end", "first_two", "last_two", "question_mark", "label_colon", "option_marker",
    "log_words", "previous_question_mark", "next_question_mark", "previous_option", "next_option",
    "asking_start", "inner_question_mark", "previous_label_colon",
    "cue_label", "previous_cue_only", "asking_core", "markup_start", "short_line", "next_answer_cue",
    "lower_start", "cue_early", "turn_user", "turn_last_user", "turn_other", "addresses_reader",
    "imperative_start",
)


def layout_features(sentences: Sequence[str]) -> torch.Tensor:
    """Layout features of each sentence of one prompt, in :data:`FEATURE_NAMES` order, as an (n, F) tensor.

    Args:
        sentences: The prompt's sentences in order (all documents, flattened).
    """
    count = len(sentences)
    # A question mark counts before closing markup too: "...?</question>", '...?"', "...? [/INST]".
    turns = read_turns(sentences)
    question = [without_trailing_markup(text).endswith("?") for text in turns.texts]
    option = [OPTION_MARKER.match(s) is not None for s in sentences]
    label = [_LABEL.match(s) is not None for s in sentences]
    cores = [sentence_core(s) for s in sentences]
    words = [s.split() for s in sentences]  # split once: read by four features
    roles = turns.roles
    last_user = max((i for i, role in enumerate(roles) if role == "user" and (i == 0 or roles[i - 1] != "user")),
                    default=count)
    cue_only = [len(split) <= 4 and REQUEST_CUE.search(s) is not None and len(rest.split()) <= 3
                for s, split, (_, rest) in zip(sentences, words, cores)]
    rows = []
    for index, sentence in enumerate(sentences):
        core_label, rest = cores[index]
        stripped = sentence.strip()
        early = " ".join(words[index][:8])
        rows.append([
            min(index, POSITION_CAP) / POSITION_CAP,
            min(count - 1 - index, POSITION_CAP) / POSITION_CAP,
            float(index < 2),
            float(index >= count - 2),
            float(question[index]),
            float(label[index]),
            float(option[index]),
            math.log1p(len(words[index])) / 5.0,
            float(index > 0 and question[index - 1]),
            float(index + 1 < count and question[index + 1]),
            float(index > 0 and option[index - 1]),
            float(index + 1 < count and option[index + 1]),
            float(_ASKING.match(sentence) is not None),
            float("?" in sentence.rstrip()[:-1]),
            float(index > 0 and label[index - 1]),
            float(REQUEST_CUE.search(core_label) is not None),
            float(index > 0 and cue_only[index - 1]),
            float(_ASKING_CORE.match(rest) is not None),
            float(stripped[:1] in _MARKUP_START if stripped else False),
            float(len(words[index]) <= 4),
            float(index + 1 < count and _ANSWER_CUE.match(sentences[index + 1].strip()) is not None),
            float(rest[:1].islower()),
            float((_CUE_LOWER.search(early.lower()) if early.isascii() else REQUEST_CUE.search(early)) is not None),
            float(roles[index] == "user"),
            float(roles[index] == "user" and index >= last_user),
            float(roles[index] in ("system", "assistant")),
            float(addresses_reader(sentence)),
            float(imperative_start(LEAD_MARKUP.sub("", stripped)) or imperative_start(rest)),
        ])
    return torch.tensor(rows, dtype=torch.float32).reshape(count, len(FEATURE_NAMES))
