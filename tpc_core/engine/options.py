"""The caller's arguments, checked once and frozen: what ``compress_batch`` hands to the pipeline.

Every bad argument fails here, before any model runs, with a message naming the argument.

The keyword options of :meth:`tpc_core.TPCCompressor.compress` and ``compress_batch`` have one home:
:class:`CompressKeywords` declares each one's type and documents it (both methods take
``**options: Unpack[CompressKeywords]``), and the same-named field of :class:`CompressionOptions` holds its
default and its check (:meth:`CompressionOptions.build`, the one checker, also refuses unknown keywords).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from tpc_core.engine.selection.budget import BUDGET_SCOPES, validate_budget_args, validate_filter_args
from tpc_core.segmentation import SentenceSplitter

# Re-exported for the methods that take ``**options: Unpack[CompressKeywords]`` (typing has it from 3.11).
if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

__all__ = ["CompressKeywords", "CompressionOptions", "Unpack", "as_documents", "as_questions", "compile_patterns"]


class CompressKeywords(TypedDict, total=False):
    """The keyword options of ``compress`` and ``compress_batch``, each declared and documented once, here.

    A new option is one key here (its type and meaning) and one field of :class:`CompressionOptions` (its
    default and check); the stage that uses it reads it from the options. Unknown keywords raise a
    ``TypeError`` that names them and the accepted ones.

    Attributes:
        budget_scope: "global" (one budget across a prompt's documents, the default) or "per_document" (each
            document gets the budget's share proportional to its size).
        force_keep_patterns: Regexes (strings or compiled); sentences matching any are taken first (still
            within budget). A single string is one pattern. Default: none.
        keep_first_sentence: Take each document's first sentence first (still within budget). Default ``False``.
        document_separator: Joins compressed documents in ``compressed_prompt`` (counted in the budget).
            Default ``"\\n\\n"``.
        splitter: Sentence splitter name or object (default ``None``: the checkpoint's, "nupunkt"). An object's
            ``spans(text)`` is checked against the segmentation contract (sorted, non-overlapping spans without
            surrounding whitespace that cover every non-blank character); a ``ValueError`` names the first bad
            span.
        min_score: After the budget, kept sentences scoring below this are removed (ignored when nothing was
            scored: the budget covered the prompt). Default ``None``: off.
        top_n: After the budget, at most this many documents keep text: those whose best sentence scores highest
            (when nothing was scored, the first ``top_n``). Default ``None``: off.
        batch_size: Prompts processed together (bounds memory). Default 16.
        show_progress: Show a progress bar (default ``None``: only for more than one batch on a terminal;
            ``compress`` never shows one).
        describe_bare: With no question, whether the CTD describes a prompt in which the request head finds no
            written request (default ``True``). ``False`` gives such a prompt the checkpoint's fallback task
            (what an ungrounded CTD description leads to) without a generation: much faster on bare documents;
            the same result wherever the head finds the request or the CTD's description would fall back.
            ``tpc compress-corpus`` passes ``False`` unless told ``--describe-bare``.
        cache: A sentence cache: what each document is before any question (its sentences, their counts and
            embeddings) is stored once and read back on every later call, so a document seen before is not split,
            counted or encoded again. ``None`` (default): no cache; ``"memory"`` (an LRU of 256 MiB in this
            process, shared by every call of this compressor); a directory path (shared by processes); a
            :class:`tpc_core.cache.SentenceCache`; a LangChain byte store (``InMemoryByteStore``,
            ``LocalFileStore``, ...) or a LlamaIndex key-value store (``SimpleKVStore``, ...); a ``redis://`` URL
            (a :class:`tpc_core.cache.SecretURL` when it holds a password: shown without it everywhere). Any other
            value is a ``TypeError`` naming these. See :mod:`tpc_core.cache`.
    """

    budget_scope: str
    force_keep_patterns: str | re.Pattern[str] | Iterable[str | re.Pattern[str]]
    keep_first_sentence: bool
    document_separator: str
    splitter: str | SentenceSplitter | None
    min_score: float | None
    top_n: int | None
    batch_size: int
    show_progress: bool | None
    describe_bare: bool
    cache: Any


@dataclass(frozen=True)
class CompressionOptions:
    """Validated compression options: the budget, and each of :class:`CompressKeywords` with its default."""

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
    splitter: str | SentenceSplitter | None = None
    show_progress: bool | None = None
    # resolved (and its type checked) by the compressor: the cache package sits above the engine. Not in the repr: a
    # URL passed as a plain string may hold a password.
    cache: Any = field(default=None, repr=False)

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
    def build(cls, *, target_tokens: int | None = None, rate: float | None = None,
              **options: Unpack[CompressKeywords]) -> CompressionOptions:
        """Options from the caller's keyword arguments, patterns compiled; the defaults fill the rest.

        Raises:
            TypeError: A keyword that is not an option (the message names it and the accepted ones), or a
                wrongly typed value.
            ValueError: An impossible value (see each check above).
        """
        unknown = sorted(set(options) - set(CompressKeywords.__annotations__))
        if unknown:
            raise TypeError(f"Unknown compression option(s) {', '.join(map(repr, unknown))}; the accepted keywords "
                            f"are target_tokens, rate and {', '.join(CompressKeywords.__annotations__)}.")
        values: dict[str, Any] = dict(options)
        if "force_keep_patterns" in values:
            values["force_keep_patterns"] = compile_patterns(values["force_keep_patterns"])
        return cls(target_tokens=target_tokens, rate=rate, **values)


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


def as_documents(context: Any, position: int, *, label: str = "Prompt", part: str = "document") -> tuple[str, ...]:
    """One prompt's documents: a string is one document; a list must hold only strings.

    ``label`` and ``part`` name the prompt and its documents in the messages (a conversation says "Message 2: text
    part 0").

    Raises:
        TypeError: A context that is not a string or a list of strings.
        ValueError: A document with a lone surrogate (the message names it, its offset and what to do).
    """
    if isinstance(context, str):
        _refuse_lone_surrogates(context, f"{label} {position}")
        return (context,)
    if isinstance(context, Sequence) and not isinstance(context, (bytes, bytearray)):
        for index, document in enumerate(context):
            if not isinstance(document, str):
                raise TypeError(f"{label} {position}: {part} {index} is a {type(document).__name__}, not a str.")
            _refuse_lone_surrogates(document, f"{label} {position}: {part} {index}")
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
            _refuse_lone_surrogates(q, f"Prompt {position}: the question")
    return [q if q is not None and q.strip() else None for q in questions]
