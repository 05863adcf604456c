"""``CompressKeywords``: the keyword options of ``compress`` / ``compress_batch``, typed for
``**options``.

The class is GENERATED from :class:`tpc_core.options.CompressOptions` by ``python -m tpc_core.options --write``: do not
edit it (the option's declaration is its field there; tests/core/options/test_options.py fails when it drifts). The
imports above it are written by hand: a type the generated class needs and they lack fails the type checker and
tests/core/options/test_options.py.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any, Literal, TypedDict

from tpc_core.segmentation import SentenceSplitter

# Re-exported for the methods that take ``**options: Unpack[CompressKeywords]`` (typing has it from 3.11).
if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

__all__ = ["CompressKeywords", "Unpack"]


# GENERATED below from tpc_core.options.CompressOptions (python -m tpc_core.options --write); do not edit
class CompressKeywords(TypedDict, total=False):
    """The keyword options of ``compress`` and ``compress_batch`` (each one's default and check: the same-named
    field of :class:`tpc_core.options.CompressOptions`). Unknown keywords raise a ``TypeError`` naming them.

    Attributes:
        force_keep_patterns: Regexes (strings or compiled); sentences matching any are taken first (still within
            budget). A single string is one pattern. Default: ``()``.
        keep_first_sentence: Take each document's first sentence first (still within budget), e.g. titles. Default:
            ``False``.
        keep_request: Keep the user's written request verbatim: the sentences in which a prompt states its request
            (found in prompt-agnostic mode) are kept whatever the budget, with their chat's turn markers. False lets
            them compete for the budget like any sentence. Default: ``True``.
        splitter: Sentence splitter: "nupunkt" (the checkpoint's default), "regex", "line", "nltk" (needs punkt
            data), or an object with a ``spans(text)`` method returning (start, end) offsets; its spans are checked
            against the segmentation contract (sorted, non-overlapping, no surrounding whitespace, every non-blank
            character covered) and a ``ValueError`` names the first bad one. Default: ``None``.
        cache: Sentence cache: what each document is before any question (its sentences, their counts and
            embeddings) is stored once and read back on every later call. None (off), "memory" (an LRU in this
            process), a directory path (shared by processes), a ``tpc_core.cache.SentenceCache``, a LangChain byte
            store or LlamaIndex key-value store, or a ``redis://`` URL (a ``tpc_core.cache.SecretURL`` when it holds
            a password). Checked by the cache package (see ``tpc_core.cache``). Default: ``None``.
        budget_scope: "global": one budget across a prompt's documents (the best sentences win wherever they are);
            "per_document": each document gets the budget's share proportional to its size. Default: ``'global'``.
        min_score: After the budget, kept sentences scoring below this are removed (not applied when nothing was
            scored: the budget covered the prompt). Scores are cosines of TPC's sentence embeddings. Default:
            ``None``.
        top_n: After the budget, at most this many documents keep text: those whose best sentence scores highest
            (when nothing was scored, the first ``top_n``). Default: ``None``.
        batch_size: Prompts (documents, at index time) compressed together per model call (bounds memory). Default:
            ``16``.
        show_progress: Show a progress bar over batches; None: only for more than one batch on a terminal
            (``compress`` never shows one). Default: ``None``.
        describe_bare: With no question, whether the CTD describes a prompt in which no written request is found (a
            bare document). False (the default) gives such a prompt the checkpoint's fallback task without a
            generation, and the CTD is not loaded; True lets a description the CTD writes choose what is kept, at
            the cost of a generation per prompt (seconds on a CPU): worth it only for a checkpoint whose
            descriptions pay on your documents (measure first). Prompts that write their request are the same either
            way. Default: ``False``.
        document_separator: Joins the compressed documents of a list input in ``compressed_prompt``; its tokens
            count against the budget. Default: ``'\\n\\n'``.
        small_pass_threads: On a CPU, the intra-op threads of the context encoder's small forward passes (a
            question, a few new sentences): they run on worker threads of their own with this many, so that on busy
            cores they do not wait for threads held by other work; larger passes, and the caller's own torch work,
            keep the caller's setting. None runs every pass in the caller's thread with its setting (see
            ``tpc_core.engine.scoring.threads``). Default: ``1``.
    """

    force_keep_patterns: str | re.Pattern[str] | Iterable[str | re.Pattern[str]]
    keep_first_sentence: bool
    keep_request: bool
    splitter: str | SentenceSplitter | None
    cache: Any
    budget_scope: Literal["global", "per_document"]
    min_score: float | None
    top_n: int | None
    batch_size: int
    show_progress: bool | None
    describe_bare: bool
    document_separator: str
    small_pass_threads: int | None
