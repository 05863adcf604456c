"""The engine-overhead benchmark's clock: exclusive part times that sum to the call, and nothing left behind."""

from __future__ import annotations

import pytest

import tpc_core.engine.reading as stages
from benchmarks.engine_overhead import OTHER, PARTS, PartClock
from benchmarks.engine_split import EncoderClock
from tpc_core.engine.tokens import TokenCounter

TEXT = " ".join(f"Sentence {k} says that the harbour of town {k % 7} handles {k * 13} ships a year." for k in range(60))


def test_part_clock_times_each_part_and_puts_everything_back(tpc_mini) -> None:
    question = "Which town handles 130 ships a year?"
    reference = tpc_mini.compress(TEXT, question=question, rate=0.3)
    split, encode_many = stages.split_sentences, TokenCounter.encode_many
    clock = PartClock(tpc_mini)
    try:
        seconds, parts = clock.call(lambda: tpc_mini.compress(TEXT, question=question, rate=0.3))
        timed = tpc_mini.compress(TEXT, question=question, rate=0.3)
    finally:
        clock.close()
    assert set(parts) <= {*PARTS, OTHER, "model"}
    for part in ("model", "splitting", "tokenizing and counting", "BM25", "windows and pooling",
                 "selection and result", OTHER):
        assert parts[part] > 0, part
    assert sum(parts.values()) == pytest.approx(seconds, rel=0.02)  # exclusive: they add up to the call
    assert timed == reference  # the wrappers change nothing
    assert stages.split_sentences is split and TokenCounter.encode_many is encode_many
    assert tpc_mini.compress(TEXT, question=question, rate=0.3) == reference


def test_encoder_clock_sees_every_pass_once_and_removes_its_hooks(tpc_mini) -> None:
    question = "Which town handles 130 ships a year?"
    clock = EncoderClock(tpc_mini)
    try:
        seconds, encoder = clock.call(lambda: tpc_mini.compress(TEXT, question=question, rate=0.3))
        _, without_passes = clock.call(lambda: tpc_mini.compress("", question=question))
    finally:
        clock.close()
    assert 0 < encoder < seconds  # the passes (contexts and question) inside the call, counted once
    assert without_passes == 0.0  # an empty prompt runs no pass
    clock.seconds = 0.0
    tpc_mini.compress(TEXT, question=question, rate=0.3)
    assert clock.seconds == 0.0  # closed: its hooks are gone
