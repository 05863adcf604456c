"""Scoring: sentence embeddings in context, and each sentence's score against its prompt's task.

Model calls, no policy. A :class:`Scorer` does two things: ``embed`` reads every sentence inside its document
(the sentence embeddings the request head and coverage use too), and ``relevance`` scores those sentences
against a task description. :class:`PooledCosine` is the paper's R (Eq. 1): the cosine of each sentence's
pooled CSE embedding to the description's. :class:`CosineBM25` fuses that cosine with lexical evidence (BM25
over the prompt's own sentences, :mod:`tpc_core.engine.scoring.lexical`). The checkpoint's ``scorer`` section names one
in :data:`SCORERS`, the one table from name to class (:func:`build_scorer` reads it); another scorer (late
interaction, a question-conditioned pass) is one more class behind the same methods and one more entry there.

:func:`score_prompts` scores each prompt against the :class:`~tpc_core.engine.values.Task` found for it
(:mod:`tpc_core.engine.task.finder` decides what that task is and how to select for it); a task selected by
coverage mixes in centrality and section leads (:mod:`tpc_core.engine.scoring.coverage`) and hands the embeddings
on for redundancy-aware selection.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Protocol

import torch

from tpc_core.config import AgnosticConfig, ScorerConfig
from tpc_core.engine.reading import embed_prompts
from tpc_core.engine.scoring.coverage import coverage_scores, section_ranks
from tpc_core.engine.scoring.cse import ContextSentenceEncoder
from tpc_core.engine.scoring.lexical import bm25_scores
from tpc_core.engine.scoring.salience import Salience, SalienceModel
from tpc_core.engine.values import DocumentSentences, Scored, Segmented, Selection, Task

__all__ = ["SCORERS", "CosineBM25", "PooledCosine", "Scorer", "build_scorer", "fuse_lexical", "needs_embeddings",
           "score_prompts", "scorer_class", "sentence_ids"]


def sentence_ids(encoder: ContextSentenceEncoder, documents: Sequence[DocumentSentences]) -> list[list[list[int]]]:
    """Every document's sentences as token ids: the contexts
    :meth:`~tpc_core.engine.scoring.cse.ContextSentenceEncoder.encode_contexts` reads.

    A document counted with the CSE's own tokenizer (the default counter) brings its sentences' ids along and is
    not tokenized again; the others' sentences are tokenized in one call.
    """
    reuse = [document.token_ids is not None and document.ids_tokenizer == encoder.tokenizer_fingerprint
             for document in documents]
    fresh = iter(encoder.tokenize([sentence for document, own in zip(documents, reuse) if not own
                                   for sentence in document.sentences]))
    return [[list(ids) for ids in document.token_ids] if own and document.token_ids is not None
            else [next(fresh) for _ in document.sentences] for document, own in zip(documents, reuse)]


class Scorer(Protocol):
    """How sentences are scored against a task description."""

    @classmethod
    def from_config(cls, config: ScorerConfig, encoder: ContextSentenceEncoder) -> Scorer:
        """The scorer a checkpoint's ``scorer`` section describes, on its CSE."""
        ...

    @property
    def identity(self) -> str:
        """What ``embed_documents`` computes, by name: a sentence cache keys its entries by it (with the model's
        identity), so it never serves one scorer's embeddings to another that embeds differently."""
        ...

    def embed_documents(self, documents: Sequence[DocumentSentences]) -> list[torch.Tensor]:
        """Each document's sentence embeddings ``(n_sentences, d)``, each sentence read inside its document: the
        per-document step a sentence cache wraps (:mod:`tpc_core.engine.reading`)."""
        ...

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """Each prompt's sentence embeddings, flat (n_sentences, d) (:func:`~tpc_core.engine.reading.embed_prompts`
        over ``embed_documents``)."""
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

    @classmethod
    def from_config(cls, config: ScorerConfig, encoder: ContextSentenceEncoder) -> PooledCosine:
        """No settings of its own."""
        return cls(encoder)

    identity = "pooled_cse"
    """Mean-pooled CSE embeddings of each sentence inside its document (:class:`CosineBM25` embeds the same)."""

    def embed_documents(self, documents: Sequence[DocumentSentences]) -> list[torch.Tensor]:
        """The CSE's pooled sentence embeddings of each document, all documents in one ``encode_contexts`` call."""
        return self.encoder.encode_contexts(sentence_ids(self.encoder, documents))

    def embed(self, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
        """Each prompt's sentence embeddings, flat (n_sentences, d) in sentence order, each read inside its
        document."""
        return embed_prompts(self.embed_documents, prompts)

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """Sentence embeddings times the description's embedding."""
        questions = self.encoder.encode_questions(list(descriptions))
        return [flat @ question if len(flat) else torch.zeros(0) for flat, question in zip(embeddings, questions)]


def fuse_lexical(cosine: torch.Tensor, lexical: torch.Tensor, weight: float) -> torch.Tensor:
    """``cosine + weight * std(cosine) * z(lexical)``: the order of ``z(cosine) + weight * z(lexical)``, on the
    cosine's scale.

    A z-score sum is scale-free (a prompt's BM25 range says nothing about its cosines'); rescaling it by the
    cosine's own mean and spread keeps the numbers readable as cosines, so thresholds (``min_score``) and the
    coverage mix keep their meaning. A constant ``lexical`` vector (an empty description, no shared word) or a
    constant cosine returns ``cosine`` unchanged.

    >>> cosine = torch.tensor([0.2, 0.4, 0.6], dtype=torch.float64)
    >>> fuse_lexical(cosine, torch.tensor([3.0, 0.0, 0.0]), 0.0).tolist()
    [0.2, 0.4, 0.6]
    >>> order = fuse_lexical(cosine, torch.tensor([9.0, 0.0, 0.0]), 1.0).argsort()
    >>> order.tolist()  # the BM25 match overtakes the middle sentence, not the best cosine
    [1, 0, 2]
    """
    if cosine.numel() < 2:
        return cosine
    lexical = lexical.to(cosine.dtype)
    spread = cosine.std(unbiased=False)
    lexical_spread = lexical.std(unbiased=False)
    if spread <= 1e-12 or lexical_spread <= 1e-12:
        return cosine
    return cosine + weight * spread * (lexical - lexical.mean()) / lexical_spread


class CosineBM25(PooledCosine):
    """The pooled cosine fused with BM25 of each sentence against the description (:func:`fuse_lexical`).

    BM25's collection is the prompt's own sentences (:func:`tpc_core.engine.scoring.lexical.bm25_scores`): a name,
    number or rare word of the question that few sentences contain lifts those sentences. Embeddings are the
    pooled cosine's, so the request head and coverage see the same vectors.

    Args:
        encoder: The checkpoint's CSE.
        lexical_weight: Weight of the BM25 z-score against the cosine's (``scorer.lexical_weight``).
    """

    def __init__(self, encoder: ContextSentenceEncoder, lexical_weight: float) -> None:
        super().__init__(encoder)
        self.lexical_weight = lexical_weight

    @classmethod
    def from_config(cls, config: ScorerConfig, encoder: ContextSentenceEncoder) -> CosineBM25:
        """``scorer.lexical_weight`` weighs BM25."""
        return cls(encoder, config.lexical_weight)

    def relevance(self, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        """The pooled cosines, each prompt's fused with its sentences' BM25 against its description."""
        cosines = super().relevance(prompts, embeddings, descriptions)
        fused = []
        for prompt, cosine, description in zip(prompts, cosines, descriptions):
            if not description.strip() or cosine.numel() < 2:
                fused.append(cosine)
                continue
            lexical = torch.tensor(bm25_scores(prompt.sentences, description), dtype=cosine.dtype,
                                   device=cosine.device)
            fused.append(fuse_lexical(cosine, lexical, self.lexical_weight))
        return fused


#: Scoring functions R(task, sentence) a checkpoint may name in ``scorer.name``: the one table from name to class.
SCORERS: dict[str, type[Scorer]] = {"pooled_cosine": PooledCosine, "cosine_bm25": CosineBM25}


def scorer_class(config: ScorerConfig) -> type[Scorer]:
    """The class :data:`SCORERS` holds for ``config.name``.

    Raises:
        ValueError: A name the table does not hold (the message names ``scorer.name``, the value and the accepted
            names).
    """
    if config.name not in SCORERS:
        raise ValueError(f"scorer.name must be one of {list(SCORERS)}, got {config.name!r}.")
    return SCORERS[config.name]


def build_scorer(config: ScorerConfig, encoder: ContextSentenceEncoder) -> Scorer:
    """The scorer a checkpoint's ``scorer`` section names (:func:`scorer_class`), on its CSE."""
    return scorer_class(config).from_config(config, encoder)


def needs_embeddings(task: Task, coverage: AgnosticConfig, salience: Salience | SalienceModel | None) -> bool:
    """Whether :func:`score_prompts` reads a prompt's sentence embeddings to score it for ``task``.

    Relevance to a description does, and so do coverage's hand-set weights, an embedding salience head and
    redundancy (MMR); a prompt selected by coverage whose salience model is the lead correction (layout and lexical
    features only), with no redundancy, does not: it need not be encoded at all.
    """
    if task.selection is not Selection.COVERAGE or salience is None or coverage.redundancy:
        return True
    bundle = salience if isinstance(salience, Salience) else Salience.of(salience)
    return bundle is None or bundle.reads_embeddings(written_request=bool(task.request))


def score_prompts(scorer: Scorer, prompts: Sequence[Segmented], embeddings: Sequence[torch.Tensor | None],
                  tasks: Sequence[Task], coverage: AgnosticConfig,
                  salience: Salience | SalienceModel | None = None) -> list[Scored]:
    """Score each prompt's sentences against its task.

    Args:
        scorer: The checkpoint's scorer.
        prompts: Prompts that need scoring.
        embeddings: Their sentence embeddings (``scorer.embed``); ``None`` for a prompt whose task
            :func:`needs_embeddings` says reads none.
        tasks: Their tasks (:class:`tpc_core.engine.task.finder.TaskFinder`).
        coverage: The checkpoint's coverage weights, for tasks selected by coverage.
        salience: The checkpoint's salience models (:class:`tpc_core.engine.scoring.salience.Salience`, or one
            model): where given, they score tasks selected by coverage instead of the hand-set weights.

    Raises:
        ValueError: A prompt's embeddings are ``None`` where its task reads them.
    """
    salience = salience if salience is None or isinstance(salience, Salience) else Salience.of(salience)
    missing = [k for k, (flat, task) in enumerate(zip(embeddings, tasks))
               if flat is None and needs_embeddings(task, coverage, salience)]
    if missing:
        raise ValueError(f"prompt(s) {missing} have no sentence embeddings, and their tasks read them.")
    # A task the salience head scores needs no relevance (its description would be encoded for nothing).
    needed = [task.selection is not Selection.COVERAGE or salience is None for task in tasks]
    wanted = [k for k, need in enumerate(needed) if need]
    computed = iter(scorer.relevance([prompts[k] for k in wanted], [_given(embeddings[k]) for k in wanted],
                                     [tasks[k].description or "" for k in wanted]) if wanted else [])
    relevances = [next(computed) if need else None for need in needed]
    scored = []
    for prompt, flat, task, relevance in zip(prompts, embeddings, tasks, relevances):
        selection_embeddings = None
        if task.selection is Selection.COVERAGE and salience is not None:
            relevance = salience.scores(prompt, flat, lead_weight=coverage.salience_lead_weight,
                                        written_request=bool(task.request))
        # Every task the salience model does not score was in ``wanted``: the scorer computed its relevance.
        assert relevance is not None
        if task.selection is Selection.COVERAGE and salience is None:
            ranks = [r for doc, spans in zip(prompt.documents, prompt.spans) for r in section_ranks(doc, spans)]
            relevance = coverage_scores(relevance, _given(flat), ranks,
                                        relevance_weight=coverage.relevance_weight if task.description else 0.0,
                                        centrality_weight=coverage.centrality_weight,
                                        position_weight=coverage.position_weight)
        if task.selection is Selection.COVERAGE:
            selection_embeddings = flat if coverage.redundancy else None
        scored.append(Scored(prompt, tuple(relevance.tolist()), task, selection_embeddings))
    return scored


def _given(embeddings: torch.Tensor | None) -> torch.Tensor:
    """Embeddings :func:`score_prompts` checked are there (its check raised for the prompts that lack them)."""
    assert embeddings is not None
    return embeddings


def _encode_sentences(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]) -> list[torch.Tensor]:
    return PooledCosine(encoder).embed(prompts)


def _document_token_ids(encoder: ContextSentenceEncoder, prompts: Sequence[Segmented]) -> list[list[list[int]]]:
    return sentence_ids(encoder, [document for prompt in prompts for document in prompt.per_document])


# Names this module no longer exports (they served only training/scorer), still callable for a while:
# name -> (what runs, what to use instead).
_DEPRECATED = {
    "encode_sentences": (_encode_sentences, "PooledCosine(encoder).embed(prompts)"),
    "document_token_ids": (_document_token_ids, "sentence_ids(encoder, [d for p in prompts for d in p.per_document])"),
}


def __getattr__(name: str) -> object:
    if name in _DEPRECATED:
        function, instead = _DEPRECATED[name]
        warnings.warn(f"tpc_core.engine.scoring.scorers.{name} is deprecated and will be removed: use {instead} "
                      "(the same result).", DeprecationWarning, stacklevel=2)
        return function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
