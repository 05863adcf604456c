"""Other compressors, each run through its own code: LlamaIndex's ``SentenceEmbeddingOptimizer``, LangChain's
``EmbeddingsFilter`` and LLMLingua / LLMLingua-2.

The framework filters' knobs (percentile, top-k) are set to the largest value whose output fits the budget
(:class:`_BudgetSearch`); LLMLingua is given the budget as its target and its achieved size is measured.
"""

from __future__ import annotations

import copy
import importlib.util
import os
from typing import Any

from evaluation.budget import MiniLMTokenCounter, join_spans
from evaluation.methods.base import (
    AWARE,
    Compressed,
    Method,
    split_spans,
    split_text,
    tpc_core_unavailable_reason,
)

__all__ = ["LLMLinguaMethod", "LangChainFilter", "LlamaIndexOptimizer"]


class _BudgetSearch(Method):
    """Shared knob search: the largest k in [1, n] whose output fits; output length grows with k."""

    settings = frozenset({AWARE})
    needs_question = True

    def unavailable_reason(self) -> str | None:
        return tpc_core_unavailable_reason()

    def run_with_k(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str, k: int) -> str:
        raise NotImplementedError

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        spans, sentences = split_text(text)
        if not spans:
            return Compressed("")
        self.embedder.begin_call()
        low = 1
        high = len(sentences)
        best = None
        while low <= high:
            middle = (low + high) // 2
            output = self.run_with_k(text, spans, sentences, question or "", middle)
            if self.counter(output) <= budget:
                best = (middle, output)
                low = middle + 1
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
        return tpc_core_unavailable_reason()

    def identity(self) -> str:
        import llama_index.core  # lazy: optional extra (llamaindex)

        return f"{self.name}:llama-index-core={llama_index.core.__version__}:ctx=1/1"

    def run_with_k(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str, k: int) -> str:
        from llama_index.core.postprocessor import SentenceEmbeddingOptimizer  # lazy: optional extra (llamaindex)
        from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # lazy: optional extra (llamaindex)

        from evaluation.methods.embedder import llama_index_embedding  # lazy: loads torch

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
        return tpc_core_unavailable_reason()

    def identity(self) -> str:
        import langchain_classic  # lazy: optional extra (langchain)

        return f"{self.name}:langchain-classic={getattr(langchain_classic, '__version__', '?')}"

    def run_with_k(self, text: str, spans: list[tuple[int, int]], sentences: list[str], question: str, k: int) -> str:
        from langchain_classic.retrievers.document_compressors import (
            EmbeddingsFilter,  # lazy: optional extra (langchain)
        )
        from langchain_core.documents import Document  # lazy: optional extra (langchain)

        from evaluation.methods.embedder import langchain_embeddings  # lazy: loads torch

        documents = [Document(page_content=sentence, metadata={"index": i}) for i, sentence in enumerate(sentences)]
        kept = EmbeddingsFilter(embeddings=langchain_embeddings(self.embedder), k=k).compress_documents(
            documents, question
        )
        order = sorted(document.metadata["index"] for document in kept)
        return join_spans(text, spans, order)


_LLMLINGUA_MODELS = {
    "llmlingua": ("TPC_LLMLINGUA_MODEL", "NousResearch/Llama-2-7b-hf"),
    "llmlingua-2": ("TPC_LLMLINGUA2_MODEL", "microsoft/llmlingua-2-xlm-roberta-large-meetingbank"),
}


def _local_weights(env: str, repo_id: str) -> str | None:
    """A local directory for the model: ``$env`` or the Hugging Face cache; ``None`` when absent."""
    if os.environ.get(env) and os.path.isdir(os.environ[env]):
        return os.environ[env]
    try:
        from huggingface_hub import try_to_load_from_cache
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
        self.name = variant
        self.device = device
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
            from llmlingua import PromptCompressor  # lazy: optional peer

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
