""":class:`CompressOptions`: every keyword option of ``compress`` / ``compress_batch``, declared once.

Each field is one option: its type, its default, its documentation (the docstring under it) and its check
(:mod:`tpc_core.options.checks`, run as the field's validator), plus a :class:`Reach` saying where else it appears.
The options are declared in small groups, composed into :class:`CompressOptions` and, unchanged, into the adapters'
settings (each adapter takes the groups it has): :class:`BudgetOptions` and :class:`ReadingOptions` (every adapter),
:class:`ScopeOptions` (one budget across documents), :class:`FilterOptions` (the reranker-style filters after it),
:class:`BatchOptions` (index time), and :class:`ConversationOptions` (``compress_messages``). The rest is derived:
the typed keywords (:class:`tpc_core.options.CompressKeywords`, generated), the ``tpc compress`` flags and the
README's option table (:mod:`tpc_core.options.surfaces`). Adding an option is adding a field to a group here; the
stage that uses it reads it from the options.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    model_validator,
)

from tpc_core.options.checks import (
    check_batch_size,
    check_budget_scope,
    check_flag,
    check_min_score,
    check_optional_flag,
    check_rate,
    check_separator,
    check_small_pass_threads,
    check_splitter,
    check_target_tokens,
    check_top_n,
    compile_patterns,
    validate_budget_args,
)
from tpc_core.options.keywords import CompressKeywords, Unpack
from tpc_core.segmentation import SentenceSplitter

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Self

__all__ = ["BatchOptions", "BudgetOptions", "CompressOptions", "ConversationOptions", "Emptied", "FilterOptions",
           "Reach", "ReadingOptions", "ScopeOptions"]


@dataclass(frozen=True)
class Reach:
    """Where an option appears besides ``compress(**options)`` (read by :mod:`tpc_core.options.surfaces`).

    Attributes:
        cli: Whether ``tpc compress`` has a flag for it.
        keyword: Whether it is a key of ``CompressKeywords`` (``target_tokens`` and ``rate`` are parameters of
            ``compress`` itself).
        accepts: The type a caller may pass where the field converts it (``force_keep_patterns``: strings are
            compiled); ``None``: the field's own type.
        exclusive: Options of one name here are mutually exclusive flags on the command line.
    """

    cli: bool = True
    keyword: bool = True
    accepts: Any = None
    exclusive: Optional[str] = None


# The flags a pattern can carry inline, so that a dumped pattern compiles back with them.
_INLINE_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"), (re.ASCII, "a"))


def _pattern_strings(patterns: tuple[re.Pattern[str], ...]) -> tuple[str, ...]:
    """Each pattern as a string that compiles back to it: its flags written inline (``(?i)invoice``)."""
    shown = []
    for pattern in patterns:
        own = re.compile(pattern.pattern).flags  # what the text alone compiles to, inline flags included
        letters = "".join(letter for flag, letter in _INLINE_FLAGS if pattern.flags & flag and not own & flag)
        shown.append(f"(?{letters}){pattern.pattern}" if letters else pattern.pattern)
    return tuple(shown)


PatternsInput = Union[str, re.Pattern[str], Iterable[Union[str, re.Pattern[str]]]]


Emptied = Literal["sentence", "drop", "empty"]


class _Group(BaseModel):
    """A group of options: its fields' docstrings are their documentation."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, use_attribute_docstrings=True)


class BudgetOptions(_Group):
    """The budget: a number of tokens or a share of them."""

    target_tokens: Annotated[Optional[int], BeforeValidator(check_target_tokens),
                             Reach(keyword=False, exclusive="budget")] = None
    """Token budget: the most tokens the compressed prompt may count (exclusive with ``rate``)."""
    rate: Annotated[Optional[float], BeforeValidator(check_rate), Reach(keyword=False, exclusive="budget")] = None
    """Fraction of tokens to keep, in (0, 1]; 0.2 when neither budget is given."""

    @model_validator(mode="after")
    def _one_budget(self) -> Self:
        validate_budget_args(self.target_tokens, self.rate)
        return self


class ReadingOptions(_Group):
    """How documents are read and which sentences are taken first: every adapter has these."""

    force_keep_patterns: Annotated[tuple[re.Pattern[str], ...], BeforeValidator(compile_patterns),
                                   PlainSerializer(_pattern_strings, return_type=tuple[str, ...]),
                                   Reach(accepts=PatternsInput)] = ()
    """Regexes (strings or compiled); sentences matching any are taken first (still within budget). A single string
    is one pattern."""
    keep_first_sentence: Annotated[bool, BeforeValidator(check_flag("keep_first_sentence")), Reach()] = False
    """Take each document's first sentence first (still within budget), e.g. titles."""
    keep_request: Annotated[bool, BeforeValidator(check_flag("keep_request")), Reach()] = True
    """Keep the user's written request verbatim: the sentences in which a prompt states its request (found in
    prompt-agnostic mode) are kept whatever the budget, with their chat's turn markers. False lets them compete for
    the budget like any sentence."""
    splitter: Annotated[Union[str, SentenceSplitter, None], PlainValidator(check_splitter), Reach()] = None
    """Sentence splitter: "nupunkt" (the checkpoint's default), "regex", "line", "nltk" (needs punkt data), or an
    object with a ``spans(text)`` method returning (start, end) offsets; its spans are checked against the
    segmentation contract (sorted, non-overlapping, no surrounding whitespace, every non-blank character covered)
    and a ``ValueError`` names the first bad one."""
    cache: Annotated[Any, Field(repr=False), Reach()] = None
    """Sentence cache: what each document is before any question (its sentences, their counts and embeddings) is
    stored once and read back on every later call. None (off), "memory" (an LRU in this process), a directory path
    (shared by processes), a ``tpc_core.cache.SentenceCache``, a LangChain byte store or LlamaIndex key-value store,
    or a ``redis://`` URL (a ``tpc_core.cache.SecretURL`` when it holds a password). Checked by the cache package
    (see :mod:`tpc_core.cache`)."""


class ScopeOptions(_Group):
    """How one budget spans several documents."""

    budget_scope: Annotated[Literal["global", "per_document"], BeforeValidator(check_budget_scope),
                            Reach()] = "global"
    """"global": one budget across a prompt's documents (the best sentences win wherever they are);
    "per_document": each document gets the budget's share proportional to its size."""


class FilterOptions(_Group):
    """What is removed after the budget, as a reranker removes documents: the query-time adapters have these."""

    min_score: Annotated[Optional[float], BeforeValidator(check_min_score), Reach()] = None
    """After the budget, kept sentences scoring below this are removed (not applied when nothing was scored: the
    budget covered the prompt). Scores are cosines of TPC's sentence embeddings."""
    top_n: Annotated[Optional[int], BeforeValidator(check_top_n), Reach(cli=False)] = None
    """After the budget, at most this many documents keep text: those whose best sentence scores highest (when
    nothing was scored, the first ``top_n``)."""


class BatchOptions(_Group):
    """How many prompts go through the models together: the index-time adapters have these."""

    batch_size: Annotated[int, BeforeValidator(check_batch_size), Reach(cli=False)] = 16
    """Prompts (documents, at index time) compressed together per model call (bounds memory)."""
    show_progress: Annotated[Optional[bool], BeforeValidator(check_optional_flag("show_progress")),
                             Reach(cli=False)] = None
    """Show a progress bar over batches; None: only for more than one batch on a terminal (``compress`` never shows
    one)."""
    describe_bare: Annotated[bool, BeforeValidator(check_flag("describe_bare")), Reach()] = False
    """With no question, whether the CTD describes a prompt in which no written request is found (a bare document).
    False (the default) gives such a prompt the checkpoint's fallback task without a generation, and the CTD is not
    loaded; True lets a description the CTD writes choose what is kept, at the cost of a generation per prompt
    (seconds on a CPU): worth it only for a checkpoint whose descriptions pay on your documents (measure first).
    Prompts that write their request are the same either way."""


class ConversationOptions(_Group):
    """What ``compress_messages`` and the conversation adapters add: the same defaults on every surface."""

    strict: Annotated[bool, BeforeValidator(check_flag("strict"))] = False
    """False (default): when the messages kept whole (system, developer, the latest user turn) exceed the budget,
    the chat goes on: they are kept whole, every other message as short as it goes, with a runtime warning and
    ``over_budget`` in the figures, as ``keep_request`` keeps a prompt's request whatever the budget. True: that is
    a ``ValueError`` saying how many tokens they need."""
    emptied: Emptied = "sentence"
    """What becomes of a message that loses every sentence. "sentence" (default; no major provider rejects it):
    every compressed message that had text keeps at least one sentence, and an emptied text part is left out of a
    list that keeps another part. "drop": only the latter (a message may come back with ``""``). "empty": every
    emptied text part stays as ``""`` (OpenAI accepts it; Anthropic rejects empty text blocks)."""


# The bases in reverse: pydantic puts the fields of the last base first, so the options read in this order.
class CompressOptions(BatchOptions, FilterOptions, ScopeOptions, ReadingOptions, BudgetOptions):
    """The validated options of one ``compress`` / ``compress_batch`` call: the budget and every keyword option.

    Built from keywords by :meth:`build` (which also refuses unknown ones); frozen. A wrong kind of value is a
    ``TypeError``, an impossible one a ``ValueError`` (from :meth:`build`: the check's own; from the constructor:
    pydantic's ``ValidationError``, also a ``ValueError``), each naming the option.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, use_attribute_docstrings=True)

    document_separator: Annotated[str, BeforeValidator(check_separator), Reach(cli=False)] = "\n\n"
    """Joins the compressed documents of a list input in ``compressed_prompt``; its tokens count against the
    budget."""
    small_pass_threads: Annotated[Optional[int], BeforeValidator(check_small_pass_threads), Reach()] = 1
    """On a CPU, the intra-op threads of the context encoder's small forward passes (a question, a few new
    sentences): they run on worker threads of their own with this many, so that on busy cores they do not wait for
    threads held by other work; larger passes, and the caller's own torch work, keep the caller's setting. None runs
    every pass in the caller's thread with its setting (see :mod:`tpc_core.engine.scoring.threads`)."""

    @classmethod
    def build(cls, *, target_tokens: int | None = None, rate: float | None = None,
              **options: Unpack[CompressKeywords]) -> CompressOptions:
        """Options from the caller's keyword arguments; the defaults fill the rest.

        Raises:
            TypeError: A keyword that is not an option (the message names it and the accepted ones), or a
                wrongly typed value.
            ValueError: An impossible value (the check's own message, naming the option).
        """
        keywords = cls.keyword_names()
        unknown = sorted(set(options) - set(keywords))
        if unknown:
            raise TypeError(f"Unknown compression option(s) {', '.join(map(repr, unknown))}; the accepted keywords "
                            f"are target_tokens, rate and {', '.join(keywords)}.")
        try:
            return cls.model_validate({"target_tokens": target_tokens, "rate": rate, **options})
        except ValidationError as error:
            raise _first_cause(error) from None

    @classmethod
    def keyword_names(cls) -> tuple[str, ...]:
        """The keys of ``CompressKeywords``: every option but the budget, in declaration order."""
        return tuple(name for name, field in cls.model_fields.items() if reach(field.metadata).keyword)


def reach(metadata: Iterable[Any]) -> Reach:
    """The :class:`Reach` among a field's metadata (the default one when it has none)."""
    return next((item for item in metadata if isinstance(item, Reach)), Reach())


def _first_cause(error: ValidationError) -> Exception:
    """The exception a check raised inside pydantic (its message names the option), else pydantic's own error."""
    for detail in error.errors():
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, Exception):
            return cause
    return error
