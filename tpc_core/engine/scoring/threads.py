"""Where a forward pass runs: small passes on worker threads of their own, with few intra-op threads.

A small pass (a question's tens of tokens, a few new sentences) gains little from torch's intra-op threads, and
when other work holds the cores its threads wait for them at every operator: the pass then costs many times its
own work. So on a CPU a pass of at most :data:`SMALL_PASS_TOKENS` padded positions runs on a worker thread whose
intra-op thread count is the call's ``small_pass_threads`` option (1 by default); larger passes run in the caller's
thread with the caller's setting. ``small_pass_threads=None`` runs every pass in the caller's thread.

Torch's intra-op thread count is per thread (OpenMP's and MKL's settings belong to the calling thread); torch keeps
one process-wide value beside it, which a thread takes on its first parallel operation. A worker sets its own count
and then puts that process-wide value back from a thread of its own, so the caller's threads, present and future,
keep the count they had. A worker runs the pass in a copy of the caller's context (cancellation reaches it).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import torch

__all__ = ["SMALL_PASS_TOKENS", "pass_threads", "run_pass", "small_pass_threads"]

T = TypeVar("T")

SMALL_PASS_TOKENS = 512
"""Most padded positions (rows x longest row) of a pass that runs on the small-pass workers."""

_THREADS: contextvars.ContextVar[int | None] = contextvars.ContextVar("tpc_small_pass_threads", default=1)
_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
_SETTING_LOCK = threading.Lock()  # one worker at a time changes (and puts back) torch's process-wide count


def _forget_pools() -> None:
    """In a forked child: the parent's workers did not come along, so the child makes its own pools."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


@contextlib.contextmanager
def small_pass_threads(threads: int | None) -> Iterator[None]:
    """Within the block, small passes run on workers with ``threads`` intra-op threads (``None``: in the caller's
    thread, with its setting)."""
    token = _THREADS.set(threads)
    try:
        yield
    finally:
        _THREADS.reset(token)


def pass_threads(positions: int, device: torch.device) -> int | None:
    """The intra-op threads a pass of ``positions`` padded positions on ``device`` runs with on a worker, or ``None``
    where it runs in the caller's thread (not a CPU, a large pass, or the option is ``None``)."""
    if device.type != "cpu" or positions > SMALL_PASS_TOKENS:
        return None
    return _THREADS.get()


def run_pass(work: Callable[[], T], positions: int, device: torch.device) -> T:
    """``work()`` (one forward pass of ``positions`` padded positions on ``device``), on a small-pass worker where
    :func:`pass_threads` says so, else here; its result or its exception either way."""
    threads = pass_threads(positions, device)
    if threads is None:
        return work()
    context = contextvars.copy_context()
    return _pool(threads).submit(context.run, work).result()


def _pool(threads: int) -> ThreadPoolExecutor:
    """The workers that run passes with ``threads`` intra-op threads: one per core, so concurrent callers do not
    queue behind each other."""
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix=f"tpc-pass-{threads}",
                                      initializer=_own_threads, initargs=(threads,))
            _POOLS[threads] = pool
        return pool


def _own_threads(threads: int) -> None:
    """Give the calling (worker) thread ``threads`` intra-op threads, leaving torch's process-wide count as it was."""
    with _SETTING_LOCK:
        process_wide = _fresh_thread_count()
        # A thread takes on the process-wide count at its first look at it: that happens here, not after the set.
        torch.get_num_threads()
        torch.set_num_threads(threads)
        _in_own_thread(lambda: torch.set_num_threads(process_wide))


def _fresh_thread_count() -> int:
    """The intra-op thread count a new thread starts with (torch's process-wide value)."""
    seen: list[int] = []
    _in_own_thread(lambda: seen.append(torch.get_num_threads()))
    return seen[0]


def _in_own_thread(work: Callable[[], object]) -> None:
    """Run ``work`` on a short-lived thread of its own and wait for it."""
    thread = threading.Thread(target=work, name="tpc-thread-setting")
    thread.start()
    thread.join()
