"""LangChain adapter: :class:`TPCDocumentCompressor`, a ``BaseDocumentCompressor`` backed by TPC.

Add it to an existing retriever in one line::

    from langchain_classic.retrievers import ContextualCompressionRetriever
    from tpc_integrations.langchain import TPCDocumentCompressor

    retriever = ContextualCompressionRetriever(
        base_compressor=TPCDocumentCompressor(target_tokens=300), base_retriever=vector_store.as_retriever())

At ingestion, :class:`TPCDocumentTransformer` compresses each document once, before it is embedded::

    store.add_documents(TPCDocumentTransformer(rate=0.5).transform_documents(chunks))

A conversation, between a prompt and a chat model (:mod:`tpc_integrations.langchain_messages`)::

    chain = prompt | TPCMessagesCompressor(target_tokens=2000) | chat_model

A chain's input dict, its context variables compressed toward its question variable before the prompt
(:mod:`tpc_integrations.langchain_inputs`)::

    chain = {"context": retriever | format_docs, "question": RunnablePassthrough()} | TPCInputCompressor(
        target_tokens=300) | prompt | llm

Needs ``pip install tpc-langchain[langchain]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    from langchain_core.callbacks import Callbacks
    from langchain_core.documents import BaseDocumentCompressor, BaseDocumentTransformer, Document
    from langchain_core.runnables.config import (
        ensure_config,
        get_async_callback_manager_for_config,
        get_callback_manager_for_config,
        run_in_executor,
    )
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCDocumentCompressor needs langchain-core: pip install 'tpc-langchain[langchain]'") from error

from pydantic import ConfigDict

from tpc_integrations._common import CallOutcome, TPCSettings, compress_call, ensure_text, ensure_type, fresh_metadata
from tpc_integrations._failsafe import Fallback, guarded
from tpc_integrations._ingest import IngestOutcome, TPCIngestSettings, compress_each
from tpc_integrations.langchain_inputs import INPUTS_EVENT, TPCInputCompressor
from tpc_integrations.langchain_messages import MESSAGES_EVENT, TPCMessagesCompressor

__all__ = ["COMPRESSION_EVENT", "INGESTION_EVENT", "INPUTS_EVENT", "MESSAGES_EVENT", "TPCDocumentCompressor",
           "TPCDocumentTransformer", "TPCInputCompressor", "TPCMessagesCompressor"]

COMPRESSION_EVENT = "tpc_compression"
"""Name of the custom event each call emits through LangChain callbacks (``on_custom_event``,
``astream_events``); its data: origin_tokens, compressed_tokens, budget, documents_in, documents_out,
task_description, task_source, mode, and whether the sentence cache served the call: from_cache (every document
found there), cache_hits and cache_misses (documents). A call that fell back (``on_error="passthrough"``,
``deadline_ms``) carries fallback ("error" or "deadline"), returned ("input" or "partial"), error ("TypeName:
message") and documents_compressed instead of the figures."""

INGESTION_EVENT = "tpc_ingestion"
"""Name of the custom event :class:`TPCDocumentTransformer` emits to the enclosing run's callbacks when a call fell
back (its data as :data:`COMPRESSION_EVENT`'s fallback keys)."""


class TPCDocumentCompressor(TPCSettings, BaseDocumentCompressor):
    """Keeps, across the retrieved documents, the sentences most relevant to the query (or, with an empty
    query, to the task TPC's task descriptor reads from the documents themselves).

    Behaviour:
        * Returns new ``Document`` objects, in input order: same ``id``, compressed ``page_content`` (original
          sentences, verbatim, in order), a deep copy of the metadata plus ``tpc_relevance_score`` (also under
          the rerankers' ``relevance_score``), ``tpc_origin_tokens``, ``tpc_compressed_tokens``,
          ``tpc_kept_sentences`` and ``tpc_task_description``. The inputs are never modified.
        * A document that keeps no sentence (the budget went to better ones, ``min_score`` removed them, or its
          text is empty or whitespace) is dropped, as a reranker drops documents below its cut.
        * ``target_tokens`` / ``rate`` is a real budget over all documents of the call
          (``budget_scope="global"``) or split across them by size (``"per_document"``); a budget that covers
          everything returns the documents unchanged, with ``tpc_relevance_score`` ``None`` (nothing scored).
        * After the budget, and only removing: ``min_score`` (a sentence floor), ``top_n`` (documents kept,
          best first) and ``sort_by_score`` (reranker order instead of input order).
        * An empty or blank ``query`` uses ``task_description`` when set; otherwise it switches to
          prompt-agnostic mode: TPC reads the task from the documents (a request they state, else one its CTD
          writes, reported in ``tpc_task_description``); slower, logged once at INFO.
        * Each call emits a ``tpc_compression`` custom event (token counts, task description, cache hits and
          misses) to the run's LangChain callbacks; it shows in ``astream_events`` as ``on_custom_event``.
        * ``cache`` (e.g. ``"memory"``, a directory, an ``InMemoryByteStore`` / ``LocalFileStore``) keeps what TPC
          reads of each document before the question, so a document retrieved again is not read by the model
          again: identical results at a small fraction of the cost. Warm it at ingestion with
          ``TPCDocumentTransformer(mode="warm", cache=...)`` (the same splitter and model).
        * A non-str ``page_content``, or an item that is not a ``Document`` (a plain string), raises
          ``TypeError`` naming the item; an empty list returns ``[]`` without loading the model. Duplicate ids
          are fine: documents are matched by position.
        * Metadata values that cannot be deep-copied (a lock, a client) are shared by reference; everything
          else is copied.
        * Settings are checked at construction (device, model, splitter, peer field names such as LLMLingua's
          ``target_token``); ``load_on_init=True`` also loads the model there. Copyable and picklable.

    Example:
        >>> compressor = TPCDocumentCompressor(target_tokens=200)
        >>> compressed = compressor.compress_documents(docs, "Who founded the company?")
        >>> compressed[0].metadata["tpc_relevance_score"]
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        """Compress ``documents`` for ``query`` (blank: ``task_description``, else prompt-agnostic).

        Args:
            documents: Retrieved documents; left unchanged.
            query: The user's question; ``""`` lets TPC use ``task_description`` or read the task from the
                documents instead.
            callbacks: The run's callbacks (``ContextualCompressionRetriever`` passes its run's child manager,
                or a list of handlers): each call emits one ``tpc_compression`` custom event to them.

        Returns:
            New documents for those that kept at least one sentence, in input order (by score with
            ``sort_by_score=True``), at most ``top_n``.

        Raises:
            TypeError: An item that is not a ``Document``, or a document whose ``page_content`` is not a str.
        """
        given, call, fallback = self._compress(documents, query)
        _dispatch(COMPRESSION_EVENT, _event(given, call, fallback), callbacks)
        return self._outputs(given, call)

    async def acompress_documents(self, documents: Sequence[Document], query: str,
                                  callbacks: Callbacks | None = None) -> Sequence[Document]:
        """:meth:`compress_documents` with the model work in a worker thread, so the event loop keeps running;
        concurrent calls on one shared engine give the same results as sequential ones. The custom
        event is dispatched on the event loop (async handlers, ``astream_events``)."""
        given, call, fallback = await run_in_executor(None, self._compress, documents, query)
        await _adispatch(COMPRESSION_EVENT, _event(given, call, fallback), callbacks)
        return self._outputs(given, call)

    def _compress(self, documents: Sequence[Document], query: str
                  ) -> tuple[list[Document], CallOutcome | None, Fallback | None]:
        documents = list(documents)
        call, fallback, _ = guarded(self, type(self).__name__,
                                    lambda progress: compress_call(self, _texts(documents), query), len(documents))
        return documents, call, fallback

    def _outputs(self, documents: list[Document], call: CallOutcome | None) -> list[Document]:
        if call is None:  # a fallback: the input, unchanged
            return [_unchanged(doc) for doc in documents]
        kept = [(doc, outcome) for doc, outcome in zip(documents, call.documents) if outcome.kept]
        if self.sort_by_score:
            kept.sort(key=lambda pair: _descending(pair[1].score))
        return [_with_outcome(doc, outcome.text, outcome.metadata()) for doc, outcome in kept]


class TPCDocumentTransformer(TPCIngestSettings, BaseDocumentTransformer):
    """Index-time compression: each document is compressed once, before it is embedded and stored, so every
    later prompt built from the store is smaller. No question is needed.

    Behaviour:
        * Each document is compressed on its own: ``rate`` keeps that fraction of its tokens (default 0.2),
          ``target_tokens`` caps it. Sentences are scored against ``task_description`` when set (e.g. "Answer
          customer questions about billing"), otherwise against the task TPC reads from the document itself
          (prompt-agnostic: slower, the task descriptor may generate a description per document).
        * Returns new ``Document`` objects in input order, one per input (nothing is dropped): same ``id``,
          the compressed ``page_content`` (original sentences, verbatim, in order), a deep copy of the metadata
          plus ``tpc_origin_tokens``, ``tpc_compressed_tokens``, ``tpc_task_description``, ``tpc_task_source``
          and ``tpc_compression`` ("compressed", "unchanged", "kept_whole" or "empty"). Inputs are not modified.
        * A document none of whose sentences fits its budget is kept whole (``"kept_whole"``, with a logged
          warning): ingestion never loses text silently.
        * ``mode="warm"`` with ``cache=`` cuts nothing: every document keeps its whole text
          (``tpc_compression="cached"``) and its sentence-cache entry is stored, so a ``TPCDocumentCompressor``
          with the same ``cache`` compresses it per question, prompt-aware, at almost no cost.

    Example:
        >>> transformer = TPCDocumentTransformer(rate=0.5, task_description="Answer questions about the report")
        >>> store.add_documents(transformer.transform_documents(splitter.split_documents(docs)))
        >>> warm = TPCDocumentTransformer(mode="warm", cache="tpc_cache/")      # full text, query-time compression
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> Sequence[Document]:
        """Compress each document for indexing.

        Args:
            documents: The documents to ingest; left unchanged.
            **kwargs: Not used; present in LangChain's interface. Passing any raises ``TypeError``.

        Returns:
            One new document per input, in order.

        Raises:
            TypeError: A document whose ``page_content`` is not a str, or an unexpected keyword argument.
        """
        if kwargs:
            raise TypeError(f"TPCDocumentTransformer.transform_documents got unexpected arguments {sorted(kwargs)}; "
                            "set options as fields (rate, target_tokens, task_description, ...).")
        documents = list(documents)
        outcomes, fallback, progress = guarded(self, type(self).__name__,
                                               lambda progress: compress_each(self, _texts(documents), progress),
                                               len(documents))
        done: list[IngestOutcome]
        if fallback is None:
            assert outcomes is not None  # guarded returns the work's value whenever there is no fallback
            done = outcomes
        else:
            done = list(progress.done) if fallback.reason == "deadline" else []
            _dispatch(INGESTION_EVENT, fallback.event_data(), None)
        return [_with_outcome(doc, outcome.text, outcome.metadata()) for doc, outcome in zip(documents, done)] + [
            _unchanged(doc) for doc in documents[len(done):]]

    async def atransform_documents(self, documents: Sequence[Document], **kwargs: Any) -> Sequence[Document]:
        """:meth:`transform_documents` in a worker thread, so the event loop keeps running."""
        return await run_in_executor(None, self.transform_documents, documents, **kwargs)


def _descending(score: float | None) -> float:
    """Sort key: best score first, unscored last (``sort`` is stable, so ties keep input order)."""
    return -score if score is not None else float("inf")


def _event(documents: list[Document], call: CallOutcome | None, fallback: Fallback | None) -> dict[str, Any]:
    """The call's event data: its figures, or what its fallback returned."""
    if call is not None:
        return call.event_data()
    assert fallback is not None
    return {**fallback.event_data(), "documents_out": len(documents), "mode": "fallback"}


def _dispatch(name: str, data: dict[str, Any], callbacks: Callbacks | None) -> None:
    """A custom event, to the given callbacks or, without them, to the enclosing run's."""
    manager = get_callback_manager_for_config(ensure_config({"callbacks": callbacks} if callbacks else None))
    if manager.handlers:  # the parent run's id when there is one, a new one for handlers passed directly
        manager.on_custom_event(name, data, run_id=manager.parent_run_id)


async def _adispatch(name: str, data: dict[str, Any], callbacks: Callbacks | None) -> None:
    manager = get_async_callback_manager_for_config(ensure_config({"callbacks": callbacks} if callbacks else None))
    if manager.handlers:
        await manager.on_custom_event(name, data, run_id=manager.parent_run_id)


def _unchanged(document: Any) -> Any:
    """A fallback's output: a deep copy of the input (the input itself where it cannot be copied)."""
    try:
        return document.model_copy(deep=True)
    except Exception:  # noqa: BLE001 - an unreadable document comes back as it was given
        return document


def _texts(documents: list[Document]) -> list[str]:
    """Each document's ``page_content``; a TypeError naming the item that is not a ``Document`` or not text."""
    for position, doc in enumerate(documents):
        ensure_type(doc, Document, f"Document {position}",
                    "langchain Document; wrap text as Document(page_content=text)")
    return [ensure_text(doc.page_content, _describe(position, doc)) for position, doc in enumerate(documents)]


def _describe(position: int, document: Any) -> str:
    identifier = getattr(document, "id", None)
    return f"Document {position}" + (f" (id={identifier!r})" if identifier is not None else "")


def _with_outcome(document: Document, text: str, tpc_metadata: dict[str, Any]) -> Document:
    # model_copy keeps the class (Document subclasses), id and every other field; metadata is deep-copied so
    # later changes to either side never leak into the other.
    return document.model_copy(update={"page_content": text,
                                       "metadata": fresh_metadata(document.metadata, tpc_metadata)})
