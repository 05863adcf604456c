"""Lexical scores of a prompt's sentences against a question: BM25 and rare-term exact match.

Both use only the prompt's own sentences as the collection (IDF from the prompt), so they need no corpus and
no training. BM25 is the engine's own (:func:`tpc_core.engine.scoring.lexical.bm25_scores`, equal to rank-bm25 on
the same ``\\w+`` lower-cased tokens, so to the ``bm25`` benchmark method).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tpc_core.engine.scoring.lexical import bm25_scores, words

__all__ = ["STOPWORDS", "bm25_scores", "content_terms", "rare_match_scores", "words"]

STOPWORDS: frozenset[str] = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both but
by can could did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
there these they this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves s t don didn doesn isn wasn aren weren won shall may might
must also whose many much one ones does did name named called according following
""".split())


def content_terms(question: str) -> list[str]:
    """The question's distinct non-stopword terms, in order of first appearance."""
    return list(dict.fromkeys(term for term in words(question) if term not in STOPWORDS))


def rare_match_scores(sentences: Sequence[str], question: str) -> list[float]:
    """Share of the question's IDF mass whose terms a sentence contains verbatim.

    Terms are the question's non-stopword words; each weighs ``log((N + 1) / (df + 0.5))`` over the prompt's N
    sentences, so a name or number that occurs in few sentences counts most, and one found nowhere counts
    nothing. No length normalisation (unlike BM25), no term frequency. All zeros when no term occurs.
    """
    if not sentences:
        return []
    terms = content_terms(question)
    bags = [set(words(sentence)) for sentence in sentences]
    n = len(bags)
    weights = {}
    for term in terms:
        df = sum(term in bag for bag in bags)
        if df:
            weights[term] = math.log((n + 1) / (df + 0.5))
    total = sum(weights.values())
    if total <= 0:
        return [0.0] * n
    return [sum(w for term, w in weights.items() if term in bag) / total for bag in bags]
