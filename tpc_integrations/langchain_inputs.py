"""LangChain: the context variables of a chain's input compressed toward its question variable, before the prompt.

In a chain the question and the context are separate variables until the prompt template fills them in, so TPC is
told the question and finds nothing (prompt-aware)::

    from tpc_integrations.langchain import TPCInputCompressor

    chain = ({"context": retriever | format_docs, "question": RunnablePassthrough()}
             | TPCInputCompressor(target_tokens=300) | prompt | llm)

Needs ``pip install tpc-langchain[langchain]``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

try:
    from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
    from langchain_core.documents import Document
    from langchain_core.runnables import RunnableConfig, RunnableLambda, RunnableSerializable
    from langchain_core.runnables.config import run_in_executor
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCInputCompressor needs langchain-core: pip install 'tpc-langchain[langchain]'") from error

from pydantic import ConfigDict, field_validator, model_validator

from tpc_core.diagnostics import register_library_path
from tpc_integrations._common import (
    CallOutcome,
    DocumentOutcome,
    TPCSettings,
    compress_call,
    ensure_text,
    fresh_metadata,
)
from tpc_integrations._failsafe import Fallback, guarded

__all__ = ["INPUTS_EVENT", "TPCInputCompressor"]

INPUTS_EVENT = "tpc_input_compression"
"""Name of the custom event each call emits to the run's callbacks (``on_custom_event``, ``astream_events``); its
data: the ``tpc_compression`` figures (origin_tokens, compressed_tokens, budget, documents_in, documents_out,
task_description, task_source, mode, from_cache, cache_hits, cache_misses) plus context_keys and question_key; a
call that fell back carries fallback, returned and error instead of the figures."""

# A chain calls the runnable from inside langchain_core: our warnings name the user's invoke() line.
register_library_path(Path(inspect.getfile(RunnableLambda)).parents[1])


@dataclass(frozen=True)
class _Slot:
    """One context variable in the engine call: its items (str or ``Document``) and where their texts start."""

    key: str
    items: list[Any]
    single: bool
    start: int


class TPCInputCompressor(TPCSettings, RunnableSerializable[dict[str, Any], dict[str, Any]]):
    """Compresses the context variables of a chain's input dict toward its question variable (prompt-aware: the
    question is given, nothing is searched for), before the prompt template is filled.

    Behaviour:
        * Input: a dict (any mapping) holding ``question_key`` (a str) and every key of ``context_keys``. Output: a
          new dict, every other key passed through as it was; the input is never changed.
        * A context value may be a str, a ``Document``, or a list of str and/or ``Document``. A str comes back as
          the compressed str, a ``Document`` as a new ``Document`` (same id, compressed ``page_content``, a deep
          copy of the metadata plus the ``tpc_*`` keys :class:`TPCDocumentCompressor` writes, among them
          ``tpc_task_description`` and ``tpc_task_source``). In a list, an item that keeps no sentence is dropped
          (as a reranker drops documents below its cut), the others keep their input order
          (``sort_by_score=True``: best first); an empty list returns ``[]`` without loading the model. A single
          str or ``Document`` that keeps nothing comes back empty. Compressed text is original sentences, verbatim,
          in order.
        * ``target_tokens`` / ``rate`` is one budget over the texts of every context variable together, counted
          with ``token_counter`` (the template and the question are not counted); ``budget_scope``, ``min_score``,
          ``top_n`` act as in :class:`TPCDocumentCompressor`. A blank question uses ``task_description`` when set,
          otherwise the context is compressed prompt-agnostically (TPC reads the task from it; logged once).
        * A chain wired wrong fails on its first call, whatever ``on_error`` says: an input that is not a mapping,
          a key of ``context_keys`` or ``question_key`` missing from it (``KeyError`` naming the keys it has), a
          question that is not a str (``TypeError``). A context value of another type, or a ``Document`` whose
          ``page_content`` is not a str, is a ``TypeError`` naming the key, or, with ``on_error="passthrough"``,
          the input comes back unchanged; ``deadline_ms`` applies as to the other adapters.
        * Sync, async (``ainvoke``: the model work runs in a worker thread), ``batch`` / ``abatch``, streaming as a
          single chunk. Each call emits a ``tpc_input_compression`` custom event to the run's callbacks.

    Example:
        >>> compressor = TPCInputCompressor(context_keys=["context"], question_key="question", target_tokens=300)
        >>> chain = {"context": retriever, "question": RunnablePassthrough()} | compressor | prompt | llm
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    context_keys: tuple[str, ...] = ("context",)
    """The input keys whose values are compressed (a str names one key)."""
    question_key: str = "question"
    """The input key that holds the question the context is compressed toward."""
    name: Optional[str] = "TPCInputCompressor"
    """The run's name in traces."""

    @field_validator("context_keys", mode="before")
    @classmethod
    def _one_key(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check_keys(self) -> TPCInputCompressor:
        if not self.context_keys:
            raise ValueError("context_keys is empty: name the input keys whose values are compressed.")
        if len(set(self.context_keys)) != len(self.context_keys):
            raise ValueError(f"context_keys names a key twice: {list(self.context_keys)}.")
        if self.question_key in self.context_keys:
            raise ValueError(f"question_key {self.question_key!r} is also in context_keys: the question is what the "
                             "context is compressed toward, not part of it.")
        return self

    def invoke(self, input: dict[str, Any], config: Optional[RunnableConfig] = None,  # LangChain's name
               **kwargs: Any) -> dict[str, Any]:
        """Compress one input dict (see the class docstring); ``kwargs`` are LangChain's and not used."""
        return self._as_lambda().invoke(input, config)

    async def ainvoke(self, input: dict[str, Any], config: Optional[RunnableConfig] = None,
                      **kwargs: Any) -> dict[str, Any]:
        """:meth:`invoke` with the model work in a worker thread, so the event loop keeps running."""
        return await self._as_lambda().ainvoke(input, config)

    def _as_lambda(self) -> RunnableLambda[dict[str, Any], dict[str, Any]]:
        # One run per call, under this runnable's name; the functions get the run's config for their event.
        return RunnableLambda(self._compress_in_run, afunc=self._acompress_in_run, name=self.get_name())

    def _compress_in_run(self, input: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        outputs, data = self.compress(input)
        dispatch_custom_event(INPUTS_EVENT, data, config=config)
        return outputs

    async def _acompress_in_run(self, input: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        outputs, data = await run_in_executor(None, self.compress, input)
        await adispatch_custom_event(INPUTS_EVENT, data, config=config)
        return outputs

    def compress(self, inputs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The compressed input dict and the call's figures (the event's data), outside any run: what
        :meth:`invoke` returns and emits.

        Raises:
            KeyError: A context key or the question key is missing from ``inputs``.
            TypeError: ``inputs`` is not a mapping, the question is not a str, or (``on_error="raise"``) a context
                value is not a str, a ``Document`` or a list of them.
        """
        question = self._question(inputs)
        slots: list[_Slot] = []

        def work(progress: Any) -> CallOutcome:
            texts = _read(inputs, self.context_keys, slots)
            return compress_call(self, texts, question)

        call, fallback, _ = guarded(self, type(self).__name__, work, _count(inputs, self.context_keys))
        extra = {"context_keys": list(self.context_keys), "question_key": self.question_key}
        if call is None:
            return {**inputs, **{key: _copied(inputs[key]) for key in self.context_keys}}, _fallback_data(
                fallback, extra)
        outputs = {slot.key: self._rebuilt(slot, call.documents[slot.start:slot.start + len(slot.items)])
                   for slot in slots}
        return {**inputs, **outputs}, {**call.event_data(), **extra}

    def _question(self, inputs: Any) -> str:
        """The question, after the checks a chain wired wrong fails."""
        if not isinstance(inputs, Mapping):
            raise TypeError(f"{type(self).__name__} takes the chain's input dict (the variables of the prompt "
                            f"template), got {type(inputs).__name__}; put it after a dict of runnables such as "
                            "{'context': retriever, 'question': RunnablePassthrough()}.")
        missing = [key for key in (*self.context_keys, self.question_key) if key not in inputs]
        if missing:
            raise KeyError(f"{type(self).__name__}: the input has no {', '.join(map(repr, missing))} (it has "
                           f"{sorted(map(str, inputs))}); set context_keys= and question_key= to the prompt's "
                           "variable names.")
        question = inputs[self.question_key]
        if not isinstance(question, str):
            raise TypeError(f"{type(self).__name__}: the question {self.question_key!r} is a "
                            f"{type(question).__name__}, not a str.")
        return question

    def _rebuilt(self, slot: _Slot, outcomes: Sequence[DocumentOutcome]) -> Any:
        """One context variable's compressed value, of its input's shape."""
        if slot.single:
            return _with_outcome(slot.items[0], outcomes[0])
        kept = [(item, outcome) for item, outcome in zip(slot.items, outcomes) if outcome.kept]
        if self.sort_by_score:  # stable: ties and unscored items keep their input order
            kept.sort(key=lambda pair: -pair[1].score if pair[1].score is not None else float("inf"))
        return [_with_outcome(item, outcome) for item, outcome in kept]


def _read(inputs: Mapping[str, Any], keys: Sequence[str], slots: list[_Slot]) -> list[str]:
    """The texts of every context variable, in order; ``slots`` receives where each variable's texts sit."""
    texts: list[str] = []
    for key in keys:
        value = inputs[key]
        single = isinstance(value, (str, Document))
        if not single and not isinstance(value, (list, tuple)):
            raise TypeError(f"Context {key!r} is a {type(value).__name__}: TPCInputCompressor compresses a str, a "
                            "langchain Document, or a list of them.")
        items = [value] if single else list(value)
        slots.append(_Slot(key, items, single, len(texts)))
        texts.extend(_text(item, f"Context {key!r}" + ("" if single else f" item {position}"))
                     for position, item in enumerate(items))
    return texts


def _text(item: Any, label: str) -> str:
    if isinstance(item, Document):
        return ensure_text(item.page_content, label)
    if isinstance(item, str):
        return item
    raise TypeError(f"{label} is a {type(item).__name__}, not a str or a langchain Document.")


def _with_outcome(item: Any, outcome: DocumentOutcome) -> Any:
    """A str's compressed text, or a new ``Document`` holding it with the ``tpc_*`` metadata."""
    if isinstance(item, str):
        return outcome.text
    return item.model_copy(update={"page_content": outcome.text,
                                   "metadata": fresh_metadata(item.metadata, outcome.metadata())})


def _count(inputs: Mapping[str, Any], keys: Sequence[str]) -> int:
    """How many texts the context variables hold, for a fallback's event."""
    return sum(len(value) if isinstance(value, (list, tuple)) else 1 for value in (inputs[key] for key in keys))


def _copied(value: Any) -> Any:
    """A fallback's value: the input's, with copies of its ``Document`` objects (a list as a new list)."""
    if isinstance(value, Document):
        try:
            return value.model_copy(deep=True)
        except Exception:  # noqa: BLE001 - a document that cannot be copied comes back as it was given
            return value
    if isinstance(value, (list, tuple)):
        return [_copied(item) for item in value]
    return value


def _fallback_data(fallback: Fallback | None, extra: dict[str, Any]) -> dict[str, Any]:
    assert fallback is not None  # guarded returns a fallback whenever there is no value
    return {**fallback.event_data(), "mode": "fallback", **extra}
