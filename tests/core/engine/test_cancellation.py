"""Cooperative cancellation: work run under ``run_cancellable`` stops at its next model step once its caller sets
the event (the context encoder's next forward pass, the task descriptor's next token); other work never stops.
Wiring only, on the tiny random checkpoint."""

from __future__ import annotations

import threading

import pytest

from tpc_core.engine.cancellation import Cancelled, check_cancelled, generation_stop, run_cancellable

TEXT = " ".join(f"Sentence number {k} says something about the weather in town {k}." for k in range(40))


def _count_calls(module, after_first=None):
    """A forward hook on ``module`` counting its calls (and calling ``after_first`` after the first)."""
    calls = []

    def hook(*_):
        calls.append(1)
        if after_first is not None and len(calls) == 1:
            after_first()

    return calls, module.register_forward_hook(hook)


def test_outside_run_cancellable_nothing_is_cancelled():
    check_cancelled()  # no event in this context: a no-op
    assert generation_stop() is None
    stop = threading.Event()
    assert run_cancellable(stop, lambda x: x + 1, 1) == 2
    stop.set()
    check_cancelled()  # the event belonged to that run only


def test_a_set_event_stops_the_work_at_its_next_step():
    stop = threading.Event()
    stop.set()

    def work():
        check_cancelled()
        raise AssertionError("unreachable: the event was set")

    with pytest.raises(Cancelled, match="stopped waiting"):
        run_cancellable(stop, work)


def test_the_context_encoder_stops_before_its_next_forward_pass(tiny):
    stop = threading.Event()
    tiny.encoder.config.batch_size, batch_size = 1, tiny.encoder.config.batch_size  # one window per pass
    calls, handle = _count_calls(tiny.encoder.forward_module, after_first=stop.set)
    try:
        with pytest.raises(Cancelled):
            run_cancellable(stop, tiny.compress, TEXT, "weather?", 20)
    finally:
        handle.remove()
        tiny.encoder.config.batch_size = batch_size
    assert len(calls) == 1
    calls, handle = _count_calls(tiny.encoder.forward_module)
    try:
        tiny.compress(TEXT, "weather?", 20)  # the same work, not cancellable: every pass runs
    finally:
        handle.remove()
    assert len(calls) > 1


def test_the_task_descriptor_stops_at_its_next_generated_token(tiny):
    descriptor = tiny._ctd.get()
    stop = threading.Event()
    calls, handle = _count_calls(descriptor.model, after_first=stop.set)
    try:
        with pytest.raises(Cancelled):
            run_cancellable(stop, descriptor.describe, [TEXT])
    finally:
        handle.remove()
    assert len(calls) == 1
    calls, handle = _count_calls(descriptor.model)
    try:
        descriptor.describe([TEXT], max_new_tokens=4)
    finally:
        handle.remove()
    assert len(calls) > 1
