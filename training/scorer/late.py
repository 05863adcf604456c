"""Late interaction (ColBERT-style MaxSim) over the CSE's contextual token states.

The context pass is the one :meth:`tpc_core.engine.scoring.cse.ContextSentenceEncoder.encode_contexts` runs (the same
windows from ``context_windows``, the same owner window per sentence, the same forward);
:func:`encode_contexts_with_tokens` returns each sentence's pooled vector (identical to ``encode_contexts``) **and**
its own tokens' last hidden states from that window.
The question is encoded alone (:func:`question_token_states`), so the context pass stays question-free.

MaxSim of a sentence: mean over the question's tokens of the best cosine with any of the sentence's tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from tpc_core.engine.scoring.cse import ContextSentenceEncoder, pool_sentence
from training.scorer.lexical import STOPWORDS

__all__ = ["content_token_mask", "encode_contexts_with_tokens", "maxsim", "question_token_states"]


def encode_contexts_with_tokens(encoder: ContextSentenceEncoder, contexts: Sequence[Sequence[Sequence[int]]]
                                ) -> list[tuple[torch.Tensor, list[torch.Tensor]]]:
    """Per context: the L2-normalised pooled sentence embeddings ``(n, d)`` (as ``encode_contexts``) and each
    sentence's token states ``(n_tokens_i, d)`` (raw last hidden states of its owner window, unnormalised)."""
    jobs = encoder.context_windows(contexts)
    size = encoder.model.config.hidden_size
    pooled = [torch.zeros((len(ids), size)) for ids in contexts]
    tokens: list[list[torch.Tensor]] = [[torch.zeros((0, size))] * len(ids) for ids in contexts]
    jobs.sort(key=lambda job: len(job[1].input_ids))
    for first in range(0, len(jobs), encoder.config.batch_size):
        batch = jobs[first: first + encoder.config.batch_size]
        hidden = encoder.forward([window.input_ids for _, window, _ in batch])
        for row, (context_index, window, wanted) in enumerate(batch):
            wanted_set = set(wanted)
            for slot in window.slots:
                if slot.sentence in wanted_set:
                    pooled[context_index][slot.sentence] = pool_sentence(
                        hidden[row], slot.start, slot.end, slot.marker, encoder.config.pooling).cpu()
                    tokens[context_index][slot.sentence] = hidden[row, slot.start: max(slot.end, slot.start + 1)].cpu()
    return [(F.normalize(matrix, dim=-1) if len(matrix) else matrix, states)
            for matrix, states in zip(pooled, tokens)]


def question_token_states(encoder: ContextSentenceEncoder, questions: Sequence[str]
                          ) -> list[tuple[torch.Tensor, list[int]]]:
    """Per question: its content-token states ``(n_q, d)`` (frame tokens and markers dropped; all windows of a
    long question concatenated) and the token ids they belong to."""
    out = []
    prefix = len(encoder.prefix)
    suffix = len(encoder.suffix)
    marker = 0 if encoder.question_marker is None else 1
    for windows in encoder.question_windows(questions):
        hidden = encoder.forward(windows)
        states = []
        ids = []
        for row, window in enumerate(windows):
            end = len(window) - suffix - marker
            states.append(hidden[row, prefix:end].cpu())
            ids.extend(window[prefix:end])
        out.append((torch.cat(states) if states else torch.zeros((0, hidden.shape[-1])), ids))
    return out


def content_token_mask(tokenizer: object, ids: Sequence[int]) -> torch.Tensor:
    """True for question tokens worth matching: not a stopword, not pure punctuation (WordPiece pieces of a
    longer word are kept). Falls back to all True when nothing would be left."""
    tokens = tokenizer.convert_ids_to_tokens(list(ids))  # type: ignore[attr-defined]
    keep = []
    for token in tokens:
        bare = token[2:] if token.startswith("##") else token
        keep.append(token.startswith("##") or (any(ch.isalnum() for ch in bare) and bare.lower() not in STOPWORDS))
    mask = torch.tensor(keep, dtype=torch.bool)
    return mask if mask.any() else torch.ones(len(keep), dtype=torch.bool)


def maxsim(question: torch.Tensor, sentences: Sequence[torch.Tensor],
           projection: torch.nn.Module | None = None) -> torch.Tensor:
    """MaxSim of each sentence: ``mean_i max_j cos(q_i, s_j)`` over question tokens i and sentence tokens j.

    Args:
        question: Question token states ``(n_q, d)`` (raw; normalised here).
        sentences: Each sentence's token states ``(n_j, d)`` (raw; an empty sentence scores 0).
        projection: Optional map applied to both sides before normalising (a trained late-interaction head).

    Returns:
        ``(n_sentences,)`` float tensor.
    """
    if not sentences:
        return torch.zeros(0)
    if question.numel() == 0:
        return torch.zeros(len(sentences))
    lengths = torch.tensor([len(s) for s in sentences])
    tokens = torch.cat(list(sentences)).float()
    q = question.float()
    if projection is not None:
        tokens = projection(tokens)
        q = projection(q)
    tokens = F.normalize(tokens, dim=-1)
    q = F.normalize(q, dim=-1)
    sim = q @ tokens.T  # (n_q, n_tokens): the one extra matmul
    owner = torch.repeat_interleave(torch.arange(len(sentences)), lengths)
    best = torch.full((q.shape[0], len(sentences)), float("-inf"))
    best = best.scatter_reduce(1, owner.expand(q.shape[0], -1), sim, reduce="amax", include_self=True)
    best = torch.where(torch.isinf(best), torch.zeros_like(best), best)
    return best.mean(dim=0)
