"""MCQR data set (paper Section 3.4.1): multi-hop questions with positive and negative sentences.

The text's sentences are numbered ``[[1]] ... [[n]]`` (Prompt 3); the LLM answers in free text with one or
more "Final question: ..." / "Necessary sentences: [[i]], [[j]]" blocks. :func:`parse_multihop_answer`
reads those blocks robustly (markdown, ``[i]``, ``sentences 1 and 3``, ranges, trailing remarks) and
rejects malformed ones with a reason. Positives are the necessary sentences; negatives are sentences cited
nowhere in the answer, sampled up to ``max_negatives``.

Output record (indices are 0-based into ``sentences``):
``{"id", "question", "sentences": [...], "positives": [...], "negatives": [...], "source"}``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["MultiHopItem", "MultiHopSample", "ParsedAnswer", "parse_mcqr_answer", "parse_multihop_answer"]

_FINAL = re.compile(
    r"(?:\bfinal\s+(?:multi[\s-]*hop\s+)?question|^[ \t>*#\-]*(?:\d+[.)]\s*)?multi[\s-]*hop\s+question)"
    r"(?:\s*\d+)?(?:\s*[:\-–—]|\s+is\s*[:\-–—]?)",
    re.IGNORECASE | re.MULTILINE,
)
_NECESSARY = re.compile(
    r"\b(?:(?:necessary|supporting|required|relevant|needed|evidence)\s+sentences?"
    r"|sentences?\s+(?:needed|required|necessary|used))\b"
    r"(?:\s+(?:numbers?|indices|ids))?(?:\s*\([^)\n]*\))?\s*(?:[:\-–—=]|are\b)?",
    re.IGNORECASE,
)
_CUT_QUESTION = re.compile(
    r"(?:\b(?:necessary|supporting|required|relevant)\s+sentences?\b|\banswer\s*:|\(\s*(?:sentences?|\[))",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\[\[\s*(\d+)\s*\]\]|\[\s*(\d+)\s*\]")
_RANGE = re.compile(r"(\d+)\s*(?:-|–|to)\s*(\d+)")
_LEADING_LIST = re.compile(
    r"^\s*(?:sentences?\s*)?#?\s*(\d+(?:\s*(?:,|;|&|\band\b|-|–|\bto\b)\s*(?:(?:sentences?\s*)?#?\s*)\d+)*)",
    re.IGNORECASE,
)
_LIST_CONTINUATION = re.compile(r"^\s*(?:[-*•]\s*)?(?:\[\[?\s*\d+|sentences?\s+\d+|\d+\b)", re.IGNORECASE)
_SENTENCE_NUMBER = re.compile(r"\bsentences?\s+#?(\d+)", re.IGNORECASE)
_CITES_SENTENCE = re.compile(r"\[\[?\s*\d+\s*\]\]?|\bsentences?\s+#?\d+", re.IGNORECASE)
_MAX_RANGE = 50  # "1-3" is a range; "1-900" is noise


@dataclass(frozen=True)
class MultiHopItem:
    """One final question and its necessary sentences (0-based)."""

    question: str
    positives: tuple[int, ...]


@dataclass(frozen=True)
class ParsedAnswer:
    """All well-formed items of one answer, the sentences it cites anywhere, and why blocks were rejected."""

    items: tuple[MultiHopItem, ...]
    cited: frozenset[int]
    rejected: tuple[str, ...]


@dataclass(frozen=True)
class MultiHopSample:
    """``(question, context sentences, positive indices, negative indices)``, indices 0-based."""

    question: str
    sentences: tuple[str, ...]
    positives: tuple[int, ...]
    negatives: tuple[int, ...]


def parse_multihop_answer(answer: str, n_sentences: int, *, min_positives: int = 1) -> ParsedAnswer:
    """Read the "Final question" / "Necessary sentences" blocks of a Prompt-3 answer.

    Args:
        answer: The generator's free text.
        n_sentences: How many sentences were numbered (valid numbers are ``1..n_sentences``).
        min_positives: Fewer necessary sentences than this rejects the block.

    Returns:
        Items for the well-formed blocks and one rejection reason per malformed block
        (``no_final_question``, ``empty_question``, ``question_cites_sentences``, ``question_too_short``,
        ``no_necessary_sentences``, ``no_positives``, ``index_out_of_range``, ``too_few_positives``,
        ``duplicate_question``).
    """
    text = _normalise(answer)
    finals = list(_FINAL.finditer(text))
    mentioned = _numbers_in_brackets(text) + [int(n) for n in _SENTENCE_NUMBER.findall(text)]
    cited = {n - 1 for n in mentioned if 1 <= n <= n_sentences}
    if not finals:
        return ParsedAnswer((), frozenset(cited), ("no_final_question",))
    items: list[MultiHopItem] = []
    rejected: list[str] = []
    seen_questions: set[str] = set()
    for k, match in enumerate(finals):
        block_end = finals[k + 1].start() if k + 1 < len(finals) else len(text)
        question = _question_after(text, match.end(), block_end)
        necessary = _NECESSARY.search(text, match.end(), block_end)
        if necessary is None and len(finals) == 1:
            necessary = _NECESSARY.search(text, 0, match.start())  # listed before the question
        problem, positives = _positives(text, necessary, n_sentences)
        problem = _question_problem(question) or problem
        if problem is None and len(positives) < min_positives:
            problem = "too_few_positives"
        if problem is None and question.lower() in seen_questions:
            problem = "duplicate_question"
        if problem is not None:
            rejected.append(problem)
            continue
        seen_questions.add(question.lower())
        cited.update(positives)
        items.append(MultiHopItem(question, tuple(positives)))
    return ParsedAnswer(tuple(items), frozenset(cited), tuple(rejected))


def parse_mcqr_answer(
    answer: str,
    sentences: Sequence[str],
    *,
    max_negatives: int,
    rng: random.Random,
    min_positives: int = 1,
) -> tuple[list[MultiHopSample], list[str]]:
    """Parse an answer into samples with sampled negatives; also returns the rejection reasons.

    Negatives are drawn from the sentences cited nowhere in the answer (intermediate answers included),
    so a sentence the LLM used for any hop is never a negative. No such sentence rejects with
    ``no_negatives``.
    """
    parsed = parse_multihop_answer(answer, len(sentences), min_positives=min_positives)
    rejected = list(parsed.rejected)
    pool = [i for i in range(len(sentences)) if i not in parsed.cited]
    samples: list[MultiHopSample] = []
    for item in parsed.items:
        if not pool:
            rejected.append("no_negatives")
            continue
        negatives = sorted(rng.sample(pool, min(max_negatives, len(pool))))
        samples.append(MultiHopSample(item.question, tuple(sentences), item.positives, tuple(negatives)))
    return samples, rejected


# --------------------------------------------------------------------------------------------- internals


def _normalise(answer: str) -> str:
    text = answer.replace("\r", "")
    text = re.sub(r"\*\*|__|`", "", text)  # markdown bold / code
    text = re.sub(r"(?m)^[ \t]*#+[ \t]*", "", text)  # headings
    return text


def _numbers_in_brackets(text: str) -> list[int]:
    return [int(a or b) for a, b in _BRACKETED.findall(text)]


def _question_after(text: str, start: int, end: int) -> str:
    rest = text[start:end]
    lines = rest.split("\n")
    line = lines[0].strip()
    if not line:  # label alone on its line: the question is the next non-empty line
        line = next((candidate.strip() for candidate in lines[1:] if candidate.strip()), "")
    cut = _CUT_QUESTION.search(line)
    if cut:
        line = line[: cut.start()]
    if "?" in line:
        line = line[: line.rindex("?") + 1]
    return line.strip().strip("\"'“”*").strip()


def _question_problem(question: str) -> str | None:
    if not question:
        return "empty_question"
    if _CITES_SENTENCE.search(question):
        return "question_cites_sentences"
    if len(question.split()) < 3:
        return "question_too_short"
    return None


def _positives(text: str, necessary: re.Match[str] | None, n_sentences: int) -> tuple[str | None, list[int]]:
    if necessary is None:
        return "no_necessary_sentences", []
    tail = text[necessary.end() :].split("\n")
    listing = tail[0]
    if not re.search(r"\d", listing):  # the numbers are on the following lines (a bullet list)
        more = []
        for line in tail[1:]:
            if not line.strip():
                if more:
                    break
                continue
            if not _LIST_CONTINUATION.match(line):
                break
            more.append(line)
        listing = ", ".join(more)
    numbers = _numbers_in_listing(listing)
    if not numbers:
        return "no_positives", []
    if any(not 1 <= n <= n_sentences for n in numbers):
        return "index_out_of_range", []
    return None, sorted({n - 1 for n in numbers})


def _numbers_in_listing(listing: str) -> list[int]:
    bracketed = _numbers_in_brackets(listing)
    if bracketed:
        numbers = list(bracketed)
        for a, b in re.findall(r"\[\[?\s*(\d+)\s*\]?\](?:-|–|\s+to\s+)\[\[?\s*(\d+)\s*\]?\]", listing):
            numbers.extend(_expand(int(a), int(b)))
        return numbers
    match = _LEADING_LIST.match(listing)
    if not match:
        return []
    numbers = [int(n) for n in re.findall(r"\d+", match.group(1))]
    for a, b in _RANGE.findall(match.group(1)):
        numbers.extend(_expand(int(a), int(b)))
    return numbers


def _expand(a: int, b: int) -> list[int]:
    return list(range(a, b + 1)) if a < b and b - a <= _MAX_RANGE else []
