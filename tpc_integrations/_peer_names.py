"""Field names of the compressors and rerankers users migrate from, and what each means here.

Each field has one spelling. A peer's spelling is refused when the adapter is built, with a message that names our
field: where it means the same, with the value to pass (``target_token=300``: pass ``target_tokens=300``); where it
means something else, with how it differs. Any other unknown name gets a "did you mean" from our own field names.
The migration table of the docs is this module's content (:data:`PEER_ALIASES`, :data:`PEER_HINTS`).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tpc_core.options import CompressOptions

__all__ = ["PEER_ALIASES", "PEER_HINTS", "PeerAlias", "refuse_peer_names"]

LLMLINGUA = "LLMLingua (LangChain LLMLinguaCompressor, LlamaIndex LongLLMLinguaPostprocessor)"
OPTIMIZER = "LlamaIndex SentenceEmbeddingOptimizer"
FILTER = "LangChain EmbeddingsFilter"
RERANKERS = "rerankers (Cohere, SentenceTransformerRerank, Flashrank, CrossEncoderReranker, ...)"


def _target_token(value: Any) -> Any:
    # LLMLingua's target_token=-1 means "no token target, use the rate".
    return None if value is None or (isinstance(value, int) and not isinstance(value, bool) and value == -1) else value


def _model(value: Any) -> Any:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise ValueError(f"model= takes a TPC checkpoint name or path (e.g. 'tpc-mini'), got {type(value).__name__}: "
                     "pass a ready tpc_core.TPCCompressor as compressor= instead.")


_DEVICE_MAP_STRATEGIES = {"balanced", "balanced_low_0", "sequential"}


def _device_map(value: Any) -> Any:
    if value is None or value == "auto":
        return None  # best available device, which is what "auto" means for one model
    if isinstance(value, str) and value not in _DEVICE_MAP_STRATEGIES:
        return value
    raise ValueError(f"device_map={value!r}: TPC places its (small) models on one device and does not shard them. "
                     "Pass device='cuda', 'cuda:1', 'cpu', 'mps' or None (best available).")


@dataclass(frozen=True)
class PeerAlias:
    """A peer's field name that means what one of ours means.

    Attributes:
        name: The peer's field name.
        ours: Our field.
        source: Where users know it from.
        note: How the value carries over, for the migration table.
        convert: The peer's value as ours (raises, saying what to pass, on a value with no equivalent).
    """

    name: str
    ours: str
    source: str
    note: str
    convert: Callable[[Any], Any] = lambda value: value


PEER_ALIASES: dict[str, PeerAlias] = {alias.name: alias for alias in (
    PeerAlias("target_token", "target_tokens", LLMLINGUA, "same meaning; -1 (LLMLingua's 'unset') means None",
              _target_token),
    PeerAlias("model_name", "model_name_or_path", LLMLINGUA, "must name a TPC checkpoint, e.g. 'tpc-mini'"),
    PeerAlias("model", "model_name_or_path", RERANKERS, "a checkpoint name or path (a ready engine: compressor=)",
              _model),
    PeerAlias("device_map", "device", LLMLINGUA, "a device string; 'auto' means best available; sharding "
              "strategies ('balanced', a dict) are refused", _device_map),
    PeerAlias("k", "top_n", FILTER, "documents kept; document order unless sort_by_score=True (EmbeddingsFilter "
              "returns them by similarity)"),
    PeerAlias("token_limit", "target_tokens", "LlamaIndex ChatMemoryBuffer", "the budget of the conversation returned"),
)}

# Peer names that mean something else here: (where from, our closest field or None, how they differ).
PEER_HINTS: dict[str, tuple[str, str | None, str]] = {
    "percentile_cutoff": (OPTIMIZER, "rate", "percentile_cutoff keeps a fraction of each node's sentences; rate "
                          "keeps a fraction of tokens under one budget (budget_scope='per_document' shares it by node "
                          "size)"),
    "threshold_cutoff": (OPTIMIZER, "min_score", "both are similarity floors, but TPC's scores come from its own "
                         "sentence encoder, so a threshold tuned for another embedding does not carry over"),
    "similarity_threshold": (FILTER, "min_score", "both are similarity floors, but TPC scores sentences with its own "
                             "encoder: re-tune the value (the tpc_relevance_score metadata shows typical scores)"),
    "similarity_cutoff": ("LlamaIndex SimilarityPostprocessor", "min_score", "TPC's floor applies to its own sentence "
                          "scores, not to the retrieval score"),
    "score_threshold": ("Flashrank", "min_score", "TPC's floor applies to its sentence scores, a different scale"),
    "instruction_str": ("LlamaIndex LongLLMLinguaPostprocessor", "task_description", "LLMLingua prepends the "
                        "instruction to the prompt verbatim; TPC never adds text. task_description tells TPC what the "
                        "documents are for when there is no query"),
    "instruction": ("LLMLingua / LangChain LLMLinguaCompressor", "task_description", "LLMLingua's instruction is a "
                    "prefix kept verbatim in the prompt; TPC never adds text. task_description tells TPC what the "
                    "documents are for when there is no query (CTDConfig.instruction is the task descriptor's own "
                    "prompt, set in the checkpoint)"),
    "question": ("LLMLingua compress_prompt", "task_description", "the question is the query of each call "
                 "(compress_documents(docs, query) / QueryBundle); task_description is a fixed one for calls without"),
    "reorder_context": (LLMLINGUA, "sort_by_score", "sort_by_score=True orders documents by relevance "
                        "(reorder_context='sort'); the default keeps document order"),
    "force_tokens": ("LLMLingua-2", "force_keep_patterns", "TPC keeps whole sentences: force_keep_patterns takes "
                     "regexes of sentences to keep first"),
    "force_context_ids": (LLMLINGUA, "force_keep_patterns", "TPC keeps whole sentences matching these regexes first"),
    "tokenizer_fn": (OPTIMIZER, "splitter", "splitter is a name ('nupunkt', 'regex', 'line', 'nltk') or an object "
                     "with spans(text) returning (start, end) offsets"),
    "model_configuration": (LLMLINGUA, "model_kwargs", "model_kwargs takes TPCCompressor.from_pretrained options "
                            "(token, cache_dir, local_files_only, trust_remote_code)"),
    "model_config": (LLMLINGUA, "model_kwargs", "model_kwargs takes TPCCompressor.from_pretrained options "
                     "(token, cache_dir, local_files_only, trust_remote_code)"),
    "additional_compress_kwargs": (LLMLINGUA, None, "TPC's options are fields of their own: "
                                   + ", ".join(CompressOptions.model_fields)),
    "rank_method": (LLMLINGUA, None, "TPC always ranks sentences with its context-aware sentence encoder"),
    "use_llmlingua2": (LLMLINGUA, None, "there is one TPC method; choose the checkpoint with model_name_or_path"),
    "open_api_config": (LLMLINGUA, None, "TPC runs local models only"),
    "embed_model": (OPTIMIZER, "model_name_or_path", "TPC scores with the sentence encoder of its checkpoint"),
    "embeddings": (FILTER, "model_name_or_path", "TPC scores with the sentence encoder of its checkpoint"),
    "similarity_fn": (FILTER, None, "TPC scores are cosine similarities of its own sentence embeddings"),
    "context_before": (OPTIMIZER, None, "TPC's encoder already reads each sentence in its context; kept sentences "
                       "are whole and verbatim"),
    "context_after": (OPTIMIZER, None, "TPC's encoder already reads each sentence in its context; kept sentences "
                      "are whole and verbatim"),
    "metadata_mode": ("LlamaIndex LongLLMLinguaPostprocessor", None, "TPC compresses node text only "
                      "(MetadataMode.NONE), so metadata never enters the compressed text"),
    "keep_retrieval_score": ("LlamaIndex SentenceTransformerRerank", None, "the node's score becomes TPC's "
                             "document score; each node's metadata keeps TPC's under relevance_score"),
    "top_k": ("retrievers", "top_n", "top_k / similarity_top_k is how many documents the retriever fetches; top_n is "
              "how many the compressor keeps"),
    "similarity_top_k": ("LlamaIndex retrievers", "top_n", "similarity_top_k belongs to the retriever; top_n is how "
                         "many nodes the compressor keeps"),
}


def refuse_peer_names(owner: str, data: Mapping[str, Any], fields: Iterable[str],
                      extra_names: Iterable[str] = ()) -> None:
    """Refuse, in one message, every name of ``data`` that is not one of ours: a peer's spelling with our field's
    name (and the value to pass where it means the same), any other name with a "did you mean".

    Args:
        owner: The class name, for messages.
        data: The keyword arguments as given.
        fields: Our field names.
        extra_names: Other accepted keyword names (e.g. ``compressor``).

    Raises:
        ValueError: A name that is not ours; the message says what to pass instead.
    """
    known = set(fields) | set(extra_names)
    problems = [_problem(name, value, known) for name, value in data.items() if name not in known]
    if problems:
        raise ValueError(f"{owner}: " + " ".join(problems) + " (Each setting has one name; the docs' migration "
                         "table lists LLMLingua's, EmbeddingsFilter's, SentenceEmbeddingOptimizer's and the "
                         "rerankers'.)")


def _problem(name: str, value: Any, known: set[str]) -> str:
    alias = PEER_ALIASES.get(name)
    if alias is not None and alias.ours in known:
        try:
            suggestion = f"pass `{alias.ours}={_shown(alias.convert(value))}`"
        except ValueError as error:
            suggestion = str(error)
        return f"`{name}` is {alias.source}'s name: {suggestion} ({alias.note})."
    if name in PEER_HINTS:
        source, ours, why = PEER_HINTS[name]
        suggestion = f"did you mean `{ours}`? " if ours is not None and ours in known else "TPC has no such option: "
        return f"`{name}` is {source}'s option: {suggestion}{why}."
    close = difflib.get_close_matches(name, sorted(known), n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else \
        f"known fields: {', '.join(sorted(known))}."
    return f"unknown field `{name}`: {hint}"


def _shown(value: Any) -> str:
    """A value as the message shows it: short, and never a secret's text (only plain numbers, names and None)."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str) and len(value) <= 60 and "://" not in value:
        return repr(value)
    return "..."
