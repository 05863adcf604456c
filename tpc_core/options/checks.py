"""The checks of the compress options, one function per option: pure, and each error names the option.

:class:`tpc_core.options.CompressOptions` runs them as its validators; the budget checks are also what
:func:`tpc_core.engine.selection.budget.resolve_budget` and the command line call. A wrong kind of value is a
``TypeError``, an impossible value a ``ValueError``.
"""

from __future__ import annotations

import difflib
import math
import re
from typing import Any

from tpc_core.segmentation import SPLITTER_NAMES

__all__ = ["BUDGET_SCOPES", "check_batch_size", "check_budget_scope", "check_flag", "check_min_score",
           "check_optional_flag", "check_rate", "check_separator", "check_small_pass_threads", "check_splitter",
           "check_target_tokens", "check_top_n", "compile_patterns", "refuse_lone_surrogates", "validate_budget_args",
           "validate_filter_args"]

BUDGET_SCOPES = ("global", "per_document")


def check_target_tokens(target_tokens: Any) -> int | None:
    """``target_tokens``: ``None`` or a positive int."""
    if target_tokens is None:
        return None
    if isinstance(target_tokens, bool) or not isinstance(target_tokens, int):
        raise TypeError(f"target_tokens must be an int, got {type(target_tokens).__name__}.")
    if target_tokens <= 0:
        raise ValueError(f"target_tokens must be a positive number of tokens, got {target_tokens}.")
    return target_tokens


def check_rate(rate: Any) -> float | None:
    """``rate``: ``None`` or a number in (0, 1]."""
    if rate is None:
        return None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)):
        raise TypeError(f"rate must be a float in (0, 1], got {type(rate).__name__}.")
    if not (0.0 < float(rate) <= 1.0) or math.isnan(float(rate)):
        raise ValueError(f"rate must be in (0, 1] (the fraction of tokens to keep), got {rate}.")
    return rate


def validate_budget_args(target_tokens: int | None, rate: float | None) -> None:
    """Raise a clear error for an impossible budget request (shared by every entry point)."""
    if target_tokens is not None and rate is not None:
        raise ValueError("Give either target_tokens or rate, not both.")
    check_target_tokens(target_tokens)
    check_rate(rate)


def check_min_score(min_score: Any) -> float | None:
    """``min_score``: ``None`` or a number that is not NaN."""
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, (int, float))
                                  or math.isnan(min_score)):
        raise TypeError(f"min_score must be a number (a cosine score, usually in [-1, 1]) or None, got {min_score!r}.")
    return min_score


def check_top_n(top_n: Any) -> int | None:
    """``top_n``: ``None`` or a positive int."""
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
        raise ValueError(f"top_n must be a positive int (documents kept) or None, got {top_n!r}.")
    return top_n


def validate_filter_args(min_score: float | None, top_n: int | None) -> None:
    """Raise a ``TypeError``/``ValueError`` naming the problem with ``min_score`` or ``top_n``."""
    check_min_score(min_score)
    check_top_n(top_n)


def check_budget_scope(scope: Any) -> str:
    """``budget_scope``: one of :data:`BUDGET_SCOPES`."""
    if scope not in BUDGET_SCOPES:
        raise ValueError(f"budget_scope must be one of {BUDGET_SCOPES}, got {scope!r}.")
    return str(scope)


def check_batch_size(batch_size: Any) -> int:
    """``batch_size``: a positive int."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}.")
    return batch_size


def check_small_pass_threads(threads: Any) -> int | None:
    """``small_pass_threads``: ``None`` or a positive int."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"small_pass_threads must be a positive int (intra-op threads) or None (the caller's thread "
                         f"and setting), got {threads!r}.")
    return threads


def check_flag(name: str) -> Any:
    """The check of a ``True`` / ``False`` option called ``name``."""
    def check(value: Any) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {value!r}.")
        return value
    check.__name__ = f"check_{name}"
    return check


def check_optional_flag(name: str) -> Any:
    """The check of a ``True`` / ``False`` / ``None`` option called ``name``."""
    def check(value: Any) -> bool | None:
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{name} must be True, False or None, got {value!r}.")
        return value
    check.__name__ = f"check_{name}"
    return check


def check_separator(separator: Any) -> str:
    """``document_separator``: a str without lone surrogates."""
    if not isinstance(separator, str):
        raise TypeError(f"document_separator must be a str, got {type(separator).__name__}.")
    refuse_lone_surrogates(separator, "document_separator")
    return separator


def check_splitter(splitter: Any) -> Any:
    """``splitter``: ``None``, a name of :data:`tpc_core.segmentation.SPLITTER_NAMES`, or an object with a
    ``spans(text)`` method (whose spans the engine checks against the segmentation contract as it reads)."""
    if splitter is None:
        return None
    if isinstance(splitter, str):
        if splitter not in SPLITTER_NAMES:
            close = difflib.get_close_matches(splitter, SPLITTER_NAMES, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"splitter={splitter!r} is not a sentence splitter; use one of {SPLITTER_NAMES}{hint}, "
                             "or an object with spans(text).")
        return splitter
    if not callable(getattr(splitter, "spans", None)):
        raise TypeError(f"splitter must be a name or an object with a spans(text) method returning (start, end) "
                        f"offsets (names: {', '.join(SPLITTER_NAMES)}), got {type(splitter).__name__}.")
    return splitter


def compile_patterns(patterns: Any) -> tuple[re.Pattern[str], ...]:
    """``force_keep_patterns`` as compiled regexes; a single string is one pattern, not its characters.

    Raises:
        TypeError: A value that is not a str, a compiled regex or a list, tuple or set of them (bytes, a number, a
            dict), or a pattern in it that is not a str or a compiled regex.
        ValueError: A string that is not a valid regular expression (the message quotes it).
    """
    if isinstance(patterns, (str, re.Pattern)):
        patterns = [patterns]
    if not isinstance(patterns, (list, tuple, set, frozenset)):
        raise TypeError("force_keep_patterns must be a regex string, a compiled regex or a list of them, got "
                        f"{type(patterns).__name__}.")
    compiled = []
    for pattern in patterns:
        if isinstance(pattern, re.Pattern):
            compiled.append(pattern)
            continue
        if not isinstance(pattern, str):
            raise TypeError(f"force_keep_patterns must hold regex strings, got {type(pattern).__name__}.")
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            raise ValueError(f"force_keep_patterns: {pattern!r} is not a valid regular expression ({error}).") \
                from error
    return tuple(compiled)


# U+D800..U+DFFF never stand alone in valid text; they reach a str through errors="surrogateescape" decoding or
# JSON with a broken \u escape, and a tokenizer refuses them with an unhelpful TypeError.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def refuse_lone_surrogates(text: str, where: str) -> None:
    """Raise ``ValueError`` naming the first lone surrogate of ``text``, its offset and ``where`` it is."""
    found = None if text.isascii() else _LONE_SURROGATE.search(text)
    if found is not None:
        char = found.group()
        raise ValueError(f"{where} holds a lone surrogate {char!r} (U+{ord(char):04X}) at offset {found.start()}, "
                         "which no tokenizer can encode (it comes from bytes decoded with errors='surrogateescape' "
                         "or JSON with a broken \\u escape). Decode the text with errors=\"replace\" (or fix its "
                         "source) and pass it again.")
