"""Scoring: sentence embeddings in context, and each sentence's score against its prompt's task.

Model calls, no policy. A :class:`Scorer` does two things: ``embed`` reads every sentence inside its document
(the sentence embeddings the request head and coverage use too), and ``relevance`` scores those sentences
against a task description. :class:`PooledCosine` is the paper's R (Eq. 1): the cosine of each sentence's
pooled CSE embedding to the description's. Another scorer (late interaction, a question-conditioned pass) is
one more class behind the same two methods.

:func:`score_prompts` scores each prompt against the :class:`~tpc_core.task.Task` found for it
(:mod:`tpc_core.task` decides what that task is and how to select for it); a task selected by coverage mixes in
centrality and section leads (:mod:`tpc_core.coverage`) and hands the embeddings on for redundancy-aware
selection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import torch

from tpc_core.config import AgnosticConfig
from tpc_core.coverage import coverage_scores, section_ranks
from tpc_core.cse import ContextSentenceEncoder
from tpc_core.salience import SalienceHead, salience_scores
from tpc_core.stages import Scored, Segmented
from tpc_core.task import Selection, Task

__all__ = ["PooledCosine", "Scorer", "document_token_ids", "encode_sentences", "score_prompts"]


def document_token_ids(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]) -> list[list[list[int]]]:
    """Every document's sentences as token ids (one tokenizer call for the whole batch), document by document:
    the contexts :meth:`~tpc_core.cse.ContextSentenceEncoder.encode_contexts` reads."""
    ids = encoder.tokenize([sentence for prompt in prompts for sentence in prompt.sentences])
    contexts, position = [], 0
    for prompt in prompts:
        for spans in prompt.spans:
            contexts.append(ids[position: position + len(spans)])
            position += len(spans)
    return contexts


def encode_sentences(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
    """Each prompt's sentence embeddings, flat (n_sentences, d) in sentence order, each read inside its document."""
    matrices = encoder.encode_contexts(document_token_ids(encoder, prompts))
    per_prompt, position = [], 0
    for prompt in prompts:
        documents = matrices[position: position + len(prompt.documents)]
        per_prompt.append(torch.cat(list(documents)) if documents else torch.zeros(0))
        position += len(prompt.documents)
    return per_prompt


class Scorer(Protocol):
    """How sentences are scored against a task description."""

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """Each prompt's sentence embeddings, flat (n_sentences, d), each sentence read inside its document."""
        ...

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """Each prompt's sentence scores (n_sentences,) against its description."""
        ...


class PooledCosine:
    """The paper's R: cosine of each sentence's pooled CSE embedding to the description's (both L2-normalised).

    Args:
        encoder: The checkpoint's CSE.
    """

    def __init__(self, encoder: ContextSentenceEncoder) -> None:
        self.encoder = encoder

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """See :func:`encode_sentences`."""
        return encode_sentences(self.encoder, prompts)

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """Sentence embeddings times the description's embedding."""
        questions = self.encoder.encode_questions(list(descriptions))
        return [flat @ question if len(flat) else torch.zeros(0) for flat, question in zip(embeddings, questions)]


def score_prompts(scorer: Scorer, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  tasks: Sequence[Task], coverage: AgnosticConfig,
                  salience: SalienceHead | None = None) -> list[Scored]:
    """Score each prompt's sentences against its task.

    Args:
        scorer: The checkpoint's scorer.
        prompts: Prompts that need scoring.
        embeddings: Their sentence embeddings (``scorer.embed``).
        tasks: Their tasks (:class:`tpc_core.task.TaskFinder`).
        coverage: The checkpoint's coverage weights, for tasks selected by coverage.
        salience: The checkpoint's salience head: where given, it scores tasks selected by coverage
            (:func:`tpc_core.salience.salience_scores`) instead of the hand-set weights.
    """
    relevances = scorer.relevance(prompts, embeddings, [task.description or "" for task in tasks])
    scored = []
    for prompt, flat, task, relevance in zip(prompts, embeddings, tasks, relevances):
        selection_embeddings = None
        if task.selection is Selection.COVERAGE and salience is not None:
            relevance = salience_scores(salience, prompt, flat, lead_weight=coverage.salience_lead_weight)
        elif task.selection is Selection.COVERAGE:
            ranks = [r for doc, spans in zip(prompt.documents, prompt.spans) for r in section_ranks(doc, spans)]
            relevance = coverage_scores(relevance, flat, ranks,
                                        relevance_weight=coverage.relevance_weight if task.description else 0.0,
                                        centrality_weight=coverage.centrality_weight,
                                        position_weight=coverage.position_weight)
        if task.selection is Selection.COVERAGE:
            selection_embeddings = flat if coverage.redundancy else None
        scored.append(Scored(prompt, tuple(relevance.tolist()), task, selection_embeddings))
    return scored
