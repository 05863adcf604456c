"""What the LangChain and LlamaIndex adapters share: settings, the model cache, and result mapping.

The adapters hold no compression logic. Each one turns its framework's objects into a list of texts,
calls :func:`compress_call` (one :meth:`tpc_core.TPCCompressor.compress` call over all of them, so a
``"global"`` budget spans the whole retrieved set; the engine also applies the post-budget filters ``min_score``
/ ``top_n``) and turns each :class:`DocumentOutcome` back into a new framework object. The settings that are engine
options are the option groups of :mod:`tpc_core.options` themselves (type, check, default, documentation), composed
into each kind of adapter, and reach the engine under their names (:meth:`TPCEngineSettings.engine_options`). This
module imports pydantic but neither framework.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_serializer, model_validator

from tpc_core import DEFAULT_MODEL, TPCCompressor
from tpc_core.cache import SecretURL
from tpc_core.engine import TokenCounter, resolve_token_counter
from tpc_core.loading import resolve_device, resolve_dtype
from tpc_core.options import BudgetOptions, CompressOptions, FilterOptions, ReadingOptions, ScopeOptions
from tpc_integrations._checks import (
    TPCSettingsError,
    check_cache,
    check_device,
    check_dtype,
    check_model,
    check_model_kwargs,
    check_token_counter,
    hidden_cache,
)
from tpc_integrations._outcomes import (
    METADATA_KEYS,
    CallOutcome,
    DocumentOutcome,
    compress_call,
    copy_metadata,
    ensure_text,
    ensure_type,
    fresh_metadata,
)
from tpc_integrations._peer_names import refuse_peer_names

__all__ = [
    "ENGINE_KEYWORDS",
    "METADATA_KEYS",
    "CallOutcome",
    "DocumentOutcome",
    "TPCEngineSettings",
    "TPCSettings",
    "TPCSettingsError",
    "clear_model_cache",
    "compress_call",
    "copy_metadata",
    "ensure_text",
    "ensure_type",
    "fresh_metadata",
    "load_shared_compressor",
]

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Self

logger = logging.getLogger("tpc_integrations")

ENGINE_KEYWORDS = tuple(CompressOptions.model_fields)
"""The keywords of ``TPCCompressor.compress`` / ``compress_batch`` that an adapter field passes by its own name
(``token_counter`` is passed resolved): the fields of :class:`tpc_core.options.CompressOptions`."""

# ---------------------------------------------------------------------------------------------- model cache
_CacheKey = tuple[str, Optional[str], str, str, tuple[tuple[str, str], ...]]
_models: dict[_CacheKey, TPCCompressor] = {}
_key_locks: dict[_CacheKey, threading.Lock] = {}
_cache_lock = threading.Lock()
# TPCCompressor is thread-safe (only its lazily loaded CTD is guarded), so adapters share one engine.


def _cache_key(model_name_or_path: str | os.PathLike[str], revision: str | None, device: str | None,
               dtype: str | None, model_kwargs: dict[str, Any]) -> _CacheKey:
    name = os.fspath(model_name_or_path)
    if os.path.isdir(name):  # "./ckpt" and "/abs/ckpt" are the same model
        name = os.path.realpath(name)
    resolved_device = resolve_device(device)
    resolved_dtype = resolve_dtype(dtype, resolved_device)
    options = tuple(sorted((key, repr(value)) for key, value in model_kwargs.items()))
    return name, revision, str(resolved_device), str(resolved_dtype), options


def load_shared_compressor(model_name_or_path: str | os.PathLike[str] = DEFAULT_MODEL, *, revision: str | None = None,
                           device: str | None = None, dtype: str | None = None,
                           model_kwargs: dict[str, Any] | None = None) -> TPCCompressor:
    """The process-wide compressor for (model, revision, device, dtype, options), loaded on first request.

    Two adapters configured alike share one set of weights; concurrent first requests load it once.
    """
    model_kwargs = dict(model_kwargs or {})
    key = _cache_key(model_name_or_path, revision, device, dtype, model_kwargs)
    with _cache_lock:
        if key in _models:
            return _models[key]
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # loading one model never blocks look-ups of another
        if key not in _models:
            logger.info("Loading TPC compressor %s (revision=%s, device=%s, dtype=%s)", key[0], revision, key[2],
                        key[3])
            _models[key] = TPCCompressor.from_pretrained(os.fspath(model_name_or_path), revision=revision,
                                                         device=device, dtype=dtype, **model_kwargs)
        return _models[key]


def clear_model_cache() -> None:
    """Forget every shared compressor (adapters that already hold one keep it)."""
    with _cache_lock:
        _models.clear()
        _key_locks.clear()


# ---------------------------------------------------------------------------------------------- settings
def _class_name(cls: type) -> str | None:
    """The name LlamaIndex's ``BaseComponent.model_dump`` writes under ``class_name`` (``None`` for other classes)."""
    name = getattr(cls, "class_name", None)
    return name() if callable(name) else None


class TPCEngineSettings(ReadingOptions, BudgetOptions):
    """What every adapter exposes as pydantic fields: the model, the budget and how text is read (the option groups
    of :mod:`tpc_core.options`), how text is counted, the task to compress for when there is no query, and what a
    fault or a slow call does. Mixed into each adapter's framework base class.

    Pass ``compressor=`` (a ready :class:`tpc_core.TPCCompressor`) to skip loading; otherwise the model named
    by ``model_name_or_path`` is checked at construction (it exists and is a TPC checkpoint, the device exists)
    and loaded on first use, or at construction with ``load_on_init=True``, and shared by every adapter
    configured alike. Each setting has one name: a peer's (LLMLingua's ``target_token``, a reranker's ``model``,
    ``k``) is refused with ours (:mod:`tpc_integrations._peer_names`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", protected_namespaces=(),
                              use_attribute_docstrings=True)

    model_name_or_path: str = DEFAULT_MODEL
    """TPC checkpoint: "tpc-mini" (offline default), "cpc-llama-1b"/"cpc-mistral-7b" (the authors' published CPC
    encoders, from the Hub), a local directory or a Hub repo id. Ignored when a ready ``compressor`` is passed."""
    revision: Optional[str] = None
    """Hub revision (tag, branch or commit) of the checkpoint; registered names are pinned already."""
    device: Optional[str] = None
    """Device: "cpu", "cuda", "cuda:1", "mps", or None for the best available one (no GPU is assumed); checked
    at construction."""
    dtype: Optional[str] = None
    """Weights dtype: "fp32", "bf16", "fp16", or None (bf16 on CUDA, fp32 elsewhere)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict, repr=False, exclude=True)
    """Other ``TPCCompressor.from_pretrained`` options: token, cache_dir, local_files_only, trust_remote_code,
    load_ctd, ctd (the CTD checkpoint paired with a ``cpc-*`` encoder)."""
    load_on_init: bool = False
    """Load the model when the adapter is built (default: on first use), so a pipeline pays the load up front."""
    token_counter: Any = None
    """How budgets are counted: None (the CSE tokenizer), "cl100k_base", a tokenizer, a name/path or a
    ``Callable[[str], int]``; count with your LLM's tokenizer to budget its prompt exactly."""
    task_description: Optional[str] = None
    """A fixed description of the task (e.g. "Answer questions about the company's products"), used instead of
    the one TPC's task descriptor reads from the documents whenever there is no query: prompt-agnostic
    compression without its cost. A query, when given, always wins."""
    on_error: Literal["raise", "passthrough"] = "raise"
    """"raise" (default): an exception inside compression reaches the caller. "passthrough": the input comes back
    unchanged, with one logged warning and the error named in the call's event / callback tags."""
    deadline_ms: Optional[float] = None
    """The most milliseconds a call waits for compression; past it the input comes back uncompressed (index time:
    the batches already done compressed, the rest whole), said in the event. None: no deadline."""

    _compressor: Optional[TPCCompressor] = PrivateAttr(default=None)
    _counter: Optional[tuple[Any, TokenCounter]] = PrivateAttr(default=None)
    _agnostic_logged: bool = PrivateAttr(default=False)

    def __init__(self, compressor: TPCCompressor | None = None, **data: Any) -> None:
        """Every setting is checked here, before any retrieval: a bad one raises :class:`TPCSettingsError`, whose
        message names it and says what to pass."""
        if "cache" in data:  # before pydantic sees it: a validation error quotes its input
            data["cache"] = hidden_cache(data["cache"])
        try:
            super().__init__(**data)
            if compressor is not None and not isinstance(compressor, TPCCompressor):
                raise TypeError(f"compressor must be a tpc_core.TPCCompressor, got {type(compressor).__name__}.")
            if self.token_counter is not None:
                self._counter = (self.token_counter, check_token_counter(self.token_counter))
            self._compressor = compressor
            if compressor is None:
                check_model(self.model_name_or_path, self.revision, self.model_kwargs)
        except TPCSettingsError:
            raise
        except (TypeError, ValueError, OSError) as error:
            raise TPCSettingsError(_what_to_do(error)) from error
        if compressor is None and self.load_on_init:
            _ = self.compressor

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle with pydantic's own restore, engine included.

        LlamaIndex's ``BaseComponent`` would re-run ``__init__`` from the public fields and so swap a
        ``compressor=`` passed in for the shared model of ``model_name_or_path``. Fields or private attributes
        that a framework's ``__getstate__`` left out as unpicklable get their defaults back.
        """
        BaseModel.__setstate__(self, state)
        for name, field in type(self).model_fields.items():
            if name not in self.__dict__:
                self.__dict__[name] = field.get_default(call_default_factory=True, validated_data=self.__dict__)
        private = self.__pydantic_private__ if self.__pydantic_private__ is not None else {}
        for name, attribute in self.__private_attributes__.items():
            if name not in private:
                private[name] = attribute.get_default()
        object.__setattr__(self, "__pydantic_private__", private)

    @model_validator(mode="before")
    @classmethod
    def _peer_names(cls, data: Any) -> Any:
        """Hide a cache URL's password (also where ``__init__`` is bypassed: ``model_validate``), drop the
        ``class_name`` LlamaIndex's ``model_dump`` adds when it names this very class (so a dump validates back),
        then refuse names that are not ours."""
        if isinstance(data, dict):
            if "class_name" in data and data["class_name"] == _class_name(cls):
                data = {name: value for name, value in data.items() if name != "class_name"}
            if "cache" in data:
                data = {**data, "cache": hidden_cache(data["cache"])}
            refuse_peer_names(cls.__name__, data, cls.model_fields, extra_names=("compressor",))
        return data

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        """pydantic's, the cache URL's password hidden first: a framework's validation that builds the adapter through
        its constructor quotes the input it was given in its error."""
        if isinstance(obj, dict) and "cache" in obj:
            obj = {**obj, "cache": hidden_cache(obj["cache"])}
        return super().model_validate(obj, *args, **kwargs)

    def __repr_args__(self) -> Any:
        """The fields pydantic shows, and the cache: an adapter holds a URL's password hidden (``SecretURL``)."""
        yield from super().__repr_args__()
        yield "cache", self.cache

    @field_serializer("cache")
    def _cache_shown(self, cache: Any) -> Any:
        """A secret cache URL is dumped redacted, in every mode (``model_dump``, JSON, LlamaIndex's ``to_dict``)."""
        return str(cache) if isinstance(cache, SecretURL) else cache

    @model_validator(mode="after")
    def _check_settings(self) -> TPCEngineSettings:
        deadline = self.deadline_ms
        if deadline is not None and (isinstance(deadline, bool) or not math.isfinite(deadline) or deadline <= 0):
            raise ValueError(f"deadline_ms must be a positive number of milliseconds or None, got {deadline!r}.")
        check_device(self.device)
        check_dtype(self.dtype, self.device)
        check_model_kwargs(self.model_kwargs)
        check_cache(self.cache)
        if self.task_description is not None and not self.task_description.strip():
            raise ValueError("task_description is blank: pass a description of the task, or None to let TPC read "
                             "the task from the documents (prompt-agnostic).")
        return self

    @property
    def compressor(self) -> TPCCompressor:
        """The engine: the one passed in, or the shared one for this configuration (loaded on first access)."""
        if self._compressor is None:
            self._compressor = load_shared_compressor(self.model_name_or_path, revision=self.revision,
                                                      device=self.device, dtype=self.dtype,
                                                      model_kwargs=self.model_kwargs)
        return self._compressor

    def engine_options(self) -> dict[str, Any]:
        """The keywords for :meth:`tpc_core.TPCCompressor.compress` / ``compress_batch``: each field named like
        one of :data:`ENGINE_KEYWORDS`, under that name, and the resolved ``token_counter``.

        So an engine option reaches an adapter by a field of its name alone (query-time adapters have
        ``budget_scope``, ``min_score``, ``top_n``; index-time ones ``batch_size``, ``show_progress``,
        ``describe_bare``).
        """
        fields = type(self).model_fields
        options = {name: getattr(self, name) for name in ENGINE_KEYWORDS if name in fields}
        options["token_counter"] = self.resolved_token_counter()
        return options

    def resolved_token_counter(self) -> TokenCounter | None:
        """The user's counter, resolved once (a tokenizer name would otherwise be loaded on every call)."""
        if self.token_counter is None:
            return None
        if self._counter is None or self._counter[0] is not self.token_counter:
            self._counter = (self.token_counter, resolve_token_counter(self.token_counter))
        return self._counter[1]

    def question_for(self, query: str | None) -> str | None:
        """The question sentences are scored against: the query, else ``task_description``, else ``None``
        (prompt-agnostic, noted once per adapter at INFO because it is the slow path)."""
        if query is not None and query.strip():
            return query
        if self.task_description is not None:
            return self.task_description
        if not self._agnostic_logged:
            self._agnostic_logged = True
            logger.info("%s has no query and no task_description, so it compresses prompt-agnostically: TPC reads the "
                        "task from the documents (a request they state, else a description its task descriptor "
                        "generates: the slow path). Pass a query, or set task_description= for a fixed task. Logged "
                        "once per adapter.", type(self).__name__)
        return None


class TPCSettings(TPCEngineSettings, ScopeOptions, FilterOptions):
    """:class:`TPCEngineSettings` plus what query-time adapters (compressors, postprocessors) add: one budget
    across the retrieved documents and reranker-style knobs applied after it.

    ``top_n``, ``min_score`` and ``sort_by_score`` act after the budget: they only remove sentences or documents,
    so the budget stays a hard ceiling.
    """

    sort_by_score: bool = False
    """Return documents by TPC score, best first (reranker order); default: the input (retrieval) order."""


def _what_to_do(error: Exception) -> str:
    """The message of a bad setting: the check's own (it names the setting and says what to pass), found inside
    pydantic's error where a validator raised it."""
    if isinstance(error, ValidationError):
        for detail in error.errors():
            cause = (detail.get("ctx") or {}).get("error")
            if isinstance(cause, Exception):
                return str(cause)
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"{where}: {first.get('msg')}; pass a value of the kind its documentation names."
    return str(error)
