"""Lead-per-passage, and a learned correction to it, for prompts that ask for no particular fact.

The first sentences of each passage (a Wikipedia paragraph, a news article, a section) carry most of what people
later ask about or summarise. :func:`lead_order` is the one definition of that rule in the project: every
passage's first sentence, then every passage's second, and so on (the benchmark's ``lead-per-passage`` baseline
uses it). :class:`LeadCorrection` scores a sentence as ``correction(features) - tie * rank``: the correction is a
small model over :func:`layout_features` (where the sentence sits in its passage, its length and shape, how
central its words are to its passage); with the correction at zero the order is exactly lead-per-passage, so the
model starts from the rule and learns only what to add to it.

Pure functions plus one small frozen model; no encoder runs here.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from tpc_core.engine.scoring.head import ScoringHead

__all__ = ["LAYOUT_FEATURES", "PASSAGE_MARKER", "LeadCorrection", "PassageLayout", "layout_features", "lead_order",
           "passage_layout"]

# Numbered passage markers ("Passage 3:", "Document [2] (Title: ...)", "Article 1"): a multi-passage prompt's layout.
PASSAGE_MARKER = re.compile(r"^[ \t]*(?:Passage|Document|Article|Doc|Source|Text|Story)\s*\[?\d+\]?",
                            re.IGNORECASE | re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")
_NUMBER = re.compile(r"\d")
_TERMINAL = re.compile(r"[.!?][\"')\]]*$")
_ROUND_BUCKETS = (0, 1, 2, 3, 4, 6, 10)  # a sentence's round falls in [b_k, b_k+1): 0, 1, 2, 3, 4-5, 6-9, 10+
_STOP = frozenset(
    "a an and are as at be by for from had has have he her his in is it its of on or she that the their they this "
    "to was were which who with".split())

LAYOUT_FEATURES: tuple[str, ...] = (
    *(f"round_{start}" for start in _ROUND_BUCKETS),  # one-hot: the sentence's place in its passage
    "outside_passage",        # 1.0 for a bare marker line or a template's text before the first marker
    "from_passage_end",       # min(sentences after it in its passage, 10) / 10
    "relative_in_passage",    # round / sentences of the passage
    "log_passage_sentences",  # log1p(sentences of its passage)
    "passage_index",          # min(passage index, 20) / 20
    "relative_passage",       # passage index / passages of the prompt
    "log_passages",           # log1p(passages of the prompt)
    "log_tokens",             # log1p(tokens of the sentence)
    "relative_tokens",        # tokens / mean sentence tokens of the prompt
    "short",                  # fewer than 6 tokens
    "no_terminal",            # does not end with . ! ? (a title, a heading, a cut-off fragment)
    "question",               # ends with ?
    "starts_lower",           # first letter lower-case (a passage cut mid-sentence)
    "digit_share",            # characters that are digits / characters
    "has_year",               # a four-digit year
    "capital_share",          # capitalised words after the first / words
    "stop_share",             # function words / words
    "log_capitalised",        # log1p(capitalised words after the first): names
    "log_numbers",            # log1p(words holding a digit)
    "log_content_words",      # log1p(words that are not function words)
    "log_tokens_before",      # log1p(tokens of its passage before it)
    "passage_centrality",     # tf-idf cosine of its words to the rest of its passage
    "prompt_centrality",      # tf-idf cosine of its words to the whole prompt
)
"""Names of the correction's input columns, in order (written into every correction file)."""


@dataclass(frozen=True)
class PassageLayout:
    """Where each sentence of a prompt sits, flat order.

    Attributes:
        passage: Its passage, numbered across the prompt (``None``: a bare marker line, or a template's text before
            the first marker).
        round: Its place within its passage (0 = first); 0 where ``passage`` is ``None``.
        size: Sentences of its passage (0 where ``passage`` is ``None``).
        passages: Passages in the prompt.
    """

    passage: tuple[int | None, ...]
    round: tuple[int, ...]
    size: tuple[int, ...]
    passages: int


def _document_passages(document: str, spans: Sequence[tuple[int, int]]) -> list[int | None]:
    """Each sentence's passage within ``document``: numbered markers where it has them, else blank-line blocks."""
    markers = [match.start() for match in PASSAGE_MARKER.finditer(document)]
    starts = markers or [0] + [m.end() for m in _BLANK_LINE.finditer(document) if m.end() < len(document)]
    passages: list[int | None] = []
    for start, end in spans:
        passage = bisect_right(starts, start) - 1
        bare_marker = bool(markers) and PASSAGE_MARKER.match(document[start:end]) is not None and \
            len(document[start:end].split()) <= 6
        passages.append(None if passage < 0 or bare_marker else passage)
    return passages


def passage_layout(documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]) -> PassageLayout:
    """The passages of a prompt: each document split at its numbered markers, else at its blank lines.

    >>> passage_layout(["A. B.\\n\\nC."], [[(0, 2), (3, 5), (7, 9)]])
    PassageLayout(passage=(0, 0, 1), round=(0, 1, 0), size=(2, 2, 1), passages=2)
    """
    passage: list[int | None] = []
    offset = 0
    for document, doc_spans in zip(documents, spans):
        local = _document_passages(document, list(doc_spans))
        passage.extend(None if p is None else offset + p for p in local)
        offset += 1 + max((p for p in local if p is not None), default=-1)
    sizes = Counter(p for p in passage if p is not None)
    rounds = []
    seen = Counter[int]()
    for p in passage:
        rounds.append(seen[p] if p is not None else 0)
        if p is not None:
            seen[p] += 1
    return PassageLayout(tuple(passage), tuple(rounds), tuple(sizes[p] if p is not None else 0 for p in passage),
                         len(sizes))


def lead_order(documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], *,
               layout: PassageLayout | None = None) -> torch.Tensor:
    """Lead-per-passage as scores, flat order: every passage's 1st sentence first, then every 2nd, ...

    A sentence's score is minus its place in that round-robin order (between passages, the earlier passage
    first); bare marker lines and a template's text before the first marker all score one place past the last
    (selection then takes them in their order). ``layout``: the prompt's :func:`passage_layout`, where the caller
    already has it.

    >>> lead_order(["A. B.\\n\\nC."], [[(0, 2), (3, 5), (7, 9)]]).tolist()
    [-0.0, -2.0, -1.0]
    """
    layout = layout if layout is not None else passage_layout(documents, spans)
    inside = [k for k, p in enumerate(layout.passage) if p is not None]
    order = sorted(inside, key=lambda k: (layout.round[k], layout.passage[k], k))
    scores = torch.full((len(layout.passage),), -float(len(order)), dtype=torch.float32)
    for position, k in enumerate(order):
        scores[k] = -float(position)
    return scores


def _tfidf_centrality(words: Sequence[Counter[str]], groups: Sequence[Sequence[int]]) -> list[float]:
    """Each sentence's tf-idf cosine to the other sentences of its group (idf over all sentences).

    The rest of a group is its total minus the sentence, so each cosine costs the sentence's own words:
    ``rest . w = total . w - w . w`` and ``|rest|^2 = |total|^2 - 2 total . w + |w|^2``.
    """
    n = len(words)
    frequency = Counter(word for bag in words for word in bag)
    weight = {word: (math.log((1 + n) / (1 + df)) + 1.0) ** 2 for word, df in frequency.items()}  # idf squared
    result = [0.0] * n
    for members in groups:
        total: Counter[str] = Counter()
        for k in members:
            total.update(words[k])
        total_norm = sum(count * count * weight[word] for word, count in total.items())
        for k in members:
            own = sum(count * count * weight[word] for word, count in words[k].items())
            shared = sum(count * total[word] * weight[word] for word, count in words[k].items())
            dot = shared - own
            rest = total_norm - 2 * shared + own
            if dot > 1e-12 and own > 0 and rest > 1e-12:
                result[k] = dot / math.sqrt(own * rest)
    return result


def layout_features(documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                    counts: Sequence[int], *, layout: PassageLayout | None = None) -> torch.Tensor:
    """The :data:`LAYOUT_FEATURES` of a prompt's sentences, shape ``(n, len(LAYOUT_FEATURES))``, flat order.

    Args:
        documents: The prompt's documents.
        spans: Each document's sentence spans.
        counts: Tokens of each sentence, flat order.
        layout: The prompt's :func:`passage_layout`, where the caller already has it.

    Raises:
        ValueError: ``counts`` does not hold one count per sentence.
    """
    sentences = [document[s:e] for document, doc_spans in zip(documents, spans) for s, e in doc_spans]
    n = len(sentences)
    if len(counts) != n:
        raise ValueError(f"{len(counts)} token counts for {n} sentences")
    if n == 0:
        return torch.zeros((0, len(LAYOUT_FEATURES)))
    layout = layout if layout is not None else passage_layout(documents, spans)
    words = [Counter(w.lower() for w in _WORD.findall(sentence)) for sentence in sentences]
    content = [Counter({w: c for w, c in bag.items() if w not in _STOP}) for bag in words]
    members: dict[int | None, list[int]] = {}
    for k, p in enumerate(layout.passage):
        members.setdefault(p, []).append(k)
    in_passage = _tfidf_centrality(content, list(members.values()))
    in_prompt = _tfidf_centrality(content, [list(range(n))])
    mean_tokens = max(sum(counts) / n, 1.0)
    passages = max(layout.passages, 1)
    before = [0] * n
    seen_tokens = Counter[int | None]()
    for k, p in enumerate(layout.passage):
        before[k] = seen_tokens[p]
        seen_tokens[p] += counts[k]
    rows = []
    for k, sentence in enumerate(sentences):
        p = layout.passage[k]
        r = layout.round[k]
        size = layout.size[k]
        tokens = _WORD.findall(sentence)
        rounds = [0.0] * len(_ROUND_BUCKETS)
        if p is not None:
            rounds[bisect_right(_ROUND_BUCKETS, r) - 1] = 1.0
        stripped = sentence.strip()
        letters = [c for c in stripped if c.isalpha()]
        rows.append([
            *rounds,
            float(p is None),
            min(size - 1 - r, 10) / 10 if p is not None else 0.0,
            r / size if p is not None else 0.0,
            math.log1p(size),
            min(p, 20) / 20 if p is not None else 0.0,
            p / passages if p is not None else 0.0,
            math.log1p(layout.passages),
            math.log1p(counts[k]),
            counts[k] / mean_tokens,
            float(counts[k] < 6),
            float(_TERMINAL.search(stripped) is None),
            float(stripped.endswith("?")),
            float(bool(letters) and letters[0].islower()),
            len(_NUMBER.findall(stripped)) / max(len(stripped), 1),
            float(_YEAR.search(stripped) is not None),
            sum(w[0].isupper() for w in tokens[1:]) / max(len(tokens), 1),
            sum(w.lower() in _STOP for w in tokens) / max(len(tokens), 1),
            math.log1p(sum(w[0].isupper() for w in tokens[1:])),
            math.log1p(sum(any(c.isdigit() for c in w) for w in tokens)),
            math.log1p(sum(w.lower() not in _STOP for w in tokens)),
            math.log1p(before[k]),
            in_passage[k],
            in_prompt[k],
        ])
    return torch.tensor(rows, dtype=torch.float32)


@dataclass(frozen=True)
class LeadCorrection(ScoringHead):
    """``-round + correction(features)``: lead-per-passage plus what a small model learned to add.

    The correction is linear in the standardised :data:`LAYOUT_FEATURES`, or one GELU hidden layer, in units of
    rounds: a correction of +1 moves a sentence one round earlier. With the correction at zero everywhere
    (:meth:`zero`, or ``enabled=False`` in :meth:`scores`) sentences are ordered exactly as :func:`lead_order`.
    Weights, file and checks are :class:`tpc_core.engine.scoring.head.ScoringHead`'s (``mean`` and ``std`` of
    each feature; ``weight`` is ``(F,)`` for a linear correction).

    Attributes:
        for_summaries: Whether it also orders prompts that ask in writing for a summary (it was trained for them);
            otherwise those are ordered by lead-per-passage alone and it serves prompts that ask nothing.
    """

    for_summaries: bool = False

    kind: ClassVar[str] = "lead_correction"
    what: ClassVar[str] = "lead correction"
    features: ClassVar[tuple[str, ...]] = LAYOUT_FEATURES
    config_keys: ClassVar[tuple[str, ...]] = ("for_summaries",)
    retrain: ClassVar[str] = "python -m training.salience.lead"

    @classmethod
    def zero(cls) -> LeadCorrection:
        """A correction of zero everywhere: lead-per-passage itself."""
        width = len(LAYOUT_FEATURES)
        return cls(torch.zeros(width), 0.0, torch.zeros(width), torch.ones(width))

    def correction(self, features: torch.Tensor) -> torch.Tensor:
        """The correction ``(n,)`` of ``(n, F)`` layout features.

        Raises:
            ValueError: The features are not ``(n, len(LAYOUT_FEATURES))``.
        """
        if features.ndim != 2 or features.shape[1] != len(LAYOUT_FEATURES):
            raise ValueError(f"The lead correction expects (n, {len(LAYOUT_FEATURES)}) layout features, got "
                             f"{tuple(features.shape)}.")
        return self.output(self.standardised(features))

    def scores(self, documents: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]], counts: Sequence[int],
               *, enabled: bool = True) -> torch.Tensor:
        """Each sentence's score (float64), flat order: ``-round + correction - tie * lead rank``.

        ``round`` is the sentence's place in its passage (text outside every passage counts as one round past the
        last); ``tie`` is too small to outweigh either, so it orders only sentences of one round in different
        passages, as :func:`lead_order` does. ``enabled=False`` drops the correction: the order is then exactly
        :func:`lead_order`'s.
        """
        layout = passage_layout(documents, spans)
        lead = lead_order(documents, spans, layout=layout).double()
        if len(lead) == 0:
            return lead
        last = max(layout.round, default=0) + 1
        base = torch.tensor([-float(r) if p is not None else -float(last)
                             for p, r in zip(layout.passage, layout.round)], dtype=torch.float64)
        base = base + lead / (len(lead) + 1) * 1e-6  # in (-1e-6, 0]: breaks ties as lead_order does
        if not enabled:
            return base
        with torch.inference_mode():
            return base + self.correction(layout_features(documents, spans, counts, layout=layout)).double()
