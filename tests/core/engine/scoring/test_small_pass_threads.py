"""Small forward passes run on workers with their own intra-op threads; the caller's torch setting is untouched.

Wiring on the tiny random checkpoint: a forward hook records the thread each pass runs on and the intra-op thread
count it sees there.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest
import torch

from tpc_core.engine.cancellation import Cancelled, run_cancellable
from tpc_core.engine.scoring.threads import SMALL_PASS_TOKENS, pass_threads

TEXT = "The harbour opened at dawn. Boats left for the islands. The market sold fish and bread."


def _record_passes(module):
    """A forward hook on ``module`` recording ``(thread name, intra-op threads, positions)`` of each pass."""
    seen: list[tuple[str, int, int]] = []

    def hook(_module, inputs, _output):
        positions = inputs[0].numel() if inputs and isinstance(inputs[0], torch.Tensor) else -1
        seen.append((threading.current_thread().name, torch.get_num_threads(), positions))

    return seen, module.register_forward_hook(hook)


def _fresh_thread_count() -> int:
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    thread.start()
    thread.join()
    return seen[0]


def test_small_passes_run_on_a_one_thread_worker_and_leave_the_callers_setting(tiny):
    caller = torch.get_num_threads()
    fresh = _fresh_thread_count()
    seen, handle = _record_passes(tiny.encoder.forward_module)
    try:
        tiny.compress(TEXT, question="When did the harbour open?", rate=0.5)
    finally:
        handle.remove()
    small = [(name, threads) for name, threads, positions in seen if 0 < positions <= SMALL_PASS_TOKENS]
    assert small, seen
    assert all(name.startswith("tpc-pass-1") and threads == 1 for name, threads in small), small
    assert torch.get_num_threads() == caller
    assert _fresh_thread_count() == fresh


def test_small_pass_threads_none_runs_every_pass_in_the_callers_thread(tiny):
    seen, handle = _record_passes(tiny.encoder.forward_module)
    try:
        tiny.compress(TEXT, question="When did the harbour open?", rate=0.5, small_pass_threads=None)
    finally:
        handle.remove()
    assert seen
    assert {name for name, _, _ in seen} == {threading.current_thread().name}
    assert {threads for _, threads, _ in seen} == {torch.get_num_threads()}


def test_small_pass_threads_two_gives_the_workers_two_threads(tiny):
    seen, handle = _record_passes(tiny.encoder.forward_module)
    try:
        tiny.compress(TEXT, question="When did the harbour open?", rate=0.5, small_pass_threads=2)
    finally:
        handle.remove()
    assert {(name.split("_")[0], threads) for name, threads, _ in seen} == {("tpc-pass-2", 2)}


def test_large_passes_and_other_devices_stay_in_the_callers_thread():
    assert pass_threads(SMALL_PASS_TOKENS, torch.device("cpu")) == 1
    assert pass_threads(SMALL_PASS_TOKENS + 1, torch.device("cpu")) is None
    assert pass_threads(8, torch.device("cuda")) is None


def test_cancellation_reaches_a_pass_on_a_worker(tiny):
    stop = threading.Event()
    stop.set()
    with pytest.raises(Cancelled):
        run_cancellable(stop, lambda: tiny.encoder.encode_questions(["When did the harbour open?"]))


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "1"])
def test_small_pass_threads_refuses_what_is_not_a_positive_int_or_none(tiny, value):
    with pytest.raises(ValueError, match="small_pass_threads"):
        tiny.compress(TEXT, rate=0.5, small_pass_threads=value)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_runs_small_passes_on_workers_of_its_own(tiny):
    import os

    tiny.encoder.encode_questions(["When did the harbour open?"])  # the parent's workers exist
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe and exits
        try:
            shape = tuple(tiny.encoder.encode_questions(["Where did the boats go?"]).shape)
            os.write(write, repr(shape).encode())
        finally:
            os._exit(0)
    os.close(write)
    for _ in range(600):  # a child whose pass waits on the parent's workers never ends: stop it after a minute
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        pytest.fail("the forked child's small pass never ran")
    reported = os.read(read, 100).decode()
    os.close(read)
    assert status == 0 and reported.startswith("(1, ")
