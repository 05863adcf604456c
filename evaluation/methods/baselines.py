"""Sentence-level baselines, and the full prompt: the rows TPC is compared with that need no other framework.

Each :class:`SentenceScorer` splits with the shared splitter, scores sentences its own way, and keeps the best
under the budget with :func:`evaluation.budget.select_under_budget` (original order, never over budget).
"""

from __future__ import annotations

import importlib.util
import re
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from evaluation.budget import MiniLMTokenCounter, join_spans, select_under_budget
from evaluation.methods.base import AWARE, Compressed, Method, split_text, tpc_core_unavailable_reason

__all__ = ["BM25Sentences", "FullPrompt", "LeadPerPassage", "LeadSentences", "MiniLMCentroid", "MiniLMCosine",
           "RandomSentences", "SentenceScorer"]


class FullPrompt(Method):
    """No compression: the quality ceiling and the token count everyone else is divided into."""

    name = "full"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        return Compressed(text)


class SentenceScorer(Method):
    """Split, score each sentence, keep the best under the budget in original order."""

    def unavailable_reason(self) -> str | None:
        return tpc_core_unavailable_reason()

    def scores(self, sentences: list[str], question: str | None, sample_id: str) -> Sequence[float]:
        raise NotImplementedError

    def span_scores(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str | None,
                    sample_id: str) -> Sequence[float | None]:  # fmt: skip
        """Score of each sentence given where it sits in ``text``; ``None`` marks a sentence never kept.

        Default: :meth:`scores`, which sees the sentences only.
        """
        return self.scores(sentences, question, sample_id)

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        spans, sentences = split_text(text)
        if not spans:
            return Compressed("")
        scores = self.span_scores(text, spans, sentences, question, sample_id)
        eligible = [index for index, score in enumerate(scores) if score is not None]
        chosen = select_under_budget(
            [scores[index] for index in eligible], self.counter.many([sentences[index] for index in eligible]), budget
        )
        kept = [eligible[position] for position in chosen]
        return Compressed(join_spans(text, spans, kept), {"kept_sentences": len(kept), "sentences": len(spans)})


class RandomSentences(SentenceScorer):
    """Uniform random scores, seeded by (seed, sample id): the floor any scorer must beat."""

    name = "random"

    def __init__(self, counter: MiniLMTokenCounter, *, seed: int = 0, **kwargs: Any) -> None:
        super().__init__(counter, **kwargs)
        self.seed = seed

    def identity(self) -> str:
        return f"{self.name}:seed={self.seed}"

    def scores(self, sentences: list[str], question: str | None, sample_id: str) -> Sequence[float]:
        rng = np.random.default_rng(zlib.crc32(f"{self.seed}:{sample_id}".encode()))
        return rng.random(len(sentences)).tolist()


class LeadSentences(SentenceScorer):
    """The first sentences that fit: what truncation gives you."""

    name = "lead"

    def scores(self, sentences: list[str], question: str | None, sample_id: str) -> Sequence[float]:
        return [-float(index) for index in range(len(sentences))]


class LeadPerPassage(SentenceScorer):
    """Round-robin over the passages' leads: every passage's 1st sentence, then every 2nd, ... (Multi-News lead).

    The order is the library's own rule, :func:`tpc_core.engine.scoring.lead.lead_order` (the reference a
    salience model must beat). Sentences outside every passage (a template's instruction before the first
    ``Passage k:``) and sentences that are only a passage marker are never kept. Selection under the budget is
    the shared greedy rule, so a sentence that no longer fits is skipped and a later, shorter one may still be
    taken.
    """

    name = "lead-per-passage"

    def span_scores(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str | None,
                    sample_id: str) -> Sequence[float | None]:  # fmt: skip
        from tpc_core.engine.scoring.lead import lead_order, passage_layout

        layout = passage_layout((text,), (spans,))
        order = lead_order((text,), (spans,)).tolist()
        return [score if passage is not None else None for score, passage in zip(order, layout.passage)]


class MiniLMCentroid(SentenceScorer):
    """Cosine of each sentence's MiniLM embedding to the mean embedding of all sentences (centroid summary)."""

    name = "minilm-centroid"

    def scores(self, sentences: list[str], question: str | None, sample_id: str) -> Sequence[float]:
        self.embedder.begin_call()
        vectors = self.embedder.embed(sentences)  # unit norm: cosine = v . c / |c|
        centroid = vectors.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        if norm == 0.0:
            return [0.0] * len(sentences)
        return (vectors @ (centroid / norm)).tolist()


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class BM25Sentences(SentenceScorer):
    """BM25 (Okapi, rank-bm25 defaults) of each sentence against the question."""

    name = "bm25"
    settings = frozenset({AWARE})
    needs_question = True

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("rank_bm25") is None:
            return "rank-bm25 not installed (pip install rank-bm25)"
        return tpc_core_unavailable_reason()

    def scores(self, sentences: list[str], question: str | None, sample_id: str) -> Sequence[float]:
        from rank_bm25 import BM25Okapi  # lazy: optional (benchmarks extra)

        corpus = [_words(sentence) or ["_"] for sentence in sentences]
        return BM25Okapi(corpus).get_scores(_words(question or "")).tolist()


class MiniLMCosine(SentenceScorer):
    """Cosine of each sentence's MiniLM embedding with the question's (SentenceEmbeddingOptimizer's rule)."""

    name = "minilm-cosine"
    settings = frozenset({AWARE})
    needs_question = True

    def scores(self, sentences: list[str], question: str | None, sample_id: str) -> Sequence[float]:
        self.embedder.begin_call()
        vectors = self.embedder.embed([question or ""] + sentences)
        return (vectors[1:] @ vectors[0]).tolist()


