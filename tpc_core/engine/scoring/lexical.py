"""Lexical evidence: BM25 of each sentence of a prompt against a question, the prompt's sentences as the corpus.

Pooled sentence vectors blur exact names, numbers and rare words; BM25 counts them. The collection is the
prompt itself (IDF from its own sentences), so nothing is trained and nothing is downloaded. The formula is
Okapi BM25 with ``k1 = 1.5``, ``b = 0.75`` and rank-bm25's floor for negative IDFs (``epsilon`` times the mean
IDF), so scores equal ``rank_bm25.BM25Okapi`` on the same tokens. Pure functions, no model.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["BM25_B", "BM25_EPSILON", "BM25_K1", "bm25_scores", "words"]

BM25_K1 = 1.5
BM25_B = 0.75
BM25_EPSILON = 0.25
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens.

    >>> words("Who wrote 'Dune' in 1965?")
    ['who', 'wrote', 'dune', 'in', '1965']
    """
    return _WORD.findall(text.lower())


@functools.lru_cache(maxsize=4096)
def _bag(sentence: str) -> tuple[Counter[str], int]:
    """A sentence's word counts (a sentence with no word: one unknown token) and their sum. Memoised by text, so
    a document scored again (a warm cached call, another question over the same chunks) is not read again;
    callers never change the counter they get. 4,096 sentences hold the chunks of several retrievals of 20
    chunks."""
    bag = Counter(words(sentence) or ["\0"])
    return bag, sum(bag.values())


def bm25_scores(sentences: Sequence[str], question: str, *, k1: float = BM25_K1, b: float = BM25_B,
                epsilon: float = BM25_EPSILON) -> list[float]:
    """Okapi BM25 of each sentence against ``question``, with the sentences as the whole collection.

    A sentence with no word counts as one unknown token; a question word repeated counts as often as it is
    written (as in rank-bm25). An empty question, or one sharing no word with the sentences, scores all 0.

    >>> scores = bm25_scores(["Dune was written by Frank Herbert.", "It is a novel.", "Sand is everywhere."],
    ...                      "Who wrote Dune?")
    >>> max(range(3), key=scores.__getitem__), scores[1] == scores[2] == 0.0
    (0, True)
    """
    if not sentences:
        return []
    bags, lengths = zip(*map(_bag, sentences))
    n = len(bags)
    average_length = sum(lengths) / n
    frequency: Counter[str] = Counter(itertools.chain.from_iterable(bags))
    # Most terms share a few document frequencies: one log pair per frequency, the same values summed in the
    # same order as term by term.
    by_frequency = {df: math.log(n - df + 0.5) - math.log(df + 0.5) for df in set(frequency.values())}
    floor = epsilon * sum(by_frequency[df] for df in frequency.values()) / len(frequency)
    scores = [0.0] * n
    asked = words(question)
    holding: dict[str, list[int]] = {term: [] for term in asked if term in frequency}  # the sentences with it
    for i, bag in enumerate(bags):
        for term in holding.keys() & bag.keys():
            holding[term].append(i)
    for term in asked:
        if term not in frequency:
            continue
        weight = by_frequency[frequency[term]]
        weight = floor if weight < 0 else weight
        for i in holding[term]:
            tf = bags[i][term]
            length = lengths[i]
            scores[i] += weight * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average_length))
    return scores
