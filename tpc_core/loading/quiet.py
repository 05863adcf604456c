"""Model loading without third-party chatter: a library's caller owns stdout and stderr.

transformers 5.x draws a "Loading weights" bar for every ``from_pretrained`` (and "Writing model shards" for
``save_pretrained``), and peft reads transformers' deprecated ``is_gradient_checkpointing`` property when it
wraps a model (``PeftModel.__init__``), which warns ``FutureWarning`` on every adapter load. Neither tells our
user anything they can act on. :func:`quiet_loading` silences exactly those around our own loading calls and
puts the caller's settings back afterwards; real loading problems (missing or unexpected weights, other
warnings) still reach the user, and our own opt-in progress bars (``show_progress``) are untouched.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["LOADING_CHATTER", "quiet_loading"]

# Messages (regexes matched at the start) of warnings that third-party loading code raises on every load.
LOADING_CHATTER: tuple[tuple[str, type[Warning]], ...] = (
    (r"`is_gradient_checkpointing` is deprecated", FutureWarning),  # peft >= 0.17 on transformers >= 5
)

_lock = threading.Lock()
_depth = 0  # loads in progress (nested or in other threads); the outermost one saves and restores
_bars_were_enabled = False
_saved_filters: warnings.catch_warnings | None = None


def _enter() -> None:
    global _depth, _bars_were_enabled, _saved_filters
    from transformers.utils import logging as transformers_logging

    with _lock:
        if _depth == 0:
            _bars_were_enabled = transformers_logging.is_progress_bar_enabled()
            if _bars_were_enabled:
                transformers_logging.disable_progress_bar()
            _saved_filters = warnings.catch_warnings()
            _saved_filters.__enter__()
            for message, category in LOADING_CHATTER:
                warnings.filterwarnings("ignore", message=message, category=category)
        _depth += 1


def _exit() -> None:
    global _depth, _saved_filters
    from transformers.utils import logging as transformers_logging

    with _lock:
        _depth -= 1
        if _depth == 0:
            if _saved_filters is not None:
                _saved_filters.__exit__(None, None, None)
                _saved_filters = None
            if _bars_were_enabled:
                transformers_logging.enable_progress_bar()


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load models inside this block without transformers' weight bars or the warnings in :data:`LOADING_CHATTER`.

    Re-entrant and safe to use from several threads: the outermost block (the last one to exit) puts the
    caller's progress-bar setting and warning filters back as they were when the first one entered.
    """
    _enter()
    try:
        yield
    finally:
        _exit()
