"""Scoring: sentence embeddings in context, and each sentence's score against its prompt's task.

Two model calls, no policy: :func:`encode_sentences` reads every sentence inside its document (the CSE), and
:func:`score_prompts` scores the sentences against the :class:`~tpc_core.task.Task` found for each prompt
(:mod:`tpc_core.task` decides what that task is and how to select for it). Relevance is the cosine of each
sentence's embedding to the task description's; a task selected by coverage mixes in centrality and section
leads (:mod:`tpc_core.coverage`) and hands the embeddings on for redundancy-aware selection.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from tpc_core.config import AgnosticConfig
from tpc_core.coverage import coverage_scores, section_ranks
from tpc_core.cse import ContextSentenceEncoder
from tpc_core.stages import Scored, Segmented
from tpc_core.task import Selection, Task

__all__ = ["encode_sentences", "score_prompts"]


def encode_sentences(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
    """Each prompt's sentence embeddings, flat (n_sentences, d) in sentence order, each read inside its document."""
    ids = encoder.tokenize([sentence for prompt in prompts for sentence in prompt.sentences])
    contexts, position = [], 0
    for prompt in prompts:
        for spans in prompt.spans:
            contexts.append(ids[position: position + len(spans)])
            position += len(spans)
    matrices = encoder.encode_contexts(contexts)
    per_prompt, position = [], 0
    for prompt in prompts:
        documents = matrices[position: position + len(prompt.documents)]
        per_prompt.append(torch.cat(list(documents)) if documents else torch.zeros(0))
        position += len(prompt.documents)
    return per_prompt


def score_prompts(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  tasks: Sequence[Task], coverage: AgnosticConfig) -> list[Scored]:
    """Score each prompt's sentences against its task.

    Args:
        encoder: The CSE (encodes the task descriptions).
        prompts: Prompts that need scoring.
        embeddings: Their sentence embeddings (:func:`encode_sentences`).
        tasks: Their tasks (:class:`tpc_core.task.TaskFinder`).
        coverage: The checkpoint's coverage weights, for tasks selected by coverage.
    """
    question_vectors = encoder.encode_questions([task.description or "" for task in tasks])
    scored = []
    for prompt, flat, task, question in zip(prompts, embeddings, tasks, question_vectors):
        relevance = flat @ question if len(flat) else torch.zeros(0)
        selection_embeddings = None
        if task.selection is Selection.COVERAGE:
            ranks = [r for doc, spans in zip(prompt.documents, prompt.spans) for r in section_ranks(doc, spans)]
            relevance = coverage_scores(relevance, flat, ranks,
                                        relevance_weight=coverage.relevance_weight if task.description else 0.0,
                                        centrality_weight=coverage.centrality_weight,
                                        position_weight=coverage.position_weight)
            selection_embeddings = flat if coverage.redundancy else None
        scored.append(Scored(prompt, tuple(relevance.tolist()), task, selection_embeddings))
    return scored
