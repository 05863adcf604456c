"""Budgeting, TopK sentence selection and verified assembly: pure functions, no model.

Selection follows Eq. 1 of the paper: keep the highest-scoring sentences, then restore their original
order. The budget is a hard limit: a sentence that does not fit is skipped and smaller, lower-scoring
sentences may still fill the remaining room (greedy knapsack by score).

The budget policy, in the order the engine applies it:

1. :func:`resolve_budget` turns ``target_tokens`` / ``rate`` into a number of tokens of the prompt as sent
   (documents joined by the separator, counted with the caller's counter).
2. :func:`document_budgets` splits it: one budget for all documents (``"global"``), or each document's share
   proportional to its size (``"per_document"``).
3. A picker (:func:`top_k_within_budget`, or ``coverage.mmr_within_budget``) chooses within each budget;
   :func:`allocate` runs it per group.
4. :func:`filter_kept` applies the caller's filters, which only remove: a score floor (``min_score``) and a
   cap on the documents that keep text (``top_n``).
5. :func:`fit_to_budget` joins the kept sentences verbatim (:func:`join_kept`), the documents with the
   separator, re-counts the whole text with the real counter and drops the weakest sentence until it fits:
   joins can change counts at boundaries and a separator may cost tokens of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from tpc_core.engine.selection.fitting import drop_to_fit
from tpc_core.engine.values import CountTokens, Joined, joined_count
from tpc_core.options.checks import BUDGET_SCOPES, validate_budget_args, validate_filter_args
from tpc_core.segmentation import is_turn_marker

__all__ = ["BUDGET_SCOPES", "DEFAULT_RATE", "CountTokens", "Joined", "allocate", "document_budgets", "filter_kept",
           "fit_to_budget", "join_documents", "join_kept", "joined_count", "resolve_budget", "top_k_within_budget",
           "validate_budget_args", "validate_filter_args"]

DEFAULT_RATE = 0.2


def resolve_budget(
    origin_tokens: int,
    *,
    target_tokens: int | None = None,
    rate: float | None = None,
    default_rate: float = DEFAULT_RATE,
) -> int:
    """Turn the user's budget request into a number of tokens.

    Args:
        origin_tokens: Token count of the uncompressed input.
        target_tokens: Absolute budget in tokens (mutually exclusive with ``rate``).
        rate: Fraction of ``origin_tokens`` to keep, in (0, 1].
        default_rate: Rate used when neither is given.

    Returns:
        The budget in tokens (``floor(rate * origin_tokens)`` for a rate).

    Raises:
        ValueError: If both are given, ``target_tokens <= 0`` or ``rate`` is outside (0, 1].
        TypeError: If a value has the wrong type.
    """
    validate_budget_args(target_tokens, rate)
    if target_tokens is not None:
        return int(target_tokens)
    chosen_rate = default_rate if rate is None else float(rate)
    return int(math.floor(chosen_rate * origin_tokens))


def filter_kept(chosen: frozenset[int], documents: Sequence[int], scores: Sequence[float] | None, *,
                min_score: float | None = None, top_n: int | None = None) -> frozenset[int]:
    """Apply the filters to sentences chosen under the budget; they only remove, so the budget still holds.

    Args:
        chosen: Chosen sentences (flat indices).
        documents: The document of each flat sentence.
        scores: Each sentence's score, or ``None`` when nothing was scored (the budget covered everything).
        min_score: Chosen sentences scoring below this are removed (ignored when nothing was scored).
        top_n: At most this many documents keep sentences: those whose best sentence (chosen or not) scores
            highest, ties to the earlier; when nothing was scored, the first ``top_n`` in input order (a
            retriever's ranking).

    Returns:
        The chosen sentences that remain.

    >>> sorted(filter_kept(frozenset({0, 1, 2, 3}), [0, 0, 1, 2], [0.9, 0.1, 0.5, 0.7], min_score=0.2, top_n=2))
    [0, 3]
    """
    validate_filter_args(min_score, top_n)
    kept = set(chosen)
    if min_score is not None and scores is not None:
        kept = {k for k in kept if scores[k] >= min_score}
    if top_n is not None:
        candidates = sorted({documents[k] for k in kept})
        if scores is not None:
            best: dict[int, float] = {}
            for k, d in enumerate(documents):
                best[d] = max(best.get(d, float("-inf")), scores[k])
            candidates.sort(key=lambda d: (-best[d], d))
        allowed = set(candidates[:top_n])
        kept = {k for k in kept if documents[k] in allowed}
    return frozenset(kept)


def top_k_within_budget(
    scores: Sequence[float],
    token_counts: Sequence[int],
    budget: int,
    *,
    force_keep: Sequence[bool] | None = None,
    separator_tokens: int = 0,
    context: Mapping[int, Sequence[int]] | None = None,
) -> list[int]:
    """Pick the highest-scoring sentences whose total size stays within ``budget``.

    Forced sentences are taken first (in original order) as long as they fit; then the rest by descending
    score (ties broken by position). A sentence larger than the remaining room is skipped, never
    truncated. A context sentence (a section's heading) is never taken on its own: it fills only the room the
    sentences left, for the taken sentences it is context for (:func:`with_context`), so it never displaces one.

    Args:
        scores: One relevance score per sentence.
        token_counts: One token count per sentence.
        budget: Maximum total tokens.
        force_keep: Optional mask of sentences to take first (e.g. matched by a regex).
        separator_tokens: Tokens charged for each kept sentence after the first (joiners).
        context: Each sentence's context sentences, in order (its section's headings, the outermost first); a
            forced sentence is never context.

    Returns:
        Indices of the kept sentences, ascending (original order).

    >>> top_k_within_budget([0.9, 0.1, 0.5, 0.2], [1, 2, 3, 1], 5, context={1: [0], 2: [0], 3: [0]})
    [0, 2, 3]
    """
    if len(scores) != len(token_counts):
        raise ValueError(f"{len(scores)} scores but {len(token_counts)} token counts.")
    if force_keep is not None and len(force_keep) != len(scores):
        raise ValueError(f"force_keep has {len(force_keep)} entries for {len(scores)} sentences.")
    forced = [i for i in range(len(scores)) if force_keep is not None and force_keep[i]]
    context = context or {}
    no_standing = set(forced).union(*context.values())
    ranked = sorted((i for i in range(len(scores)) if i not in no_standing), key=lambda i: (-scores[i], i))
    kept: list[int] = []
    used = 0
    for index in [*forced, *ranked]:
        cost = token_counts[index] + (separator_tokens if kept else 0)
        if used + cost <= budget:
            kept.append(index)
            used += cost
    return sorted(with_context(kept, token_counts, budget - used, context, separator_tokens))


def with_context(taken: Sequence[int], token_counts: Sequence[int], room: int,
                 context: Mapping[int, Sequence[int]] | None, separator_tokens: int = 0) -> list[int]:
    """``taken`` (in the order it was taken), then the context sentences of its sentences that fit in the ``room``
    the sentences left, the context of the first taken sentence first: context never displaces a sentence.

    >>> with_context([2, 3], [2, 1, 5, 5], 2, {2: [1], 3: [0]})
    [2, 3, 1]
    """
    kept = list(taken)
    held = set(kept)
    for index in taken:
        for sentence in (context or {}).get(index, ()):
            cost = token_counts[sentence] + (separator_tokens if kept else 0)
            if sentence not in held and cost <= room:
                kept.append(sentence)
                held.add(sentence)
                room -= cost
    return kept


def document_budgets(budget: int, document_tokens: Sequence[int], origin_tokens: int, scope: str) -> list[int]:
    """The budget of each selection group: ``[budget]`` for ``"global"``, else one share per document.

    A document's share is ``budget * its tokens // origin_tokens`` (floored, so the shares never sum to more
    than the budget; the separators between documents come out of the rounding and the final recount).

    Raises:
        ValueError: An unknown ``scope``.
    """
    if scope == "global":
        return [budget]
    if scope != "per_document":
        raise ValueError(f"budget_scope must be one of {BUDGET_SCOPES}, got {scope!r}.")
    total = max(origin_tokens, 1)
    return [budget * tokens // total for tokens in document_tokens]


def allocate(groups: Sequence[int], budgets: Sequence[int],
             pick: Callable[[list[int], int], Sequence[int]]) -> frozenset[int]:
    """Run ``pick(members, budget)`` for every group and return the union of what it keeps.

    Args:
        groups: The group of each sentence (all 0 for a global budget, the document index otherwise).
        budgets: One budget per group.
        pick: Chooses among ``members`` (indices into the flat sentence list) within ``budget``; returns
            positions into ``members``.
    """
    chosen: set[int] = set()
    for group, budget in enumerate(budgets):
        members = [k for k, g in enumerate(groups) if g == group]
        chosen.update(members[j] for j in pick(members, budget))
    return frozenset(chosen)


def join_kept(document: str, spans: Sequence[tuple[int, int]], kept: Sequence[int]) -> str:
    """Kept sentences verbatim and in order; between two kept sentences the whitespace that originally followed
    the first (up to the next sentence of the document; a single space where that gap held text), or, before a
    chat-template marker (:func:`tpc_core.segmentation.is_turn_marker`), the whitespace that preceded the marker,
    so a ``User:`` label still starts its line."""
    pieces: list[str] = []
    for position, index in enumerate(kept):
        start, end = spans[index]
        pieces.append(document[start:end])
        if position + 1 < len(kept):
            pieces.append(_gap(document, spans, index, kept[position + 1]))
    return "".join(pieces)


def _gap(document: str, spans: Sequence[tuple[int, int]], index: int, following: int) -> str:
    """The whitespace :func:`join_kept` puts between kept sentences ``index`` and ``following``."""
    if following > index + 1 and is_turn_marker(document[spans[following][0]:spans[following][1]]):
        gap = document[spans[following - 1][1]:spans[following][0]]
    else:
        gap = document[spans[index][1]:spans[index + 1][0]]
    return gap if gap.strip() == "" else " "


def _kept_spans(document: str, spans: Sequence[tuple[int, int]], kept: Sequence[int]) -> list[tuple[int, int]]:
    """Where each kept sentence sits in :func:`join_kept`'s text."""
    placed = []
    position = 0
    for order, index in enumerate(kept):
        start, end = spans[index]
        placed.append((position, position + end - start))
        position += end - start
        if order + 1 < len(kept):
            position += len(_gap(document, spans, index, kept[order + 1]))
    return placed


def join_documents(documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                   kept: Sequence[Sequence[int]], counter: CountTokens, separator: str,
                   counts: Sequence[Sequence[int]] | None = None) -> Joined:
    """Join each document's kept sentences (:func:`join_kept`) and count them, separators included.

    With the sentences' ``counts``, a text is counted from its kept sentences' where the counter can tell it
    exactly (``TokenCounter.count_from_sentences``: the default counter); otherwise it is read again.
    """
    texts = [join_kept(doc, doc_spans, doc_kept) for doc, doc_spans, doc_kept in zip(documents, spans, kept)]
    from_sentences = getattr(counter, "count_from_sentences", None)
    if counts is None or from_sentences is None:
        return Joined.count(kept, texts, counter, separator)
    tokens = [from_sentences(text, _kept_spans(doc, doc_spans, doc_kept), [doc_counts[i] for i in doc_kept])
              if text else 0
              for text, doc, doc_spans, doc_kept, doc_counts in zip(texts, documents, spans, kept, counts)]
    missing = [text for text, count in zip(texts, tokens) if count is None]
    fresh = iter(counter.count_many(missing) if missing else [])
    return Joined.count(kept, texts, counter, separator, [next(fresh) if n is None else n for n in tokens])


def fit_to_budget(documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], chosen: Iterable[int],
                  priority: Sequence[tuple[bool, float]], budget: int, counter: CountTokens, separator: str,
                  counts: Sequence[Sequence[int]] | None = None, protected: frozenset[int] = frozenset(),
                  serves: Mapping[int, Collection[int]] | None = None) -> Joined:
    """Assemble the chosen sentences and drop the weakest until the real count of the whole prompt fits (the one
    budget loop, :func:`tpc_core.engine.selection.fitting.drop_to_fit`, over the documents joined by ``separator``).

    Args:
        documents: The input documents.
        spans: Sentence spans of each document.
        chosen: Kept sentences as indices into the flat list (document by document, in order).
        priority: For each flat sentence ``(forced, score)``; the lowest goes first (then the later one).
        budget: The prompt's budget.
        counter: The caller's counter.
        separator: Joins the compressed documents.
        counts: Each sentence's count by ``counter``, where known (see :func:`join_documents`).

        protected: Chosen sentences never dropped (the user's request): where they alone exceed ``budget``, the
            assembly keeps them and is over it.
        serves: Context sentences (a section's heading) and the sentences each is context for: kept only while one
            of those is, and dropped first while the prompt is over ``budget``.

    Returns:
        The assembly, whose ``total`` is at most ``budget``, or only the protected sentences when they alone
        exceed it (or nothing is kept).
    """
    prompt = _JoinedDocuments(documents, spans, counter, separator, counts)
    kept: list[list[int]] = [[] for _ in documents]
    for k in sorted(set(chosen)):
        kept[prompt.flat[k][0]].append(k)
    fitted = drop_to_fit(kept, budget, prompt.count, total=prompt.total,
                         weakest=lambda k: (priority[k][0], priority[k][1], -k),
                         pinned=[protected.intersection(part) for part in kept], serves=serves)
    return Joined(tuple(tuple(prompt.flat[k][1] for k in part) for part in fitted.kept),
                  tuple(prompt.text(d, part) for d, part in enumerate(fitted.kept)), fitted.counts, fitted.total)


class _JoinedDocuments:
    """A prompt's documents as :func:`fit_to_budget`'s parts: each document's text and count from its kept flat
    sentences, and the count of the non-empty texts joined by the separator."""

    def __init__(self, documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], counter: CountTokens,
                 separator: str, counts: Sequence[Sequence[int]] | None) -> None:
        self.documents = documents
        self.spans = spans
        self.counter = counter
        self.separator = separator
        self.sentence_counts = counts
        self.flat = [(d, i) for d, doc_spans in enumerate(spans) for i in range(len(doc_spans))]
        self._texts: dict[tuple[int, tuple[int, ...]], str] = {}

    def text(self, document: int, kept: Sequence[int]) -> str:
        """Document ``document`` keeping the flat sentences ``kept`` (:func:`join_kept`)."""
        key = (document, tuple(kept))
        if key not in self._texts:
            self._texts[key] = join_kept(self.documents[document], self.spans[document],
                                         [self.flat[k][1] for k in kept])
        return self._texts[key]

    def count(self, document: int, kept: Sequence[int]) -> int:
        """That text's count: from its sentences' counts where the counter can tell it exactly, else read."""
        text = self.text(document, kept)
        if not text:
            return 0
        from_sentences = getattr(self.counter, "count_from_sentences", None)
        if self.sentence_counts is not None and from_sentences is not None:
            indices = [self.flat[k][1] for k in kept]
            known = from_sentences(text, _kept_spans(self.documents[document], self.spans[document], indices),
                                   [self.sentence_counts[document][i] for i in indices])
            if known is not None:
                return known
        return self.counter.count_many([text])[0]

    def total(self, counts: Sequence[int], kept: Sequence[Sequence[int]]) -> int:
        """The count of the non-empty texts joined by the separator (:func:`joined_count`)."""
        texts = [self.text(d, part) for d, part in enumerate(kept)]
        return joined_count(self.counter, [text for text in texts if text],
                            [n for n, text in zip(counts, texts) if text], self.separator)
