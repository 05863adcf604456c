"""trimwise through its LlamaIndex postprocessor, one row per ranking strategy.

Its output is rebuilt from the source ranges it keeps, as whole sentences of the shared splitter
(:func:`spans_within`), and cut back under the budget should it still be over (:func:`drop_lowest_until_fits`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import textwrap
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from evaluation.budget import MiniLMTokenCounter, join_spans
from evaluation.methods.base import (
    AGNOSTIC,
    AWARE,
    Compressed,
    Method,
    split_text,
    tpc_core_unavailable_reason,
)
from evaluation.methods.baselines import MiniLMCentroid, MiniLMCosine

__all__ = ["TrimwiseHybrid", "TrimwiseLexical", "TrimwiseMethod", "TrimwiseSemantic", "TrimwiseStructural",
           "drop_lowest_until_fits", "spans_within"]


def spans_within(spans: Sequence[tuple[int, int]], ranges: Sequence[tuple[int, int]]) -> list[int]:
    """Indices of ``spans`` lying wholly inside one of ``ranges`` (both ascending, ranges non-overlapping)."""
    starts = [start for start, _ in ranges]
    kept = []
    for index, (start, end) in enumerate(spans):
        position = bisect_right(starts, start) - 1
        if position >= 0 and end <= ranges[position][1]:
            kept.append(index)
    return kept


def drop_lowest_until_fits(text: str, spans: Sequence[tuple[int, int]], kept: Sequence[int], scores: Sequence[float],
                           counter: Callable[[str], int], budget: int) -> list[int]:  # fmt: skip
    """``kept`` less its lowest-scored sentences (``scores[i]`` for ``kept[i]``), dropped one at a time until the
    joined text fits ``budget``; ties drop the later sentence first. Whole sentences only, order kept."""
    remaining = list(kept)
    for position in sorted(range(len(kept)), key=lambda p: (scores[p], -p)):
        if counter(join_spans(text, spans, remaining)) <= budget:
            break
        remaining.remove(kept[position])
    return remaining


def _module_missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a parent package is missing
        return True


def _tiktoken_reason(encoding: str) -> str | None:
    """``None`` when tiktoken loads ``encoding`` here (bundled or cached), else why not; it is really tried."""
    try:
        import tiktoken

        tiktoken.get_encoding(encoding)
    except Exception as error:  # noqa: BLE001 (no network, no cache, unknown name: all mean "cannot run")
        detail = textwrap.shorten(str(error), 110, placeholder=" ...")
        return f"tiktoken cannot load {encoding!r} here ({type(error).__name__}: {detail})"
    return None


class TrimwiseMethod(Method):
    """trimwise through its LlamaIndex postprocessor (``TrimwiseNodePostprocessor``), the whole text as one node.

    trimwise ranks Markdown blocks (paragraphs, list items, headings), not sentences, and keeps the best under
    ``limit`` counted by our MiniLM counter (its ``token_counter``; it raises rather than return more). When no
    block fits it keeps a prefix of the best one. It writes ``[…omitted…]`` into gaps when that still fits, so
    its text is not verbatim; the output here is rebuilt from the source ranges it reports
    (``metadata["trimwise"]["spans"]``): the shared splitter's sentences lying wholly inside a kept range, joined
    by :func:`~evaluation.budget.join_spans`. A sentence trimwise cut is dropped, never truncated. Should the
    rebuilt text still exceed the budget (not expected: WordPiece counts add up over whitespace joins), its
    sentences are dropped lowest MiniLM cosine first, to the question or, without one, to their centroid
    (:func:`drop_lowest_until_fits`); trimwise exposes no per-block ranks.

    The semantic and hybrid strategies embed with the shared MiniLM through trimwise's ``embedding_callback``.
    The lexical, hybrid and structural strategies tokenise with tiktoken (``TrimConfig.token_encoding``) for
    BM25 / TF-IDF even when a token counter is given; :meth:`unavailable_reason` tries to load that encoding.
    """

    strategy: str = ""
    embeds: bool = False  # ranks with the embedding callback
    uses_tiktoken: bool = True  # ranks with tiktoken ids (BM25 / TF-IDF)
    settings = frozenset({AWARE})
    needs_question = True

    def __init__(self, counter: MiniLMTokenCounter, **kwargs: Any) -> None:
        super().__init__(counter, **kwargs)
        self._trimmer: Any = None

    def unavailable_reason(self) -> str | None:
        return self._unavailable

    @cached_property
    def _unavailable(self) -> str | None:
        """Worked out once per instance: loading the tiktoken encoding may try the network."""
        packages = {"trimwise": "trimwise", "llama_index.postprocessor.trimwise": "llama-index-postprocessor-trimwise"}
        for module, package in packages.items():
            if _module_missing(module):
                return f"{package} not installed (pip install {package})"
        if self.uses_tiktoken:
            from trimwise import TrimConfig  # lazy: optional peer (benchmarks extra)

            reason = _tiktoken_reason(TrimConfig().token_encoding)
            if reason is not None:
                return f"{reason}; trimwise's {self.strategy} ranking needs it even when given a token counter"
        return tpc_core_unavailable_reason()

    def identity(self) -> str:
        versions = ":".join(f"{package}={importlib.metadata.version(package)}"
                            for package in ("trimwise", "llama-index-postprocessor-trimwise"))  # fmt: skip
        return f"{self.name}:{versions}:embed=minilm"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        spans, sentences = split_text(text)
        if not spans:
            return Compressed("")
        if self.embeds:
            self.embedder.begin_call()
        ranges, trimmed = self._trim(text, question if self.needs_question else None, budget)
        kept = spans_within(spans, ranges)
        if self.counter(join_spans(text, spans, kept)) > budget:
            scores = self._cut_back_scores([sentences[index] for index in kept], question)
            kept = drop_lowest_until_fits(text, spans, kept, scores, self.counter, budget)
        info = {"kept_sentences": len(kept), "sentences": len(spans), "trimwise_ranges": len(ranges),
                "trimwise_tokens": self.counter(trimmed)}  # fmt: skip
        return Compressed(join_spans(text, spans, kept), info)

    def _trim(self, text: str, question: str | None, budget: int) -> tuple[list[tuple[int, int]], str]:
        """trimwise's kept source ranges and its own output text (with omission markers)."""
        from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # lazy: optional extra (llamaindex)
        from llama_index.postprocessor.trimwise import TrimwiseNodePostprocessor  # lazy: optional extra (llamaindex)
        from trimwise import Trimmer  # lazy: optional peer (benchmarks extra)

        if self._trimmer is None:
            self._trimmer = Trimmer(embedding_callback=self._embed)
        processor = TrimwiseNodePostprocessor(limit=budget, strategy=self.strategy, trimmer=self._trimmer,
                                              token_counter=self.counter)  # fmt: skip
        query = QueryBundle(query_str=question) if question else None
        nodes = processor.postprocess_nodes([NodeWithScore(node=TextNode(text=text), score=1.0)], query_bundle=query)
        if not nodes:
            return [], ""
        node = nodes[0].node
        return [(span["start"], span["end"]) for span in node.metadata["trimwise"]["spans"]], node.get_content()

    def _embed(self, query: str, passages: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """trimwise's ``embedding_callback``: the shared MiniLM vectors of the query and of each passage."""
        vectors = self.embedder.embed([query, *passages])
        return vectors[0], vectors[1:]

    def _cut_back_scores(self, sentences: list[str], question: str | None) -> Sequence[float]:
        """Rank for the budget guard: MiniLM cosine to the question, or to the sentences' centroid without one."""
        ranker = MiniLMCosine if question else MiniLMCentroid
        return ranker(self.counter, embedder_factory=self.embedder_factory).scores(sentences, question, "")


class TrimwiseSemantic(TrimwiseMethod):
    """trimwise ``semantic``: MiniLM cosine of each block (with its neighbours) to the question, MMR."""

    name = "trimwise-semantic"
    strategy = "semantic"
    embeds = True
    uses_tiktoken = False


class TrimwiseLexical(TrimwiseMethod):
    """trimwise ``lexical`` (what ``auto`` picks with a question): BM25 over tiktoken ids, MMR."""

    name = "trimwise-lexical"
    strategy = "lexical"


class TrimwiseHybrid(TrimwiseMethod):
    """trimwise ``hybrid``: equal blend of the lexical and semantic scores."""

    name = "trimwise-hybrid"
    strategy = "hybrid"
    embeds = True


class TrimwiseStructural(TrimwiseMethod):
    """trimwise ``structural`` (what ``auto`` picks without a question): TF-IDF centrality, section shares."""

    name = "trimwise-structural"
    strategy = "structural"
    settings = frozenset({AGNOSTIC})
    needs_question = False
