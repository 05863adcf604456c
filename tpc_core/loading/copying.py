"""Copying and pickling of objects that hold locks or caches, such as :class:`tpc_core.TPCCompressor`.

Models, tokenizers and configs are plain picklable state and travel by value, so an unpickled or
``copy.deepcopy``-ed compressor works on any machine with this package installed, without the checkpoint
directory. What cannot travel is rebuilt: every ``threading`` lock found in the state (a copy gets a lock of
its own, unheld) and the caches the owner names (rebuilt empty, filled again on first use).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["picklable_state", "restore_state"]

_RLOCK = type(threading.RLock())
_LOCK_TYPES = (type(threading.Lock()), _RLOCK)
_LOCKS_KEY = "__tpc_rebuilt_locks__"


def picklable_state(state: Mapping[str, Any],
                    caches: Mapping[str, Callable[[], Any]] | None = None) -> dict[str, Any]:
    """``state`` (an object's ``__dict__``) without its locks and caches, for ``__getstate__``.

    Args:
        state: The attributes to copy.
        caches: Attributes to leave out, each with the factory that rebuilds it (e.g. ``{"_cache": dict}``).

    Returns:
        A new dict; the lock attributes are recorded by name so :func:`restore_state` can rebuild them.
    """
    caches = caches or {}
    kept: dict[str, Any] = {}
    locks: dict[str, type] = {}
    for name, value in state.items():
        if type(value) in _LOCK_TYPES:
            locks[name] = type(value)
        elif name not in caches:
            kept[name] = value
    kept[_LOCKS_KEY] = [(name, "rlock" if kind is _RLOCK else "lock") for name, kind in locks.items()]
    return kept


def restore_state(target: Any, state: Mapping[str, Any],
                  caches: Mapping[str, Callable[[], Any]] | None = None) -> None:
    """Set ``target``'s attributes from a :func:`picklable_state` result, with new locks and empty caches."""
    values = dict(state)
    locks = values.pop(_LOCKS_KEY, [])
    target.__dict__.update(values)
    for name, kind in locks:
        setattr(target, name, threading.RLock() if kind == "rlock" else threading.Lock())
    for name, factory in (caches or {}).items():
        setattr(target, name, factory())
