"""The caller's arguments, checked once and frozen: what ``compress_batch`` hands to the pipeline.

Every bad argument fails here, before any model runs, with a message naming the argument.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tpc_core.engine.selection import BUDGET_SCOPES, validate_budget_args, validate_filter_args

__all__ = ["CompressionOptions", "as_documents", "as_questions", "compile_patterns"]


@dataclass(frozen=True)
class CompressionOptions:
    """Validated compression options (see :meth:`tpc_core.TPCCompressor.compress_batch` for each one)."""

    target_tokens: int | None = None
    rate: float | None = None
    budget_scope: str = "global"
    force_keep_patterns: tuple[re.Pattern[str], ...] = ()
    keep_first_sentence: bool = False
    document_separator: str = "\n\n"
    batch_size: int = 16
    min_score: float | None = None
    top_n: int | None = None
    describe_bare: bool = True

    def __post_init__(self) -> None:
        validate_budget_args(self.target_tokens, self.rate)
        validate_filter_args(self.min_score, self.top_n)
        if self.budget_scope not in BUDGET_SCOPES:
            raise ValueError(f"budget_scope must be one of {BUDGET_SCOPES}, got {self.budget_scope!r}.")
        if not isinstance(self.document_separator, str):
            raise TypeError(f"document_separator must be a str, got {type(self.document_separator).__name__}.")
        _refuse_lone_surrogates(self.document_separator, "document_separator")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {self.batch_size!r}.")
        if not isinstance(self.describe_bare, bool):
            raise TypeError(f"describe_bare must be True or False, got {self.describe_bare!r}.")

    @classmethod
    def build(cls, *, force_keep_patterns: Any = (), **values: Any) -> CompressionOptions:
        """Options from the caller's keyword arguments, patterns compiled."""
        return cls(force_keep_patterns=compile_patterns(force_keep_patterns), **values)


def compile_patterns(patterns: Any) -> tuple[re.Pattern[str], ...]:
    """``force_keep_patterns`` as compiled regexes; a single string is one pattern, not its characters.

    Raises:
        TypeError: A pattern that is not a str or a compiled regex.
        ValueError: A string that is not a valid regular expression (the message quotes it).
    """
    if isinstance(patterns, (str, re.Pattern)):
        patterns = [patterns]
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


def _refuse_lone_surrogates(text: str, where: str) -> None:
    """Raise ``ValueError`` naming the first lone surrogate of ``text``, its offset and ``where`` it is."""
    found = None if text.isascii() else _LONE_SURROGATE.search(text)
    if found is not None:
        char = found.group()
        raise ValueError(f"{where} holds a lone surrogate {char!r} (U+{ord(char):04X}) at offset {found.start()}, "
                         "which no tokenizer can encode (it comes from bytes decoded with errors='surrogateescape' "
                         "or JSON with a broken \\u escape). Decode the text with errors=\"replace\" (or fix its "
                         "source) and pass it again.")


def as_documents(context: Any, position: int) -> tuple[str, ...]:
    """One prompt's documents: a string is one document; a list must hold only strings.

    Raises:
        TypeError: A context that is not a string or a list of strings.
        ValueError: A document with a lone surrogate (the message names it, its offset and what to do).
    """
    if isinstance(context, str):
        _refuse_lone_surrogates(context, f"Prompt {position}")
        return (context,)
    if isinstance(context, Sequence) and not isinstance(context, (bytes, bytearray)):
        for index, document in enumerate(context):
            if not isinstance(document, str):
                raise TypeError(f"Prompt {position}: document {index} is a {type(document).__name__}, not a str.")
            _refuse_lone_surrogates(document, f"Prompt {position}: document {index}")
        return tuple(context)
    raise TypeError(f"Prompt {position}: context must be a str or a list of str, got {type(context).__name__}.")


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
            _refuse_lone_surrogates(q, f"Prompt {position}: the question")
    return [q if q is not None and q.strip() else None for q in questions]
