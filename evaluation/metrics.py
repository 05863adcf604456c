"""Official answer metrics (LongBench / ZeroSCROLLS conventions) and reader-free compression proxies.

Answer metrics score a reader LLM's prediction against gold answers (max over golds, as LongBench does):

* ``qa_f1``: SQuAD-normalised token F1 (lower-case, no punctuation, no articles).
* ``rouge_l``: ROUGE-L F1 (LCS of lower-cased word tokens); ``rouge_geo``: geometric mean of ROUGE-1/2/L F1
  (ZeroSCROLLS). Pure Python: ``rouge-score``/``rouge`` are not needed.
  :func:`rouge_n_recall` (how much of a reference a compressed prompt still contains) uses the same tokens.
* ``code_sim``: LongBench's edit similarity, ``fuzz.ratio`` of the first non-comment line: the normalised
  InDel similarity ``2*LCS/(|a|+|b|)`` rounded to an integer percent as fuzzywuzzy does.
* ``classification`` / ``count`` / ``retrieval``: LongBench's rules for trec / passage_count / passage_retrieval.
* ``mc_accuracy``: first option letter of the prediction equals the gold letter.

Proxies need no reader: :func:`evidence_recall` and :func:`answer_retention`.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable, Sequence

__all__ = [
    "normalize_answer",
    "normalize_space",
    "qa_f1",
    "rouge_l",
    "rouge_n",
    "rouge_n_recall",
    "rouge_geo",
    "code_sim",
    "levenshtein_similarity",
    "classification_score",
    "count_score",
    "retrieval_score",
    "mc_accuracy",
    "score_prediction",
    "METRICS",
    "FIRST_LINE_ONLY",
    "evidence_recall",
    "answer_retention",
]

_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD/LongBench normalisation: lower, drop punctuation, drop articles, squeeze whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def normalize_space(text: str) -> str:
    """Collapse every whitespace run to one space (joins may turn a newline into a space)."""
    return " ".join(text.split())


def _f1(prediction: Sequence[str], gold: Sequence[str]) -> float:
    common = Counter(prediction) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(prediction)
    recall = same / len(gold)
    return 2 * precision * recall / (precision + recall)


def qa_f1(prediction: str, gold: str) -> float:
    """Token F1 after :func:`normalize_answer`."""
    return _f1(normalize_answer(prediction).split(), normalize_answer(gold).split())


def _rouge_tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _lcs_length(a: Sequence[object], b: Sequence[object]) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for item in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if item == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _prf(overlap: int, n_pred: int, n_gold: int) -> float:
    if overlap == 0 or n_pred == 0 or n_gold == 0:
        return 0.0
    precision = overlap / n_pred
    recall = overlap / n_gold
    return 2 * precision * recall / (precision + recall)


def rouge_l(prediction: str, gold: str) -> float:
    """ROUGE-L F1 (beta = 1) over lower-cased alphanumeric tokens."""
    pred = _rouge_tokens(prediction)
    ref = _rouge_tokens(gold)
    return _prf(_lcs_length(pred, ref), len(pred), len(ref))


def _ngram_counts(text: str, n: int) -> Counter[tuple[str, ...]]:
    """Multiset of the ``n``-grams of :func:`_rouge_tokens` of ``text``."""
    tokens = _rouge_tokens(text)
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def rouge_n(prediction: str, gold: str, n: int) -> float:
    """ROUGE-N F1 over lower-cased alphanumeric tokens."""
    grams_pred = _ngram_counts(prediction, n)
    grams_ref = _ngram_counts(gold, n)
    overlap = sum((grams_pred & grams_ref).values())
    return _prf(overlap, sum(grams_pred.values()), sum(grams_ref.values()))


def rouge_n_recall(candidate: str, reference: str, n: int) -> float:
    """ROUGE-N recall of ``reference`` by ``candidate``: clipped n-gram overlap / n-grams of the reference.

    Same tokens as :func:`rouge_n` (lower-cased alphanumeric runs); each reference n-gram counts at most as
    often as it occurs in the candidate. ``0.0`` when the reference has no n-gram.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    grams_ref = _ngram_counts(reference, n)
    total = sum(grams_ref.values())
    if total == 0:
        return 0.0
    return sum((_ngram_counts(candidate, n) & grams_ref).values()) / total


def rouge_geo(prediction: str, gold: str) -> float:
    """Geometric mean of ROUGE-1, ROUGE-2 and ROUGE-L F1 (ZeroSCROLLS' summary score)."""
    scores = (rouge_n(prediction, gold, 1), rouge_n(prediction, gold, 2), rouge_l(prediction, gold))
    return math.prod(scores) ** (1 / 3)


def _indel_ratio(a: str, b: str) -> float:
    if not a and not b:
        return 1.0
    try:
        from rapidfuzz.distance import Indel  # optional speed-up, same value

        return Indel.normalized_similarity(a, b)
    except ImportError:
        return 2 * _lcs_length(a, b) / (len(a) + len(b))


def code_sim(prediction: str, gold: str) -> float:
    """LongBench ``code_sim_score``: first line without ``` ` ```, ``#`` or ``//``; fuzz.ratio / 100."""
    first = ""
    for line in prediction.lstrip("\n").split("\n"):
        if "`" not in line and "#" not in line and "//" not in line:
            first = line
            break
    return round(100 * _indel_ratio(first, gold)) / 100


def levenshtein_similarity(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(|a|, |b|)`` (normalised edit distance, for reference)."""
    if not a and not b:
        return 1.0
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return 1 - previous[-1] / max(len(a), len(b))


def classification_score(prediction: str, gold: str, all_classes: Sequence[str]) -> float:
    """LongBench's trec rule: 1/#matched classes if the gold class is among those named in the prediction.

    Faithful to the reference code, including that a class which is a strict substring of the gold label is
    dropped, and that the difflib fallback there is unreachable (no class named -> 0).
    """
    matches = [name for name in all_classes if name in prediction]
    matches = [name for name in matches if not (name in gold and name != gold)]
    return 1.0 / len(matches) if gold in matches else 0.0


def count_score(prediction: str, gold: str) -> float:
    """Fraction of the numbers in the prediction that equal the gold count."""
    numbers = re.findall(r"\d+", prediction)
    return sum(number == str(gold) for number in numbers) / len(numbers) if numbers else 0.0


def retrieval_score(prediction: str, gold: str) -> float:
    """Fraction of the numbers in the prediction that equal the gold ``Paragraph N``."""
    found = re.findall(r"Paragraph (\d+)", gold)
    if not found:
        return 0.0
    numbers = re.findall(r"\d+", prediction)
    return sum(number == found[0] for number in numbers) / len(numbers) if numbers else 0.0


def mc_accuracy(prediction: str, gold: str) -> float:
    """1 if the first standalone option letter (A-D, optionally bracketed) equals the gold letter."""
    gold_letter = re.match(r"\s*\(?([A-D])\b", gold)
    pred_letter = re.search(r"\(?\b([A-D])\b", prediction)
    if gold_letter is None or pred_letter is None:
        return 0.0
    return float(gold_letter.group(1) == pred_letter.group(1))


METRICS: dict[str, Callable[..., float]] = {
    "qa_f1": qa_f1,
    "rouge_l": rouge_l,
    "rouge_geo": rouge_geo,
    "code_sim": code_sim,
    "classification": classification_score,
    "count": count_score,
    "retrieval": retrieval_score,
    "mc_accuracy": mc_accuracy,
}

# LongBench's eval.py keeps only the first line of the prediction for these tasks.
FIRST_LINE_ONLY: frozenset[str] = frozenset({"trec", "triviaqa", "samsum"})


def score_prediction(
    metric: str, prediction: str, answers: Sequence[str], *, dataset: str = "", all_classes: Sequence[str] = ()
) -> float | None:
    """Best score of ``prediction`` over the gold ``answers`` (``None`` if the metric is unsupported)."""
    if metric not in METRICS or not answers:
        return None
    if dataset in FIRST_LINE_ONLY:
        prediction = prediction.lstrip("\n").split("\n")[0]
    function = METRICS[metric]
    if metric == "classification":
        return max(function(prediction, gold, all_classes) for gold in answers)
    return max(function(prediction, gold) for gold in answers)


def evidence_recall(compressed: str, supporting: Sequence[str], original: str) -> float | None:
    """Fraction of the gold supporting sentences found verbatim (whitespace-normalised) in ``compressed``.

    Only sentences that occur verbatim in ``original`` count; ``None`` when none does.
    """
    text = normalize_space(compressed)
    source = normalize_space(original)
    gold = [normalize_space(sentence) for sentence in supporting if normalize_space(sentence)]
    gold = [sentence for sentence in gold if sentence in source]
    if not gold:
        return None
    return sum(sentence in text for sentence in gold) / len(gold)


def _retainable(answer: str) -> bool:
    # Option labels ("B") and one-character answers match almost anywhere: they test nothing.
    return len(answer.strip()) > 1 and not re.fullmatch(r"\s*[A-Da-d][.)]?\s*", answer)


def _count(needle: str, haystack: str) -> int:
    return len(re.findall(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", haystack))


def answer_retention(compressed: str, answers: Sequence[str], context: str, scaffold: str = "") -> float | None:
    """1 if some gold answer found in ``context`` still occurs in ``compressed``, else 0.

    Case-insensitive, whole-word matches. ``scaffold`` is the non-context text of the compressed input
    (question + template in the prompt-agnostic setting): an answer only counts as retained when it occurs
    more often in ``compressed`` than in the scaffold, so a question that quotes its answer (multiple-choice
    options) cannot inflate the score. ``None`` when no gold answer occurs in ``context`` at all.
    """
    text = compressed.lower()
    source = context.lower()
    extra = scaffold.lower()
    candidates = [answer.lower().strip() for answer in answers if _retainable(answer)]
    candidates = [answer for answer in candidates if _count(answer, source) > 0]
    if not candidates:
        return None
    return float(any(_count(answer, text) > _count(answer, extra) for answer in candidates))
