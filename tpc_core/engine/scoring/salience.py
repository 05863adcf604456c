"""Salience: how much each sentence belongs in a summary of a prompt that asks for no particular fact.

A bare document, "summarise these articles", every row of an index-time corpus: there is no question to score
against. The salience head scores each sentence from what compression already computes — its contextual CSE
embedding and a few layout features (position in its document, section and paragraph, length, centrality to
the prompt and to its document) — and was trained on greedy-ROUGE oracle labels of human summaries
(``training/salience``). Its score is blended with a passage-lead prior (every passage's first sentence, then
every second, ...), which held-out summarisation data showed to be the strongest single signal. Selection under
the budget stays the engine's (greedy, or MMR against what is already kept).

Pure functions plus one small frozen head; nothing here loads a model or reads a config (the package that loads
checkpoints finds a checkpoint's head file: ``loading/heads.py``).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from tpc_core.engine.scoring.coverage import section_ranks
from tpc_core.engine.scoring.head import ScoringHead
from tpc_core.engine.scoring.lead import PASSAGE_MARKER, LeadCorrection, lead_order
from tpc_core.engine.values import Segmented

__all__ = ["HAND_FEATURES", "PASSAGE_MARKER", "Salience", "SalienceHead", "SalienceModel", "hand_features",
           "model_scores", "paragraph_ranks", "passage_lead_scores", "prompt_features", "salience_scores", "zscore"]

_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_CAP = 10  # positions past the 10th sentence look alike to a lead rule; the capped features say "far in"

HAND_FEATURES: tuple[str, ...] = (
    "position_in_document",      # min(index in its source document, 10) / 10
    "from_end_of_document",      # min(sentences after it in its document, 10) / 10
    "relative_position",         # index / sentences of its document
    "first_of_document",         # 1.0 for a document's first sentence
    "position_in_section",       # min(section rank, 10) / 10 (tpc_core.engine.scoring.coverage.section_ranks)
    "section_lead",              # 1 / sqrt(1 + section rank); 0 for a header
    "is_header",                 # section rank -1: a short "Passage 3:" / heading line
    "document_index",            # which document of the prompt, min(index, 10) / 10
    "position_in_paragraph",     # min(rank within its blank-line-separated block, 10) / 10
    "first_of_paragraph",        # 1.0 for a block's first sentence (passages of a context joined by blank lines)
    "log_tokens",                # log1p(tokens of the sentence)
    "relative_length",           # tokens / mean sentence tokens of the prompt
    "centrality",                # cosine to the normalised mean embedding of the prompt
    "document_centrality",       # cosine to the normalised mean embedding of its own document
    "log_prompt_sentences",      # log1p(sentences in the prompt)
    "log_prompt_tokens",         # log1p(tokens in the prompt)
    "log_documents",             # log1p(documents in the prompt)
)
"""Names of the head's layout-feature columns, in order (written into every head file)."""


def zscore(values: Sequence[float] | torch.Tensor) -> torch.Tensor:
    """``(v - mean) / std`` within one prompt (zeros when the values are constant or there is one).

    >>> zscore([1.0, 2.0, 3.0]).tolist()
    [-1.0, 0.0, 1.0]
    """
    tensor = torch.as_tensor(values, dtype=torch.float64).flatten()
    spread = tensor.std() if len(tensor) > 1 else torch.tensor(0.0, dtype=torch.float64)
    return (tensor - tensor.mean()) / spread if spread > 1e-12 else torch.zeros_like(tensor)


def paragraph_ranks(document: str, spans: Sequence[tuple[int, int]]) -> list[int]:
    """Each sentence's rank (0 = first) within its blank-line-separated block of ``document``.

    >>> paragraph_ranks("A. B.\\n\\nC.", [(0, 2), (3, 5), (7, 9)])
    [0, 1, 0]
    """
    breaks = [match.end() for match in _BLANK_LINE.finditer(document)]
    ranks = []
    block = -1
    rank = 0
    for start, _ in spans:
        current = bisect_right(breaks, start)
        if current != block:
            block = current
            rank = 0
        ranks.append(rank)
        rank += 1
    return ranks


def passage_lead_scores(documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]) -> torch.Tensor:
    """The lead-per-passage prior, flat order: :func:`tpc_core.engine.scoring.lead.lead_order` (kept under this name).

    >>> passage_lead_scores(["A. B.\\n\\nC."], [[(0, 2), (3, 5), (7, 9)]]).tolist()
    [-0.0, -2.0, -1.0]
    """
    return lead_order(documents, spans)


def hand_features(embeddings: torch.Tensor, counts: Sequence[int], document_of: Sequence[int],
                  section_rank: Sequence[int], paragraph_rank: Sequence[int] | None = None) -> torch.Tensor:
    """The :data:`HAND_FEATURES` of one prompt's sentences, shape ``(n, len(HAND_FEATURES))``.

    Args:
        embeddings: ``(n, d)`` sentence embeddings, flat order.
        counts: Tokens of each sentence.
        document_of: The prompt document each sentence belongs to (non-decreasing).
        section_rank: :func:`tpc_core.engine.scoring.coverage.section_ranks` of each sentence (-1: header).
        paragraph_rank: :func:`paragraph_ranks` of each sentence (default: its position in its document).

    Raises:
        ValueError: Lengths that do not match, or no sentence.
    """
    n = len(counts)
    if n == 0 or len(embeddings) != n or len(document_of) != n or len(section_rank) != n:
        raise ValueError(f"need one embedding, count, document and rank per sentence, got {len(embeddings)}, "
                         f"{n}, {len(document_of)}, {len(section_rank)}")
    vectors = torch.nn.functional.normalize(embeddings.float(), dim=1)
    centrality = vectors @ torch.nn.functional.normalize(vectors.mean(dim=0), dim=0)
    per_document: dict[int, list[int]] = defaultdict(list)
    for index, document in enumerate(document_of):
        per_document[document].append(index)
    document_centrality = torch.zeros(n)
    within = [0] * n
    size = [0] * n
    for members in per_document.values():
        local = torch.nn.functional.normalize(vectors[members].mean(dim=0), dim=0)
        document_centrality[members] = vectors[members] @ local
        for position, index in enumerate(members):
            within[index] = position
            size[index] = len(members)
    paragraph_rank = within if paragraph_rank is None else paragraph_rank
    if len(paragraph_rank) != n:
        raise ValueError(f"{len(paragraph_rank)} paragraph ranks for {n} sentences")
    total_tokens = sum(counts)
    mean_tokens = max(total_tokens / n, 1.0)
    rows = []
    for index in range(n):
        rank = section_rank[index]
        rows.append([
            min(within[index], _CAP) / _CAP,
            min(size[index] - 1 - within[index], _CAP) / _CAP,
            within[index] / size[index],
            float(within[index] == 0),
            min(max(rank, 0), _CAP) / _CAP,
            1.0 / math.sqrt(1.0 + rank) if rank >= 0 else 0.0,
            float(rank < 0),
            min(document_of[index], _CAP) / _CAP,
            min(paragraph_rank[index], _CAP) / _CAP,
            float(paragraph_rank[index] == 0),
            math.log1p(counts[index]),
            counts[index] / mean_tokens,
            float(centrality[index]),
            float(document_centrality[index]),
            math.log1p(n),
            math.log1p(total_tokens),
            math.log1p(len(per_document)),
        ])
    return torch.tensor(rows, dtype=torch.float32)


def prompt_features(prompt: Segmented, embeddings: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The head's layout features and the passage-lead prior of one segmented prompt, flat order.

    Returns:
        ``(hand (n, len(HAND_FEATURES)), prior (n,))``.
    """
    pairs = list(zip(prompt.documents, prompt.spans))
    sections = [rank for document, spans in pairs for rank in section_ranks(document, list(spans))]
    paragraphs = [rank for document, spans in pairs for rank in paragraph_ranks(document, list(spans))]
    counts = [count for doc_counts in prompt.counts for count in doc_counts]
    hand = hand_features(embeddings, counts, [d for d, _ in prompt.flat], sections, paragraphs)
    return hand, passage_lead_scores(prompt.documents, prompt.spans)


@dataclass(frozen=True)
class SalienceHead(ScoringHead):
    """A sentence scorer over ``[embedding, standardised layout features]``: linear, or one GELU hidden layer.

    Weights, file and checks are :class:`tpc_core.engine.scoring.head.ScoringHead`'s: ``mean`` and ``std`` of
    each of the :data:`HAND_FEATURES` (saved as ``hand_mean`` and ``hand_std``), ``weight`` ``(d + F,)`` for a
    linear head, ``hidden_weight`` ``(H, d + F)``. Its files carry no kind of their own: their ``kind`` is the
    training recipe (``emb-mlp``), kept as provenance.
    """

    kind: ClassVar[str] = "salience_head"
    marks_files: ClassVar[bool] = False
    what: ClassVar[str] = "salience head"
    features: ClassVar[tuple[str, ...]] = HAND_FEATURES
    tensor_names: ClassVar[tuple[str, str]] = ("hand_mean", "hand_std")
    retrain: ClassVar[str] = "python -m training.salience.train"

    @classmethod
    def fits_width(cls, width: int) -> bool:
        """An embedding of at least one column before the layout features."""
        return width > len(HAND_FEATURES)

    @property
    def hand_mean(self) -> torch.Tensor:
        """``(F,)`` training mean of each layout feature (:attr:`mean`)."""
        return self.mean

    @property
    def hand_std(self) -> torch.Tensor:
        """``(F,)`` training standard deviation of each layout feature, 1 where constant (:attr:`std`)."""
        return self.std

    @property
    def embedding_dim(self) -> int:
        """Width of the sentence embedding the head was trained on."""
        width = self.weight.shape[0] if self.hidden_weight is None else self.hidden_weight.shape[1]
        return int(width) - len(HAND_FEATURES)

    def logits(self, embeddings: torch.Tensor, hand: torch.Tensor) -> torch.Tensor:
        """Raw scores ``(n,)`` of ``(n, d)`` embeddings and ``(n, F)`` layout features.

        Raises:
            ValueError: The embedding width is not the head's (a head is tied to its CSE).
        """
        if embeddings.ndim != 2 or embeddings.shape[1] != self.embedding_dim or hand.shape != (len(embeddings),
                                                                                              len(HAND_FEATURES)):
            raise ValueError(f"The salience head expects ({len(embeddings)}, {self.embedding_dim}) embeddings and "
                             f"({len(embeddings)}, {len(HAND_FEATURES)}) layout features, got "
                             f"{tuple(embeddings.shape)} and {tuple(hand.shape)}: train a head for this encoder.")
        return self.output(torch.cat([embeddings.float(), self.standardised(hand)], dim=1))


def salience_scores(head: SalienceHead, prompt: Segmented, embeddings: torch.Tensor, *,
                    lead_weight: float) -> torch.Tensor:
    """Each sentence's salience, flat order: ``z(z(head) + lead_weight * z(passage-lead prior))``.

    The outer standardisation gives every prompt's scores the same scale, so an MMR penalty means the same
    thing for every prompt.

    Args:
        head: The checkpoint's salience head.
        prompt: The segmented prompt.
        embeddings: Its ``(n, d)`` CSE sentence embeddings.
        lead_weight: Weight of the passage-lead prior (0: the head alone).
    """
    if len(embeddings) == 0:
        return torch.zeros(0)
    hand, prior = prompt_features(prompt, embeddings)
    with torch.inference_mode():
        raw = head.logits(embeddings, hand)
    return zscore(zscore(raw) + lead_weight * zscore(prior)).float()


SalienceModel = SalienceHead | LeadCorrection
"""What scores a prompt that asks for no particular fact: lead-per-passage plus a learned correction, or an
embedding head blended with the lead prior."""


def model_scores(model: SalienceModel, prompt: Segmented, embeddings: torch.Tensor | None, *,
                 lead_weight: float, written_request: bool = False) -> torch.Tensor:
    """Each sentence's salience, flat order, by either kind of model.

    Args:
        model: A salience model.
        prompt: The segmented prompt.
        embeddings: Its ``(n, d)`` CSE sentence embeddings (an embedding head reads them; a lead correction not:
            ``None`` will do for it).
        lead_weight: An embedding head's blend with the lead prior.
        written_request: The prompt asks in writing for a summary. A lead correction learned from index-time
            labels (:attr:`LeadCorrection.for_summaries` false) then orders by lead-per-passage alone.

    Raises:
        ValueError: ``embeddings`` is ``None`` for an embedding head.
    """
    if isinstance(model, LeadCorrection):
        counts = [count for doc_counts in prompt.counts for count in doc_counts]
        return model.scores(prompt.documents, prompt.spans, counts,
                            enabled=model.for_summaries or not written_request)
    if embeddings is None:
        raise ValueError("The embedding salience head reads the prompt's sentence embeddings; none were given.")
    return salience_scores(model, prompt, embeddings, lead_weight=lead_weight)


@dataclass(frozen=True)
class Salience:
    """A checkpoint's salience models, and which one scores a prompt that asks for no particular fact.

    A prompt that writes no request (a bare document, an index-time row) is scored by the lead correction where
    the checkpoint has one; a prompt that asks in writing for a summary by the embedding head where it has one.
    Either model serves both where it is the only one.

    Attributes:
        head: The embedding salience head (``agnostic.salience_head``), if any.
        lead: The lead correction (``agnostic.lead_correction``), if any.
    """

    head: SalienceHead | None = None
    lead: LeadCorrection | None = None

    @classmethod
    def of(cls, head: SalienceModel | None, lead: LeadCorrection | None = None) -> Salience | None:
        """The bundle of a checkpoint's files (``None`` when it has neither); a lead correction named as the
        salience head serves as the lead correction."""
        if isinstance(head, LeadCorrection) and lead is None:
            head, lead = None, head
        if head is not None and not isinstance(head, SalienceHead):
            raise TypeError(f"agnostic.salience_head must hold a salience head, got {type(head).__name__}.")
        return cls(head, lead) if head is not None or lead is not None else None

    def model_for(self, *, written_request: bool) -> SalienceModel:
        """The model that serves this kind of prompt (the lead correction for a prompt that writes no request, the
        embedding head for one that asks in writing for a summary; either where it is the only one)."""
        first, second = (self.head, self.lead) if written_request else (self.lead, self.head)
        model = first if first is not None else second
        assert model is not None  # of() builds no empty bundle
        return model

    def reads_embeddings(self, *, written_request: bool) -> bool:
        """Whether :meth:`scores` reads the sentence embeddings for this kind of prompt (a lead correction reads
        layout and lexical features only)."""
        return not isinstance(self.model_for(written_request=written_request), LeadCorrection)

    def scores(self, prompt: Segmented, embeddings: torch.Tensor | None, *, lead_weight: float,
               written_request: bool) -> torch.Tensor:
        """Each sentence's salience, flat order, by the model that serves this kind of prompt (``embeddings`` may
        be ``None`` where :meth:`reads_embeddings` is false).

        Raises:
            ValueError: ``embeddings`` is ``None`` and the model reads them.
        """
        return model_scores(self.model_for(written_request=written_request), prompt, embeddings,
                            lead_weight=lead_weight, written_request=written_request)
