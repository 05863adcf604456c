"""Scoring: the one stage that runs models. ``Segmented`` prompts in, ``Scored`` prompts out.

Prompt-aware: each sentence's context-aware embedding (CSE) against the question's. Prompt-agnostic: the
task is found first (:func:`find_tasks`): the prompt's own request sentences where the request head finds
them, otherwise the CTD's description (grounded in the prompt, else the checkpoint's neutral fallback), or
coverage alone when the checkpoint has a head but no CTD; such prompts are scored with coverage weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from tpc_core.config import AgnosticConfig
from tpc_core.coverage import coverage_scores, section_ranks
from tpc_core.cse import ContextSentenceEncoder
from tpc_core.request import RequestHead, asks_for_summary, is_grounded, match_sentences, pick_request, request_text
from tpc_core.stages import Scored, Segmented

__all__ = ["Task", "find_tasks", "score_prompts"]

Task = tuple[str | None, str]  # (task description, task source)
Generate = Callable[[list[str]], list[str]]


def encode_sentences(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]) -> list[list[torch.Tensor]]:
    """Each prompt's per-document sentence embeddings, every sentence read inside its document."""
    ids = encoder.tokenize([sentence for prompt in prompts for sentence in prompt.sentences])
    contexts, position = [], 0
    for prompt in prompts:
        for spans in prompt.spans:
            contexts.append(ids[position: position + len(spans)])
            position += len(spans)
    matrices = encoder.encode_contexts(contexts)
    per_prompt, position = [], 0
    for prompt in prompts:
        per_prompt.append(matrices[position: position + len(prompt.documents)])
        position += len(prompt.documents)
    return per_prompt


def find_tasks(prompts: Sequence[Segmented], embeddings: Sequence[Sequence[torch.Tensor]], *,
               head: RequestHead | None, settings: AgnosticConfig, generate: Generate, has_ctd: bool,
               separator: str, require_ctd: bool = False) -> list[Task]:
    """The task description of each question-less prompt and where it came from.

    Its written request where the request head finds one (nothing generated, ``"extracted"``); otherwise the
    prompt sentences the CTD's description restates (``"matched"``, when ``settings.match_share`` is set), else
    the CTD's description (``"generated"``) if the prompt grounds it, else the checkpoint's fallback
    (``"fallback"``); with a head but no CTD, no description and coverage alone (``"coverage"``).
    """
    tasks: list[Task | None] = []
    for prompt, documents in zip(prompts, embeddings):
        texts = prompt.sentences
        picked: list[int] = []
        if head is not None and texts:
            probabilities = head.probabilities(torch.cat(list(documents)), texts)
            picked = pick_request(probabilities, settings.request_threshold, settings.max_request_sentences)
        tasks.append((request_text(texts, picked), "extracted") if picked else None)
    missing = [k for k, task in enumerate(tasks) if task is None]
    if missing and not has_ctd and head is not None and not require_ctd:
        for k in missing:
            tasks[k] = (None, "coverage")
    elif missing:
        texts = [separator.join(prompts[k].documents) for k in missing]
        for k, text, description in zip(missing, texts, generate(texts)):
            grounded = head is None or is_grounded(description, text)
            matched = (match_sentences(description, prompts[k].sentences, share=settings.match_share,
                                       max_sentences=settings.max_request_sentences)
                       if grounded and settings.match_share else [])
            if matched:  # the request as written, not the CTD's paraphrase of it
                tasks[k] = (request_text(prompts[k].sentences, matched), "matched")
            elif grounded:
                tasks[k] = (description, "generated")
            else:  # never use invented text: the neutral fallback replaces it
                tasks[k] = (settings.fallback_description, "fallback")
    return [task for task in tasks if task is not None]


def score_prompts(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented], questions: Sequence[str | None],
                  *, head: RequestHead | None, settings: AgnosticConfig, generate: Generate, has_ctd: bool,
                  separator: str) -> list[Scored]:
    """Score every prompt that is over budget; the others pass through unscored."""
    todo = [k for k, prompt in enumerate(prompts) if prompt.needs_scoring]
    scored = [Scored(prompt) for prompt in prompts]
    if not todo:
        return scored
    embeddings = encode_sentences(encoder, [prompts[k] for k in todo])
    tasks: dict[int, Task] = {k: (questions[k], "question") for k in todo if questions[k] is not None}
    agnostic = [(k, e) for k, e in zip(todo, embeddings) if questions[k] is None]
    if agnostic:
        found = find_tasks([prompts[k] for k, _ in agnostic], [e for _, e in agnostic], head=head, settings=settings,
                           generate=generate, has_ctd=has_ctd, separator=separator)
        tasks.update(zip([k for k, _ in agnostic], found))
    question_vectors = encoder.encode_questions([tasks[k][0] or "" for k in todo])
    for row, (k, documents) in enumerate(zip(todo, embeddings)):
        prompt, (description, source) = prompts[k], tasks[k]
        flat = torch.cat(list(documents)) if documents else torch.zeros(0)
        relevance = flat @ question_vectors[row] if len(flat) else torch.zeros(0)
        selection_embeddings = None
        whole_text = source in ("generated", "fallback", "coverage") or (
            source == "matched" and asks_for_summary(description or ""))  # a written "Summarise ..." request
        if whole_text and settings.uses_coverage:
            ranks = [r for doc, spans in zip(prompt.documents, prompt.spans) for r in section_ranks(doc, spans)]
            relevance = coverage_scores(relevance, flat, ranks,
                                        relevance_weight=settings.relevance_weight if description else 0.0,
                                        centrality_weight=settings.centrality_weight,
                                        position_weight=settings.position_weight)
            selection_embeddings = flat if settings.redundancy else None
        scored[k] = Scored(prompt, tuple(relevance.tolist()), description, source, selection_embeddings)
    return scored
