"""Experimental scorers behind :class:`tpc_core.engine.scoring.scorers.Scorer`.

``embed`` always returns the pooled CSE sentence embeddings, exactly what
:class:`tpc_core.engine.scoring.scorers.PooledCosine` returns (the request head and coverage read them); scorers
that need token states keep them from that same pass, keyed by the prompt, until ``relevance`` asks. Their
per-document step (``embed_documents``, what a sentence cache wraps) and ``identity`` are
:class:`PooledEmbeddings`': the pooled embeddings alone, so a prompt read through a cache comes without token
states. Every scorer here can be swapped into a loaded compressor (``compressor.scorer =
FusedScorer(compressor.encoder, ...)``) and run through the public ``compress`` API.

Components (each a ``(n_sentences,)`` score vector of one prompt):

* ``cos``: the paper's pooled cosine (today's tpc-mini);
* ``maxsim``: MaxSim over all question tokens; ``maxsim_content``: over its non-stopword tokens;
* ``bm25``: BM25 over the prompt's sentences; ``rare``: rare-term exact match (:mod:`training.scorer.lexical`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from tpc_core.engine.scoring.cse import ContextSentenceEncoder
from tpc_core.engine.scoring.scorers import PooledCosine, sentence_ids
from tpc_core.engine.values import DocumentSentences, Segmented
from training.scorer.derived import DERIVED, derived_component
from training.scorer.fusion import fuse
from training.scorer.late import content_token_mask, encode_contexts_with_tokens, maxsim, question_token_states
from training.scorer.lexical import bm25_scores, rare_match_scores

__all__ = ["COMPONENTS", "CachedComponents", "ComponentScorer", "FusedScorer", "LateInteraction", "PooledEmbeddings",
           "component_scores", "document_token_ids", "embed_with_tokens", "prompt_key", "record_key"]

COMPONENTS: tuple[str, ...] = ("cos", "maxsim", "maxsim_content", "bm25", "rare")
_LATE = {"maxsim", "maxsim_content"}


def prompt_key(prompt: Segmented) -> str:
    """A digest of the prompt's sentences (what every component is a function of, with the description)."""
    return hashlib.sha256("\x00".join(prompt.sentences).encode("utf-8")).hexdigest()[:24]


def record_key(prompt: Segmented, description: str) -> str:
    """Key of one (prompt, description) pair: prompts that share a context (several questions over one paper)
    are recorded apart."""
    return prompt_key(prompt) + ":" + hashlib.sha256(description.encode("utf-8")).hexdigest()[:16]


def document_token_ids(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]) -> list[list[list[int]]]:
    """Every document's sentences as token ids (the contexts the CSE reads), prompt by prompt:
    :func:`tpc_core.engine.scoring.scorers.sentence_ids` over each prompt's documents."""
    return sentence_ids(encoder, [document for prompt in prompts for document in prompt.per_document])


def embed_with_tokens(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]
                      ) -> tuple[list[torch.Tensor], list[list[torch.Tensor]]]:
    """Pooled sentence embeddings (as :meth:`tpc_core.engine.scoring.scorers.PooledCosine.embed`) and every
    sentence's token states, flat per prompt in sentence order, from one context pass."""
    encoded = encode_contexts_with_tokens(encoder, document_token_ids(encoder, prompts))
    pooled = []
    states = []
    position = 0
    for prompt in prompts:
        documents = encoded[position: position + len(prompt.documents)]
        pooled.append(torch.cat([m for m, _ in documents]) if documents else torch.zeros(0))
        states.append([s for _, doc_states in documents for s in doc_states])
        position += len(prompt.documents)
    return pooled, states


def component_scores(encoder: ContextSentenceEncoder, prompt: Segmented, pooled: torch.Tensor,
                     states: Sequence[torch.Tensor] | None, description: str,
                     wanted: Sequence[str] = COMPONENTS) -> dict[str, torch.Tensor]:
    """The requested components of one prompt against ``description``."""
    out: dict[str, torch.Tensor] = {}
    if "cos" in wanted:
        out["cos"] = pooled @ encoder.encode_questions([description])[0] if len(pooled) else torch.zeros(0)
    if _LATE & set(wanted):
        if states is None:
            raise ValueError("late-interaction components need the token states from embed (a prompt read through a "
                             "sentence cache comes without them: run without cache=)")
        q_states, q_ids = question_token_states(encoder, [description])[0]
        if "maxsim" in wanted:
            out["maxsim"] = maxsim(q_states, states)
        if "maxsim_content" in wanted:
            out["maxsim_content"] = maxsim(q_states[content_token_mask(encoder.tokenizer, q_ids)], states)
    if "bm25" in wanted:
        out["bm25"] = torch.tensor(bm25_scores(prompt.sentences, description), dtype=torch.float64)
    if "rare" in wanted:
        out["rare"] = torch.tensor(rare_match_scores(prompt.sentences, description), dtype=torch.float64)
    return out


class PooledEmbeddings:
    """The embedding side of a research scorer: the CSE's pooled sentence embeddings, as
    :class:`~tpc_core.engine.scoring.scorers.PooledCosine` computes them (the request head and coverage read them).

    Args:
        encoder: The checkpoint's CSE.
    """

    identity = PooledCosine.identity
    """What :meth:`embed_documents` computes: ``PooledCosine``'s embeddings, so a sentence cache may share them."""

    def __init__(self, encoder: ContextSentenceEncoder) -> None:
        self.encoder = encoder
        self.pooled = PooledCosine(encoder)

    def embed_documents(self, documents: Sequence[DocumentSentences]) -> list[torch.Tensor]:
        """Each document's pooled sentence embeddings (the per-document step a sentence cache wraps)."""
        return self.pooled.embed_documents(documents)

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """Each prompt's pooled sentence embeddings, flat (n_sentences, d)."""
        return self.pooled.embed(prompts)


class _KeepsStates(PooledEmbeddings):
    """Shared ``embed``: pooled embeddings returned, token states kept per prompt for ``relevance``."""

    needs_states = True

    def __init__(self, encoder: ContextSentenceEncoder) -> None:
        super().__init__(encoder)
        self._states: dict[int, tuple[Segmented, list[torch.Tensor]]] = {}

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """Pooled sentence embeddings (the same as ``PooledCosine.embed``); token states kept for ``relevance``."""
        if not self.needs_states:
            return super().embed(prompts)
        pooled, states = embed_with_tokens(self.encoder, prompts)
        self._states = {id(prompt): (prompt, s) for prompt, s in zip(prompts, states)}
        return pooled

    def token_states_of(self, prompt: Segmented) -> list[torch.Tensor] | None:
        """The token states kept for ``prompt`` by the last :meth:`embed` (``None`` for a prompt it did not see)."""
        kept = self._states.get(id(prompt))
        return kept[1] if kept is not None and kept[0] is prompt else None


class LateInteraction(_KeepsStates):
    """MaxSim between the description's token states (encoded alone) and each sentence's contextual tokens.

    Args:
        encoder: The checkpoint's CSE.
        content_only: Match only the description's non-stopword tokens.
    """

    def __init__(self, encoder: ContextSentenceEncoder, *, content_only: bool = True) -> None:
        super().__init__(encoder)
        self.component = "maxsim_content" if content_only else "maxsim"

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """MaxSim of each sentence against its prompt's description."""
        return [component_scores(self.encoder, p, e, self.token_states_of(p), d, [self.component])[self.component]
                for p, e, d in zip(prompts, embeddings, descriptions)]


class FusedScorer(_KeepsStates):
    """Weighted fusion of components (:data:`COMPONENTS`), per prompt, by z-score sum or RRF.

    Args:
        encoder: The checkpoint's CSE.
        weights: Component name -> weight, e.g. ``{"cos": 1.0, "bm25": 0.3}``.
        method: ``"z"`` or ``"rrf"`` (:func:`training.scorer.fusion.fuse`).
    """

    def __init__(self, encoder: ContextSentenceEncoder, weights: Mapping[str, float], method: str = "z") -> None:
        super().__init__(encoder)
        unknown = set(weights) - set(COMPONENTS)
        if unknown or not weights:
            raise ValueError(f"weights must name components of {COMPONENTS}, got {sorted(weights)}")
        self.weights = dict(weights)
        self.method = method
        self.needs_states = bool(_LATE & set(weights))

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """Fused score of each sentence."""
        out = []
        for prompt, pooled, description in zip(prompts, embeddings, descriptions):
            parts = component_scores(self.encoder, prompt, pooled, self.token_states_of(prompt), description,
                                     list(self.weights))
            names = list(self.weights)
            out.append(fuse([parts[n] for n in names], [self.weights[n] for n in names], self.method).float())
        return out


class ComponentScorer(_KeepsStates):
    """Computes every component in one pass and records them (``records[key]``); scores by ``cos``, so a
    compress call through it is today's tpc-mini (the sanity check)."""

    def __init__(self, encoder: ContextSentenceEncoder) -> None:
        super().__init__(encoder)
        self.records: dict[str, dict[str, Any]] = {}

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """Pooled cosine, recording all components (and the pooled embeddings) per prompt."""
        out = []
        for prompt, pooled, description in zip(prompts, embeddings, descriptions):
            parts = component_scores(self.encoder, prompt, pooled, self.token_states_of(prompt), description)
            self.records[record_key(prompt, description)] = {"description": description, "pooled": pooled,
                                                             "components": parts}
            out.append(parts["cos"])
        return out


class CachedComponents:
    """Replays recorded components (:class:`ComponentScorer`) fused with given weights: no model call."""

    identity = PooledCosine.identity
    """What it embeds: the recorded pooled embeddings (it reads no document itself)."""

    def __init__(self, records: Mapping[str, Mapping[str, Any]], weights: Mapping[str, float],
                 method: str = "z") -> None:
        self.records = records
        self.weights = dict(weights)
        self.method = method
        self._pooled = {key.split(":")[0]: record["pooled"] for key, record in records.items()}

    def embed_documents(self, documents: Sequence[DocumentSentences]) -> list[torch.Tensor]:
        """Never: a replay reads no document.

        Raises:
            TypeError: Always (run it without ``cache=``).
        """
        raise TypeError("CachedComponents replays recorded prompts and reads no document: run it without cache=.")

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """The recorded pooled embeddings."""
        return [self._pooled[prompt_key(p)] for p in prompts]

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """Fused recorded components (the description must be the recorded one)."""
        out = []
        for prompt, description in zip(prompts, descriptions):
            record = self.records.get(record_key(prompt, description))
            if record is None:
                raise KeyError("no components recorded for this prompt and description")
            names = list(self.weights)
            parts = [derived_component(n, prompt, record["components"], description) if n in DERIVED
                     else record["components"][n] for n in names]
            out.append(fuse(parts, [self.weights[n] for n in names], self.method).float())
        return out
