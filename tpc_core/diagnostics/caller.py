"""Warnings that point at the user's line, not at ours.

A warning raised deep in the library is only useful at the line that made the call. :func:`warn_at_caller` walks
up the stack past every frame inside a *library path*: ``tpc_core`` itself, and any package that wraps it and
said so with :func:`register_library_path` (``tpc_integrations`` registers itself on import). The core never
names its wrappers: the arrow points from the wrapper to the core.
"""

from __future__ import annotations

import sys
import threading
import warnings
from pathlib import Path
from types import FrameType

__all__ = ["caller_stacklevel", "register_library_path", "warn_at_caller"]

_CORE = str(Path(__file__).resolve().parent.parent)
_paths: tuple[str, ...] = (_CORE,)
_lock = threading.Lock()


def register_library_path(path: str | Path) -> None:
    """Treat frames from files under ``path`` as library frames: warnings skip them to reach the caller.

    Raises:
        TypeError: ``path`` is not a string or a path.
    """
    global _paths
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or a Path, got {type(path).__name__}.")
    resolved = str(Path(path).resolve())
    with _lock:
        if resolved not in _paths:
            _paths = (*_paths, resolved)


def caller_stacklevel() -> int:
    """``stacklevel`` (for a ``warnings.warn`` call made by this function's caller) of the first user frame."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    prefixes = _paths
    while frame is not None and frame.f_code.co_filename.startswith(prefixes):
        frame = frame.f_back
        level = level + 1
    return level


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the first frame outside every library path."""
    warnings.warn(message, category, stacklevel=caller_stacklevel())


def __getattr__(name: str) -> object:
    """``library_paths`` (deprecated: nothing in the library read it) still answers, with a warning."""
    if name == "library_paths":
        warnings.warn("tpc_core.diagnostics.caller.library_paths is deprecated and will be removed: nothing in "
                      "tpc-langchain reads it (register_library_path is the way to add a path).", DeprecationWarning,
                      stacklevel=2)
        return lambda: _paths
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
