"""Compression methods compared under one budget, one token counter and one sentence splitter.

Every method maps ``(text, question | None, budget)`` to a compressed text. Sentence-level baselines split
with ``tpc_core.segmentation.split_sentences``, score sentences their own way, and keep the best under the
budget with :func:`benchmarks.budget.select_under_budget` (original order, never over budget). The framework
baselines run the real LlamaIndex / LangChain components; their knobs (percentile, top-k) are set to the
largest value whose output fits the budget (see the classes). A method whose dependency is missing reports
why in :meth:`Method.unavailable_reason` and is skipped, never crashing the run.

:data:`METHOD_NAMES` are the default rows; :data:`OPT_IN_METHOD_NAMES` run only when named with ``--methods``
(they cannot run offline: trimwise's tiktoken-based strategies). :data:`ALL_METHOD_NAMES` is both.

Several TPC checkpoints can be compared in one run: :func:`method_specs` expands ``tpc-aware`` /
``tpc-agnostic`` into one row per model, labelled by :func:`tpc_model_labels`.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import textwrap
import zlib
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.budget import MiniLMTokenCounter, join_spans, select_under_budget

__all__ = [
    "ALL_METHOD_NAMES",
    "Compressed",
    "Method",
    "MethodSpec",
    "METHOD_NAMES",
    "OPT_IN_METHOD_NAMES",
    "TPC_METHOD_NAMES",
    "DEFAULT_TPC_MODEL",
    "build_method",
    "drop_lowest_until_fits",
    "method_settings",
    "method_specs",
    "passage_starts",
    "spans_within",
    "split_spans",
    "split_model_spec",
    "tpc_model_labels",
]

AWARE, AGNOSTIC = "aware", "agnostic"
DEFAULT_TPC_MODEL = "tpc-mini"


@dataclass(frozen=True)
class Compressed:
    """A method's output: the compressed text plus whatever it reports (task description, knob...)."""

    text: str
    info: dict[str, Any] = field(default_factory=dict)


def split_spans(text: str) -> list[tuple[int, int]]:
    """The project's shared sentence splitter."""
    from tpc_core.segmentation import split_sentences  # noqa: PLC0415

    return list(split_sentences(text))


def split_text(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Sentence spans of ``text`` and the sentences themselves."""
    spans = split_spans(text)
    return spans, [text[start:end] for start, end in spans]


def _tpc_core_reason() -> str | None:
    try:
        import tpc_core.segmentation  # noqa: F401, PLC0415
    except Exception as error:  # noqa: BLE001 (any import failure means "cannot run")
        return f"tpc_core not importable ({type(error).__name__}: {error})"
    return None


class Method:
    """Base class. Subclasses set ``name``/``settings`` and implement :meth:`compress`."""

    name: str = ""
    settings: frozenset[str] = frozenset({AWARE, AGNOSTIC})
    needs_question: bool = False

    def __init__(self, counter: MiniLMTokenCounter, *, embedder_factory: Callable[[], Any] | None = None) -> None:
        self.counter = counter
        self._embedder_factory = embedder_factory

    def unavailable_reason(self) -> str | None:
        """``None`` if the method can run here, else why not."""
        return None

    def identity(self) -> str:
        """Everything that changes the output, for cache keys."""
        return self.name

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        raise NotImplementedError

    def warm_up(self) -> None:
        """Load models and run once on a tiny input, so per-sample seconds exclude loading."""
        self.compress("Warm-up sentence one. Warm-up sentence two.", "warm up" if self.needs_question else None, 4)

    @property
    def embedder(self) -> Any:
        if self._embedder_factory is None:
            from benchmarks.embeddings import shared_embedder  # noqa: PLC0415

            self._embedder_factory = shared_embedder
        return self._embedder_factory()


class FullPrompt(Method):
    """No compression: the quality ceiling and the token count everyone else is divided into."""

    name = "full"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        return Compressed(text)


class SentenceScorer(Method):
    """Split, score each sentence, keep the best under the budget in original order."""

    def unavailable_reason(self) -> str | None:
        return _tpc_core_reason()

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


# A line that opens a passage in multi-document prompts: LongBench ("Passage 3:"), lost-in-the-middle
# ("Document [3] (Title: ...)"), and plain "Document 3".
PASSAGE_MARKER = re.compile(r"^[ \t]*(?:Passage \d+:|Document \[\d+\]|Document \d+\b)", re.MULTILINE)
_MARKER_ONLY = re.compile(r"(?:Passage \d+:|Document \[\d+\]:?|Document \d+:?)")
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")


def passage_starts(text: str) -> list[int]:
    """Character offsets where the passages of ``text`` start, ascending.

    Passages start at lines opening with ``Passage k:``, ``Document [k]`` or ``Document k``; text before the
    first such line (a template's instruction) belongs to no passage. Without any marker, the passages are
    the blank-line-separated blocks, the first starting at offset 0.
    """
    markers = [match.start() for match in PASSAGE_MARKER.finditer(text)]
    if markers:
        return markers
    return [0] + [match.end() for match in _BLANK_LINES.finditer(text) if match.end() < len(text)]


class LeadPerPassage(SentenceScorer):
    """Round-robin over the passages' leads: every passage's 1st sentence, then every 2nd, ... (Multi-News lead).

    Sentences before the first passage (the template's instruction) and sentences that are only a passage
    marker (``Passage 2:``) are never kept. Selection under the budget is the shared greedy rule, so a
    sentence that no longer fits is skipped and a later, shorter one may still be taken.
    """

    name = "lead-per-passage"

    def span_scores(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str | None,
                    sample_id: str) -> Sequence[float | None]:  # fmt: skip
        starts = passage_starts(text)
        taken_per_passage: dict[int, int] = {}
        slots: dict[int, tuple[int, int]] = {}  # sentence index -> (round, passage)
        for index, ((start, _), sentence) in enumerate(zip(spans, sentences, strict=True)):
            passage = bisect_right(starts, start) - 1
            if passage < 0 or _MARKER_ONLY.fullmatch(sentence.strip()):
                continue
            slots[index] = (taken_per_passage.get(passage, 0), passage)
            taken_per_passage[passage] = slots[index][0] + 1
        rank = {index: position for position, index in enumerate(sorted(slots, key=slots.__getitem__))}
        return [-float(rank[index]) if index in rank else None for index in range(len(spans))]


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
        return _tpc_core_reason()

    def scores(self, sentences: list[str], question: str | None, sample_id: str) -> Sequence[float]:
        from rank_bm25 import BM25Okapi  # noqa: PLC0415

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


class _BudgetSearch(Method):
    """Shared knob search: the largest k in [1, n] whose output fits; output length grows with k."""

    settings = frozenset({AWARE})
    needs_question = True

    def unavailable_reason(self) -> str | None:
        return _tpc_core_reason()

    def run_with_k(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str, k: int) -> str:
        raise NotImplementedError

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        spans, sentences = split_text(text)
        if not spans:
            return Compressed("")
        self.embedder.begin_call()
        low, high, best = 1, len(sentences), None
        while low <= high:
            middle = (low + high) // 2
            output = self.run_with_k(text, spans, sentences, question or "", middle)
            if self.counter(output) <= budget:
                best, low = (middle, output), middle + 1
            else:
                high = middle - 1
        if best is None:  # even one sentence (with its context window) is over budget: reported as overrun
            best = (1, self.run_with_k(text, spans, sentences, question or "", 1))
        return Compressed(best[1], {"k": best[0], "sentences": len(sentences)})


class LlamaIndexOptimizer(_BudgetSearch):
    """The real ``llama_index.core.postprocessor.SentenceEmbeddingOptimizer`` with the local MiniLM.

    Its budget knob is ``percentile_cutoff`` (keep ``int(n * p)`` top sentences); we pass
    ``p = (k + 0.5) / n`` for the largest k that fits. Its own defaults are kept: one sentence of context
    before and after each hit (``context_before = context_after = 1``), hits joined by spaces in similarity
    order (so windows can repeat text). Its ``tokenizer_fn`` is our shared splitter.
    """

    name = "llamaindex-seo"

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("llama_index") is None or importlib.util.find_spec("llama_index.core") is None:
            return "llama-index-core not installed (pip install llama-index-core)"
        return _tpc_core_reason()

    def identity(self) -> str:
        import llama_index.core  # noqa: PLC0415

        return f"{self.name}:llama-index-core={llama_index.core.__version__}:ctx=1/1"

    def run_with_k(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str, k: int) -> str:
        from llama_index.core.postprocessor import SentenceEmbeddingOptimizer  # noqa: PLC0415
        from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: PLC0415

        from benchmarks.embeddings import llama_index_embedding  # noqa: PLC0415

        optimizer = SentenceEmbeddingOptimizer(
            embed_model=llama_index_embedding(self.embedder),
            percentile_cutoff=(k + 0.5) / len(sentences),
            tokenizer_fn=lambda value: [value[start:end] for start, end in split_spans(value)],
        )
        nodes = [NodeWithScore(node=TextNode(text=text), score=1.0)]
        # The optimizer rewrites node text in place: hand it copies, never our input.
        result = optimizer.postprocess_nodes(copy.deepcopy(nodes), query_bundle=QueryBundle(query_str=question))
        return result[0].node.get_content()


class LangChainFilter(_BudgetSearch):
    """The real LangChain ``EmbeddingsFilter`` (langchain-classic) over one Document per sentence.

    Its knobs are ``k`` (top-k by similarity) and ``similarity_threshold``; we set ``threshold=None`` and the
    largest ``k`` that fits, then restore document order (it returns similarity order).
    """

    name = "langchain-filter"

    def unavailable_reason(self) -> str | None:
        for module, package in (
            ("langchain_classic", "langchain-classic"),
            ("langchain_community", "langchain-community"),
        ):
            if importlib.util.find_spec(module) is None:
                return f"{package} not installed (EmbeddingsFilter needs it: pip install {package})"
        return _tpc_core_reason()

    def identity(self) -> str:
        import langchain_classic  # noqa: PLC0415

        return f"{self.name}:langchain-classic={getattr(langchain_classic, '__version__', '?')}"

    def run_with_k(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str, k: int) -> str:
        from langchain_classic.retrievers.document_compressors import EmbeddingsFilter  # noqa: PLC0415
        from langchain_core.documents import Document  # noqa: PLC0415

        from benchmarks.embeddings import langchain_embeddings  # noqa: PLC0415

        documents = [Document(page_content=sentence, metadata={"index": i}) for i, sentence in enumerate(sentences)]
        kept = EmbeddingsFilter(embeddings=langchain_embeddings(self.embedder), k=k).compress_documents(
            documents, question
        )
        order = sorted(document.metadata["index"] for document in kept)
        return join_spans(text, spans, order)


@lru_cache(maxsize=1)
def _package_fingerprint() -> str:
    """SHA-256 (16 hex) over the tpc_core package files: sources and shipped checkpoints."""
    import tpc_core  # noqa: PLC0415

    digest = hashlib.sha256()
    root = Path(tpc_core.__file__).parent
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _checkpoint_fingerprint(model: str) -> str:
    """``":ckpt=<16 hex>"`` over (file, size, mtime) of a local checkpoint directory; ``""`` for a name.

    A checkpoint retrained in place keeps its path: this keeps cached results of the old weights apart.
    """
    root = Path(model).expanduser()
    if not root.is_dir():
        return ""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return f":ckpt={digest.hexdigest()[:16]}"


def split_model_spec(spec: str) -> tuple[str, str | None]:
    """``"tpc-mini@pooled_cosine"`` -> ``("tpc-mini", "pooled_cosine")``: a TPC model with its scorer overridden.

    The suffix must name a scorer of ``tpc_core.config.SCORERS``; anything else is part of the model's name.

    >>> split_model_spec("tpc-mini@cosine_bm25"), split_model_spec("runs/a@b")
    (('tpc-mini', 'cosine_bm25'), ('runs/a@b', None))
    """
    from tpc_core.config import SCORERS  # noqa: PLC0415

    model, _, scorer = spec.rpartition("@")
    return (model, scorer) if model and scorer in SCORERS else (spec, None)


@lru_cache(maxsize=2)
def _tpc_compressor(model: str, device: str | None) -> Any:
    from tpc_core import TPCCompressor  # noqa: PLC0415

    name, scorer = split_model_spec(model)
    return TPCCompressor.from_pretrained(name, device=device, scorer=scorer)


class TPCMethod(Method):
    """TPC through its public API. ``tpc-aware`` gets the question; ``tpc-agnostic`` gets ``None`` (CTD).

    ``label`` names the row (default: ``tpc-aware`` / ``tpc-agnostic``); it does not enter the cache identity,
    so the same model's results are shared between labels.
    """

    def __init__(self, counter: MiniLMTokenCounter, *, aware: bool, model: str = DEFAULT_TPC_MODEL,
                 device: str | None = None, label: str | None = None, describe_bare: bool = True,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(counter, **kwargs)
        self.aware, self.model, self.device = aware, model, device
        # False: a prompt with no written request takes the fallback task without a CTD generation, as the
        # index-time adapters and ``tpc compress-corpus`` do (the index suite sets it).
        self.describe_bare = describe_bare
        self.kind = "tpc-aware" if aware else "tpc-agnostic"
        self.name = label or self.kind
        self.settings = frozenset({AWARE if aware else AGNOSTIC})
        self.needs_question = aware

    def unavailable_reason(self) -> str | None:
        try:
            from tpc_core import TPCCompressor  # noqa: F401, PLC0415
            from tpc_core.loading.hub_cse import cached_unavailable_reason  # noqa: PLC0415
        except Exception as error:  # noqa: BLE001
            return f"tpc_core not importable ({type(error).__name__}: {error})"
        # Encoders assembled from Hub parts (cpc-*) run only where their weights are cached, like LLMLingua.
        return cached_unavailable_reason(split_model_spec(self.model)[0])

    def identity(self) -> str:
        # The version string does not change while the engine or its shipped checkpoint is being worked on:
        # fingerprint the package files too, so cached results never mix engine states.
        import tpc_core  # noqa: PLC0415

        from tpc_core.loading.hub_cse import cached_commits  # noqa: PLC0415

        version, checkpoint = getattr(tpc_core, "__version__", "?"), _checkpoint_fingerprint(split_model_spec(self.model)[0])
        hub = cached_commits(split_model_spec(self.model)[0])  # cpc-*: the commits of the cached Hub parts
        bare = "" if self.describe_bare else ":no-ctd-on-bare"
        return f"{self.kind}:{self.model}{bare}:tpc_core={version}:{_package_fingerprint()}{checkpoint}{hub}"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        compressor = _tpc_compressor(self.model, self.device)
        result = compressor.compress(
            text, question=question if self.aware else None, target_tokens=budget, token_counter=self.counter,
            describe_bare=self.describe_bare,
        )
        info = {"engine_compressed_tokens": result.compressed_tokens, "engine_origin_tokens": result.origin_tokens}
        if result.task_description:
            info["task_description"] = result.task_description
        return Compressed(result.compressed_prompt, info)


_LLMLINGUA_MODELS = {
    "llmlingua": ("TPC_LLMLINGUA_MODEL", "NousResearch/Llama-2-7b-hf"),
    "llmlingua-2": ("TPC_LLMLINGUA2_MODEL", "microsoft/llmlingua-2-xlm-roberta-large-meetingbank"),
}


def _local_weights(env: str, repo_id: str) -> str | None:
    """A local directory for the model: ``$env`` or the Hugging Face cache; ``None`` when absent."""
    if os.environ.get(env) and os.path.isdir(os.environ[env]):
        return os.environ[env]
    try:
        from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, "config.json")
    return os.path.dirname(found) if isinstance(found, str) else None


class LLMLinguaMethod(Method):
    """LLMLingua (LongLLMLingua ranking when a question is given) or LLMLingua-2, via ``llmlingua``.

    ``target_token`` is the budget; LLMLingua counts with its own tokenizer, so achieved MiniLM tokens may
    differ and are reported as measured.
    """

    def __init__(self, counter: MiniLMTokenCounter, *, variant: str, device: str | None = None, **kwargs: Any):
        super().__init__(counter, **kwargs)
        self.name, self.device = variant, device
        self._compressor: Any = None

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("llmlingua") is None:
            return "llmlingua not installed"
        env, repo_id = _LLMLINGUA_MODELS[self.name]
        if _local_weights(env, repo_id) is None:
            return f"no local weights for {repo_id} (set {env}=DIR; the Hub is unreachable here)"
        return None

    def identity(self) -> str:
        return f"{self.name}:{_LLMLINGUA_MODELS[self.name][1]}"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        if self._compressor is None:
            from llmlingua import PromptCompressor  # noqa: PLC0415

            env, repo_id = _LLMLINGUA_MODELS[self.name]
            self._compressor = PromptCompressor(
                model_name=_local_weights(env, repo_id) or repo_id,
                device_map=self.device or "cpu",
                use_llmlingua2=self.name == "llmlingua-2",
            )
        if self.name == "llmlingua-2":
            output = self._compressor.compress_prompt([text], target_token=budget, force_tokens=["\n", "?"])
        elif question:
            output = self._compressor.compress_prompt(
                [text], question=question, target_token=budget, rank_method="longllmlingua",
                condition_in_question="after_condition", reorder_context="sort", dynamic_context_compression_ratio=0.3,
            )  # fmt: skip
        else:
            output = self._compressor.compress_prompt([text], target_token=budget)
        return Compressed(output["compressed_prompt"])


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
        import tiktoken  # noqa: PLC0415

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
    by :func:`~benchmarks.budget.join_spans`. A sentence trimwise cut is dropped, never truncated. Should the
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
            from trimwise import TrimConfig  # noqa: PLC0415

            reason = _tiktoken_reason(TrimConfig().token_encoding)
            if reason is not None:
                return f"{reason}; trimwise's {self.strategy} ranking needs it even when given a token counter"
        return _tpc_core_reason()

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
        from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: PLC0415
        from llama_index.postprocessor.trimwise import TrimwiseNodePostprocessor  # noqa: PLC0415
        from trimwise import Trimmer  # noqa: PLC0415

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
        return ranker(self.counter, embedder_factory=self._embedder_factory).scores(sentences, question, "")


class TrimwiseSemantic(TrimwiseMethod):
    """trimwise ``semantic``: MiniLM cosine of each block (with its neighbours) to the question, MMR."""

    name = "trimwise-semantic"
    strategy = "semantic"
    embeds, uses_tiktoken = True, False


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


METHOD_NAMES: tuple[str, ...] = (
    "tpc-aware", "tpc-agnostic", "random", "lead", "lead-per-passage", "bm25", "minilm-cosine", "minilm-centroid",
    "llamaindex-seo", "langchain-filter", "trimwise-semantic", "full", "llmlingua", "llmlingua-2",
)  # fmt: skip
# Known, but run only when named with --methods: trimwise fetches their tiktoken encoding at run time.
OPT_IN_METHOD_NAMES: tuple[str, ...] = ("trimwise-lexical", "trimwise-hybrid", "trimwise-structural")
ALL_METHOD_NAMES: tuple[str, ...] = METHOD_NAMES + OPT_IN_METHOD_NAMES
TPC_METHOD_NAMES: tuple[str, ...] = ("tpc-aware", "tpc-agnostic")

_SIMPLE_METHODS: dict[str, type[Method]] = {
    "random": RandomSentences, "lead": LeadSentences, "lead-per-passage": LeadPerPassage, "bm25": BM25Sentences,
    "minilm-cosine": MiniLMCosine, "minilm-centroid": MiniLMCentroid, "llamaindex-seo": LlamaIndexOptimizer,
    "langchain-filter": LangChainFilter, "full": FullPrompt, "trimwise-semantic": TrimwiseSemantic,
    "trimwise-lexical": TrimwiseLexical, "trimwise-hybrid": TrimwiseHybrid, "trimwise-structural": TrimwiseStructural,
}  # fmt: skip


def method_settings(name: str) -> frozenset[str]:
    """The settings (``aware`` / ``agnostic``) method ``name`` runs in, without building it."""
    if name in TPC_METHOD_NAMES:
        return frozenset({AWARE if name == "tpc-aware" else AGNOSTIC})
    if name in ("llmlingua", "llmlingua-2"):
        return LLMLinguaMethod.settings
    if name not in _SIMPLE_METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(ALL_METHOD_NAMES)}")
    return _SIMPLE_METHODS[name].settings


def build_method(name: str, counter: MiniLMTokenCounter, *, seed: int = 0, tpc_model: str = DEFAULT_TPC_MODEL,
                 device: str | None = None, embedder_factory: Callable[[], Any] | None = None,
                 label: str | None = None) -> Method:  # fmt: skip
    """Instantiate a method by name (see :data:`ALL_METHOD_NAMES`); ``label`` renames a TPC row."""
    common: dict[str, Any] = {"embedder_factory": embedder_factory}
    if name in TPC_METHOD_NAMES:
        return TPCMethod(counter, aware=name == "tpc-aware", model=tpc_model, device=device, label=label, **common)
    if name in ("llmlingua", "llmlingua-2"):
        return LLMLinguaMethod(counter, variant=name, device=device, **common)
    if name == "random":
        return RandomSentences(counter, seed=seed, **common)
    if name not in _SIMPLE_METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(ALL_METHOD_NAMES)}")
    return _SIMPLE_METHODS[name](counter, **common)


@dataclass(frozen=True)
class MethodSpec:
    """One row to run: its label, the method name it builds, and (TPC rows) the checkpoint."""

    label: str
    name: str
    tpc_model: str = DEFAULT_TPC_MODEL


def _path_tail(components: Sequence[str], depth: int) -> str:
    return "/".join(components[-depth:]).lstrip("/")


def tpc_model_labels(models: Sequence[str]) -> dict[str, str]:
    """A short, unique row label per TPC model.

    A name without a path separator that starts with ``tpc`` stays as is (``tpc-mini``); anything else (a
    checkpoint directory, a Hub id) becomes ``tpc:`` + its last path component, or as many trailing
    components as it takes to tell the given models apart (``tpc:/runs/a/ckpt`` -> ``tpc:ckpt``).
    """
    labels: dict[str, str] = {}
    paths: dict[str, tuple[str, ...]] = {}
    for model in models:
        if model.startswith("tpc") and "/" not in model and os.sep not in model:
            labels[model] = model
        else:
            paths[model] = Path(model).parts or (model,)
    for model, components in paths.items():
        depth = 1
        others = [theirs for other, theirs in paths.items() if other != model]
        while depth < len(components) and any(_path_tail(o, depth) == _path_tail(components, depth) for o in others):
            depth += 1
        labels[model] = f"tpc:{_path_tail(components, depth) or model}"
    return {model: labels[model] for model in models}


def method_specs(names: Sequence[str], tpc_models: Sequence[str] = (DEFAULT_TPC_MODEL,), *,
                 label_tpc_by_model: bool = False) -> list[MethodSpec]:  # fmt: skip
    """Rows for ``names``: one per method, and one per TPC model for ``tpc-aware`` / ``tpc-agnostic``.

    TPC rows keep the method name when one model is given (``tpc-aware``) and become ``tpc-aware[tpc-mini]``,
    ``tpc-aware[tpc:ckpt]`` with several. ``label_tpc_by_model`` (one-setting suites) labels them by the
    model alone (``tpc-mini``).

    Raises:
        ValueError: no TPC model given, or two rows would share a label.
    """
    models = list(dict.fromkeys(tpc_models))
    if not models:
        raise ValueError("at least one TPC model is needed")
    labels = tpc_model_labels(models)
    specs: list[MethodSpec] = []
    for name in names:
        if name not in TPC_METHOD_NAMES:
            specs.append(MethodSpec(name, name))
            continue
        for model in models:
            if label_tpc_by_model:
                label = labels[model]
            else:
                label = name if len(models) == 1 else f"{name}[{labels[model]}]"
            specs.append(MethodSpec(label, name, model))
    seen = [spec.label for spec in specs]
    duplicates = sorted({label for label in seen if seen.count(label) > 1})
    if duplicates:
        raise ValueError(f"several rows would be labelled {', '.join(duplicates)}")
    return specs
