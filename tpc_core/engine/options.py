"""The caller's arguments, checked once: the prompts, the questions and the options ``compress_batch`` hands on.

Every bad argument fails here, before any model runs, with a message naming the argument. The options themselves
are declared once, in :mod:`tpc_core.options` (:class:`~tpc_core.options.CompressOptions`, whose engine name is
:data:`CompressionOptions`, and the generated :class:`~tpc_core.options.CompressKeywords`); this module re-exports
them under their engine names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tpc_core.options import CompressKeywords, CompressOptions, Unpack, compile_patterns
from tpc_core.options.checks import refuse_lone_surrogates

__all__ = ["CompressKeywords", "CompressionOptions", "Unpack", "as_documents", "as_questions", "compile_patterns"]

CompressionOptions = CompressOptions
"""The engine's name for :class:`tpc_core.options.CompressOptions` (the same class): ``CompressionOptions.build``
checks a call's keywords; the stages read the validated options."""


def as_documents(context: Any, position: int, *, label: str = "Prompt", part: str = "document") -> tuple[str, ...]:
    """One prompt's documents: a string is one document; a list must hold only strings.

    ``label`` and ``part`` name the prompt and its documents in the messages (a conversation says "Message 2: text
    part 0").

    Raises:
        TypeError: A context that is not a string or a list of strings.
        ValueError: A document with a lone surrogate (the message names it, its offset and what to do).
    """
    if isinstance(context, str):
        refuse_lone_surrogates(context, f"{label} {position}")
        return (context,)
    if isinstance(context, Sequence) and not isinstance(context, (bytes, bytearray)):
        for index, document in enumerate(context):
            if not isinstance(document, str):
                raise TypeError(f"{label} {position}: {part} {index} is a {type(document).__name__}, not a str.")
            refuse_lone_surrogates(document, f"{label} {position}: {part} {index}")
        return tuple(context)
    raise TypeError(f"{label} {position}: context must be a str or a list of str, got {type(context).__name__}.")


def as_questions(question: Any, count: int) -> list[str | None]:
    """One question per prompt; a blank question means "no question" (prompt-agnostic mode).

    Raises:
        TypeError: A question that is not a string or ``None``.
        ValueError: A question count that is not the prompt count, or a question with a lone surrogate.
    """
    if question is None or isinstance(question, str):
        questions: list[Any] = [question] * count
    elif isinstance(question, Sequence):
        questions = list(question)
        if len(questions) != count:
            raise ValueError(f"Got {len(questions)} questions for {count} prompts.")
    else:
        raise TypeError(f"question must be a str, a list of str or None, got {type(question).__name__}.")
    for position, q in enumerate(questions):
        if q is not None and not isinstance(q, str):
            raise TypeError(f"question must be a str or None, got {type(q).__name__}.")
        if q is not None:
            refuse_lone_surrogates(q, f"Prompt {position}: the question")
    return [q if q is not None and q.strip() else None for q in questions]
