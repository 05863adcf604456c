"""LlamaIndex adapter: :class:`TPCNodePostprocessor`, a ``BaseNodePostprocessor`` backed by TPC.

Add it to an existing query engine in one line::

    from tpc_integrations.llama_index import TPCNodePostprocessor

    query_engine = index.as_query_engine(node_postprocessors=[TPCNodePostprocessor(target_tokens=300)])

At ingestion, :class:`TPCTransform` compresses each node once, after the node parser and before the embedding::

    IngestionPipeline(transformations=[SentenceSplitter(), TPCTransform(rate=0.5), embed_model]).run(documents=docs)

A chat engine's or agent's history, compressed for the latest question (:mod:`tpc_integrations.llama_index_memory`)::

    chat_engine = index.as_chat_engine(memory=TPCChatMemory(target_tokens=3000))

Needs ``pip install tpc-langchain[llamaindex]``.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

try:
    import llama_index.core.instrumentation as instrument
    from llama_index.core.callbacks import CBEventType, EventPayload
    from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import (
        BaseNode,
        ImageNode,
        MetadataMode,
        Node,
        NodeWithScore,
        QueryBundle,
        TextNode,
        TransformComponent,
    )
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("TPCNodePostprocessor needs llama-index-core: pip install 'tpc-langchain[llamaindex]'") from error

from pydantic import ConfigDict

from tpc_core.diagnostics import register_library_path
from tpc_integrations._common import TPCSettings, compress_call, copy_metadata, ensure_text, ensure_type, fresh_metadata
from tpc_integrations._failsafe import guarded
from tpc_integrations._ingest import IngestOutcome, TPCIngestSettings, compress_each
from tpc_integrations.llama_index_memory import TPCChatMemory, TPCEvent

__all__ = ["TPCChatMemory", "TPCEvent", "TPCNodePostprocessor", "TPCTransform"]

dispatcher = instrument.get_dispatcher(__name__)

# LlamaIndex calls our methods through its span wrapper, and the postprocessor through the base class's public
# postprocess_nodes: warnings from tpc_core skip those frames too, so they name the line that called the adapter.
register_library_path(inspect.getfile(type(dispatcher)))
register_library_path(inspect.getfile(BaseNodePostprocessor))
# A chat engine calls the memory, an ingestion pipeline the transform, from anywhere inside llama_index.core: the
# whole package is library code for our warnings (a warning in a chat names the user's chat() line).
register_library_path(Path(inspect.getfile(BaseNodePostprocessor)).parents[1])


class TPCNodePostprocessor(TPCSettings, BaseNodePostprocessor):
    """Keeps, across the retrieved nodes, the sentences most relevant to the query (or, without a query, to
    the task TPC's task descriptor reads from the nodes themselves).

    Behaviour:
        * Returns new ``NodeWithScore`` objects in input order, each holding a copy of its node: same
          ``node_id``, relationships and metadata (deep-copied), compressed text (original sentences,
          verbatim, in order; read with ``MetadataMode.NONE`` so metadata is never compressed into the text)
          and ``score`` = the node's TPC relevance. The ``tpc_*`` metadata keys (score, origin/compressed
          tokens, kept sentences, task description) and the rerankers' ``relevance_score`` are added and
          excluded from the LLM and embedding views, so they never reach the prompt. The inputs are never
          modified.
        * A text node that keeps no sentence (the budget went to better ones, ``min_score`` removed them, or
          its text is empty) is dropped.
        * Nodes that carry media (``ImageNode``, a ``Node`` with an image/audio/video resource) or are of
          another kind pass through unchanged, keep their score and use none of the budget: TPC compresses text
          (``top_n`` counts text nodes only).
        * An item that is not a ``NodeWithScore`` (a plain string) raises ``TypeError`` naming it; metadata
          values that cannot be deep-copied (a lock, a client) are shared by reference.
        * ``target_tokens`` / ``rate`` is a real budget over all text nodes of the call; a budget that covers
          everything returns the text unchanged and keeps the retrieval score (``tpc_relevance_score`` None).
        * After the budget, and only removing: ``min_score``, ``top_n`` and ``sort_by_score`` (nodes by score,
          best first, instead of input order).
        * ``query_bundle=None`` (or a blank query) uses ``task_description`` when set; otherwise it switches to
          prompt-agnostic mode: TPC reads the task from the nodes (slower; logged once at INFO).
        * Emits ``ReRankStartEvent`` / ``ReRankEndEvent`` instrumentation events inside the postprocessor's
          span, and a ``RERANKING`` callback event, like LlamaIndex's own rerankers. The end event's ``tags`` hold
          the call's figures, the same as LangChain's ``tpc_compression`` event: token counts, budget, task, mode,
          and whether the sentence cache served the call (``from_cache``, ``cache_hits``, ``cache_misses``).
        * ``cache`` (e.g. ``"memory"``, a directory, a ``SimpleKVStore``) keeps what TPC reads of each node before
          the query, so a node retrieved again is not read by the model again: identical results at a small
          fraction of the cost. Warm it at ingestion with ``TPCTransform(mode="warm", cache=...)``.
        * Settings are checked at construction (device, model, splitter, peer field names such as
          ``instruction_str`` or ``target_token``); ``load_on_init=True`` also loads the model there.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @classmethod
    def class_name(cls) -> str:
        return "TPCNodePostprocessor"

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: Optional[QueryBundle] = None) -> list[NodeWithScore]:
        nodes = list(nodes)
        if not nodes:
            return []
        outcome, fallback, _ = guarded(self, type(self).__name__,
                                       lambda progress: self._compress_nodes(nodes, query_bundle), len(nodes))
        if fallback is None:
            assert outcome is not None  # guarded returns the work's value whenever there is no fallback
            results, tags = outcome
        else:  # the input, unchanged
            results = [_unchanged(item) for item in nodes]
            tags = {**fallback.event_data(), "documents_out": len(nodes), "mode": "fallback"}
        dispatcher.event(ReRankEndEvent(nodes=[r for r in results if isinstance(r, NodeWithScore)], tags=tags))
        return results

    def _compress_nodes(self, nodes: list[NodeWithScore], query_bundle: Optional[QueryBundle]
                        ) -> tuple[list[NodeWithScore], dict[str, Any]]:
        for position, item in enumerate(nodes):
            ensure_type(item, NodeWithScore, f"Node {position}",
                        "llama_index NodeWithScore; wrap text as NodeWithScore(node=TextNode(text=text))")
        query = query_bundle.query_str if query_bundle is not None else None
        dispatcher.event(ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=self.top_n or len(nodes),
                                          model_name=self.model_name_or_path))
        texts = _texts([item.node for item in nodes])
        with self.callback_manager.event(
            CBEventType.RERANKING,
            payload={EventPayload.NODES: nodes, EventPayload.MODEL_NAME: self.model_name_or_path,
                     EventPayload.QUERY_STR: query, EventPayload.TOP_K: self.top_n or len(nodes)},
        ) as event:
            call = compress_call(self, list(texts.values()), query)
            outcomes = dict(zip(texts, call.documents))
            results = []
            for position, item in enumerate(nodes):
                outcome = outcomes.get(position)
                if outcome is None:  # media or unknown node kind: untouched
                    results.append(NodeWithScore(node=_copy_node(item.node), score=item.score))
                elif outcome.kept:
                    score = outcome.score if outcome.score is not None else item.score
                    results.append(NodeWithScore(node=_copy_node(item.node, outcome.text, outcome.metadata()),
                                                 score=score))
            if self.sort_by_score:  # stable: ties and unscored nodes keep their input order
                results.sort(key=lambda item: -item.score if item.score is not None else float("inf"))
            event.on_end(payload={EventPayload.NODES: results})
        return results, call.event_data()

    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: Optional[QueryBundle] = None) -> list[NodeWithScore]:
        # A worker thread keeps the event loop free; the engine is thread-safe (see TPCCompressor).
        return await asyncio.to_thread(self._postprocess_nodes, nodes, query_bundle)


class TPCTransform(TPCIngestSettings, TransformComponent):
    """Index-time compression as a LlamaIndex ``TransformComponent``: put it in an ``IngestionPipeline`` after
    the node parser and before the embedding model, and every node is stored (and embedded) compressed.

    Behaviour:
        * Each text node is compressed on its own: ``rate`` keeps that fraction of its tokens (default 0.2),
          ``target_tokens`` caps it; sentences are scored against ``task_description`` when set, otherwise
          against the task TPC reads from the node itself (prompt-agnostic: slower).
        * Returns one new node per input, in order: same ``node_id``, relationships (SOURCE, PREVIOUS, NEXT...)
          and metadata (deep-copied), the compressed text (read with ``MetadataMode.NONE``; original sentences,
          verbatim, in order), and ``tpc_origin_tokens``, ``tpc_compressed_tokens``, ``tpc_task_description``,
          ``tpc_task_source``, ``tpc_compression`` in the metadata, excluded from the LLM and embedding views. A
          compressed node's stale ``embedding`` is cleared so the pipeline's embedding step recomputes it.
        * Media nodes pass through unchanged; a node none of whose sentences fits its budget is kept whole
          (``tpc_compression="kept_whole"``, logged): ingestion never loses text silently.
        * ``mode="warm"`` with ``cache=`` cuts nothing: every node keeps its whole text and embedding
          (``tpc_compression="cached"``) and its sentence-cache entry is stored, so a ``TPCNodePostprocessor`` with
          the same ``cache`` compresses it per query, prompt-aware, at almost no cost.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @classmethod
    def class_name(cls) -> str:
        return "TPCTransform"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[BaseNode]:
        """Compress each text node for indexing (``kwargs``, e.g. ``show_progress``, are the pipeline's)."""
        nodes = list(nodes)
        positions: list[int] = []

        def work(progress: Any) -> list[IngestOutcome]:
            texts = _texts(nodes)
            positions.extend(texts)
            return compress_each(self, list(texts.values()), progress)

        done, fallback, progress = guarded(self, type(self).__name__, work, len(nodes))
        if fallback is not None:
            dispatcher.event(TPCEvent(name="tpc_ingestion", data=fallback.event_data()))
            done = list(progress.done) if fallback.reason == "deadline" else []
            if not done:
                return [_unchanged(node) for node in nodes]
        assert done is not None  # guarded returns the work's value whenever there is no fallback
        outcomes = dict(zip(positions, done))
        results: list[BaseNode] = []
        for position, node in enumerate(nodes):
            outcome = outcomes.get(position)
            if outcome is None:  # media, or past the deadline: untouched
                results.append(_copy_node(node))
            else:
                copied = _copy_node(node, outcome.text, outcome.metadata())
                if outcome.changed:
                    copied.embedding = None  # computed for the old text
                results.append(copied)
        return results

    async def acall(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[BaseNode]:
        """:meth:`__call__` in a worker thread, so the event loop keeps running."""
        return await asyncio.to_thread(self.__call__, nodes, **kwargs)


def _unchanged(item: Any) -> Any:
    """A fallback's output: a copy of the input node (or ``NodeWithScore``), the input itself where it cannot be
    copied."""
    try:
        if isinstance(item, NodeWithScore):
            return NodeWithScore(node=_copy_node(item.node), score=item.score)
        return _copy_node(item)
    except Exception:  # noqa: BLE001 - an unreadable node comes back as it was given
        return item


def _texts(nodes: list[BaseNode]) -> dict[int, str]:
    """The text of each text node by its position (media and unknown kinds are left out), read without metadata;
    a TypeError naming the node whose content is not a str."""
    return {position: ensure_text(node.get_content(metadata_mode=MetadataMode.NONE),
                                  f"Node {position} (node_id={node.node_id!r})")
            for position, node in enumerate(nodes) if _is_text(node)}


def _is_text(node: BaseNode) -> bool:
    if isinstance(node, ImageNode):
        return False
    if isinstance(node, TextNode):
        return True
    if isinstance(node, Node):
        return node.image_resource is None and node.audio_resource is None and node.video_resource is None
    return False


def _copy_node(node: BaseNode, text: str | None = None, tpc_metadata: dict[str, Any] | None = None) -> BaseNode:
    """A copy sharing nothing mutable with ``node``; with ``text``, that text and the ``tpc_*`` metadata."""
    # A shallow model_copy keeps the class and every field (IndexNode.obj may be an engine: never deep-copied);
    # the mutable containers are copied explicitly.
    update: dict[str, Any] = {
        "metadata": fresh_metadata(node.metadata, tpc_metadata) if tpc_metadata else copy_metadata(node.metadata),
        "relationships": copy.deepcopy(node.relationships),
        "excluded_llm_metadata_keys": _excluding(node.excluded_llm_metadata_keys, tpc_metadata),
        "excluded_embed_metadata_keys": _excluding(node.excluded_embed_metadata_keys, tpc_metadata),
        "embedding": list(node.embedding) if node.embedding is not None else None,
    }
    if isinstance(node, Node):
        for resource in ("text_resource", "image_resource", "audio_resource", "video_resource"):
            value = getattr(node, resource)
            update[resource] = value.model_copy(deep=True) if value is not None else None
    copied = node.model_copy(update=update)
    if text is not None:
        copied.set_content(text)
    return copied


def _excluding(keys: list[str], tpc_metadata: dict[str, Any] | None) -> list[str]:
    """``keys`` plus the keys TPC adds, so its bookkeeping never reaches the LLM or the embedding."""
    return [*keys, *(key for key in tpc_metadata if key not in keys)] if tpc_metadata else list(keys)
