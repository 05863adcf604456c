"""LangChain adapter: :class:`TPCDocumentCompressor`, a ``BaseDocumentCompressor`` backed by TPC.

Add it to an existing retriever in one line::

    from langchain_classic.retrievers import ContextualCompressionRetriever
    from tpc_integrations.langchain import TPCDocumentCompressor

    retriever = ContextualCompressionRetriever(
        base_compressor=TPCDocumentCompressor(target_tokens=300), base_retriever=vector_store.as_retriever())

Needs ``pip install tpc-langchain[langchain]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    from langchain_core.callbacks import Callbacks
    from langchain_core.documents import BaseDocumentCompressor, Document
    from langchain_core.runnables.config import run_in_executor
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCDocumentCompressor needs langchain-core: pip install 'tpc-langchain[langchain]'") from error

from pydantic import ConfigDict

from tpc_integrations._common import TPCSettings, compress_texts, copy_metadata, ensure_text, ensure_type

__all__ = ["TPCDocumentCompressor"]


class TPCDocumentCompressor(TPCSettings, BaseDocumentCompressor):
    """Keeps, across the retrieved documents, the sentences most relevant to the query (or, with an empty
    query, to the task TPC's task descriptor reads from the documents themselves).

    Behaviour:
        * Returns new ``Document`` objects, in input order: same ``id``, compressed ``page_content`` (original
          sentences, verbatim, in order), a deep copy of the metadata plus ``tpc_relevance_score``,
          ``tpc_origin_tokens``, ``tpc_compressed_tokens``, ``tpc_kept_sentences`` and
          ``tpc_task_description``. The inputs are never modified.
        * A document that keeps no sentence (the budget went to better ones, or its text is empty or
          whitespace) is dropped, as a reranker drops documents below its cut.
        * ``target_tokens`` / ``rate`` is a real budget over all documents of the call
          (``budget_scope="global"``) or split across them by size (``"per_document"``); a budget that covers
          everything returns the documents unchanged, with ``tpc_relevance_score`` ``None`` (nothing scored).
        * An empty or blank ``query`` switches to prompt-agnostic mode: the CTD writes a task description from
          the documents and sentences are scored against it (reported in ``tpc_task_description``); slower
          (a small LM generates ~48 tokens) but needs no question.
        * A non-str ``page_content``, or an item that is not a ``Document`` (a plain string), raises
          ``TypeError`` naming the item; an empty list returns ``[]`` without loading the model. Duplicate ids
          are fine: documents are matched by position.
        * Metadata values that cannot be deep-copied (a lock, a client) are shared by reference; everything
          else is copied.

    Example:
        >>> compressor = TPCDocumentCompressor(target_tokens=200)
        >>> compressed = compressor.compress_documents(docs, "Who founded the company?")
        >>> compressed[0].metadata["tpc_relevance_score"]
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", protected_namespaces=(),
                              use_attribute_docstrings=True)

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None) -> Sequence[Document]:
        """Compress ``documents`` for ``query`` (blank: prompt-agnostic).

        Args:
            documents: Retrieved documents; left unchanged.
            query: The user's question; ``""`` lets the CTD describe the task instead.
            callbacks: Accepted for the LangChain interface (the pipeline checks for this parameter); the
                engine reports nothing through it.

        Returns:
            New documents for those that kept at least one sentence, in input order.

        Raises:
            TypeError: An item that is not a ``Document``, or a document whose ``page_content`` is not a str.
        """
        documents = list(documents)
        for position, doc in enumerate(documents):
            ensure_type(doc, Document, f"Document {position}",
                        "langchain Document; wrap text as Document(page_content=text)")
        texts = [ensure_text(doc.page_content, _describe(position, doc)) for position, doc in enumerate(documents)]
        outcomes = compress_texts(self, texts, query)
        return [_with_outcome(doc, outcome.text, outcome.metadata())
                for doc, outcome in zip(documents, outcomes) if outcome.kept]

    async def acompress_documents(self, documents: Sequence[Document], query: str,
                                  callbacks: Callbacks | None = None) -> Sequence[Document]:
        """:meth:`compress_documents` in a worker thread, so the event loop keeps running; concurrent calls
        on one shared engine give the same results as sequential ones."""
        return await run_in_executor(None, self.compress_documents, documents, query, callbacks)


def _describe(position: int, document: Any) -> str:
    identifier = getattr(document, "id", None)
    return f"Document {position}" + (f" (id={identifier!r})" if identifier is not None else "")


def _with_outcome(document: Document, text: str, tpc_metadata: dict[str, Any]) -> Document:
    # model_copy keeps the class (Document subclasses), id and every other field; metadata is deep-copied so
    # later changes to either side never leak into the other.
    return document.model_copy(update={"page_content": text,
                                       "metadata": {**copy_metadata(document.metadata), **tpc_metadata}})
