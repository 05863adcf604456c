"""Whether a generated task description is grounded in the prompt it describes: restates it, or contradicts it.

The CTD describes a prompt only where no request is placed in it. Its description is used as written only where
the prompt writes most of its content words (:func:`is_grounded`); where it restates some of the prompt's
sentences (:func:`match_sentences`) those sentences, as written, replace it. A small model's paraphrase can also
invert the request ("... when check is true ..." described as "What exception raises when check returns false?")
or swap an entity or a number. Such a description is worse than none: sentences are then chosen for a task nobody
asked. :func:`contradicts` is the check the task finder applies before a generated description is used.
:func:`request_covered` measures whether a description keeps a written request (the benchmarks' measure).

Pure functions over text; no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["content_words", "contradicts", "is_grounded", "match_sentences", "request_covered"]

# Words whose opposite turns a request around.
_OPPOSITES: tuple[tuple[str, str], ...] = (
    ("true", "false"), ("before", "after"), ("increase", "decrease"), ("increased", "decreased"), ("more", "less"),
    ("most", "least"), ("first", "last"), ("maximum", "minimum"), ("highest", "lowest"), ("largest", "smallest"),
    ("earliest", "latest"), ("success", "failure"), ("succeeds", "fails"), ("accept", "reject"),
    ("accepted", "rejected"), ("allowed", "forbidden"), ("enable", "disable"), ("enabled", "disabled"),
    ("positive", "negative"), ("above", "below"), ("win", "lose"), ("won", "lost"),
)
_NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"})
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?|\d+(?:[.,]\d+)*")
# Framing words of a description that are capitalised without naming anything.
_FRAMING = frozenset({"the", "what", "who", "when", "where", "which", "why", "how", "is", "are", "was", "were", "does",
                      "do", "did", "can", "summarise", "summarize", "list", "find", "explain", "describe", "give",
                      "prompt", "task", "user", "question", "a", "an", "in", "of", "for", "it", "this", "please"})


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _negated(words: Iterable[str]) -> bool:
    return any(word.lower() in _NEGATIONS or word.lower().endswith("n't") for word in words)


def contradicts(description: str, prompt: str) -> bool:
    """Whether ``description`` turns around or changes what ``prompt`` writes.

    It does when it holds a word whose opposite the prompt writes and the word itself the prompt never writes
    ("false" for a prompt about "true"); when it is negated and the prompt holds no negation, or the reverse in a
    one-sentence request; or when it names a number or a capitalised name the prompt never writes (a changed
    entity).

    >>> contradicts("What exception is raised when check returns false?", "Which error is raised when check is true?")
    True
    >>> contradicts("Which error is raised when check is true?", "Which error is raised when check is true?")
    False
    >>> contradicts("When did Anna Smith sign the lease?", "The lease was signed by Maria Delgado in 2021.")
    True
    """
    described = _words(description)
    written = {word.lower() for word in _words(prompt)}  # case-blind: a prompt typed in lower case names them too
    lowered = [word.lower() for word in described]
    for one, other in _OPPOSITES:
        for word, opposite in ((one, other), (other, one)):
            if word in lowered and word not in written and opposite in written:
                return True
    if _negated(described) and not _negated(_words(prompt)):
        return True
    for match in _WORD.finditer(description):
        word = match.group()
        before = description[:match.start()].rstrip()
        if word.lower() in _FRAMING or word.lower() in written:
            continue
        opens_sentence = not before or before[-1] in ".?!:;\"'("
        if word[0].isdigit() or (word[0].isupper() and not opens_sentence):
            return True
    return False


_STOP = frozenset("a an the of in on at to for from by with and or but is are was were be been this that these those "
                  "it its what which who whom whose when where why how do does did can could should would will i you "
                  "he she we they me my your our their prompt asks ask question answer text".split())


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content: lower-cased, stop words and the descriptor's framing words out.

    >>> content_words("What is the value of the key?")
    ['value', 'key']
    """
    return [w for w in re.findall(r"\w+", text.lower()) if w not in _STOP and len(w) > 1]


def request_covered(request: str, description: str | None, *, share: float = 0.8) -> bool:
    """Whether a task description keeps a written request: at least ``share`` of the request's distinct content
    words occur in it (the measure of ``benchmarks.request_found``).

    >>> request_covered("Highlight the parts that name the lawyer.", "Highlight the parts that name a lawyer")
    True
    >>> request_covered("Highlight the parts that name the lawyer.", "Summarise the main points of the text.")
    False
    """
    words = set(content_words(request))
    if not words:
        return True
    present = set(content_words(description or ""))
    return len(words & present) >= share * len(words)


def match_sentences(description: str, sentences: Sequence[str], *, share: float, min_words: int = 2,
                    max_sentences: int = 8) -> list[int]:
    """The sentences of the prompt that a generated description restates, if it restates some.

    The CTD often paraphrases a written request it found ("The prompt asks: Who plays Sheila Carter?" for
    "I have a question: who plays sheila carter on the bold and the beautiful") and a paraphrase loses words
    the request had. The sentence holding the most of the description's content words (at least
    ``min_words``; the first wins ties) is taken, then its neighbours while each adds ``min_words`` more of
    them (a question's options, a request written over two sentences), at most ``max_sentences`` in all.

    Returns:
        Their indices, ascending, when they hold at least ``share`` of the description's content words;
        otherwise ``[]``.

    >>> match_sentences("The prompt asks: Who plays Sheila Carter?",
    ...                 ["Some text.", "I have a question: who plays sheila carter on the show"], share=0.8)
    [1]
    """
    words = set(content_words(description))
    if len(words) < min_words or not sentences:
        return []
    present = [words & set(content_words(sentence)) for sentence in sentences]
    best = max(range(len(sentences)), key=lambda i: (len(present[i]), -i))
    if len(present[best]) < min_words:
        return []
    low = best
    high = best
    covered = set(present[best])
    while high - low + 1 < max_sentences:
        gains = [(len(present[i] - covered), i) for i in (low - 1, high + 1) if 0 <= i < len(sentences)]
        gain, index = max(gains, default=(0, -1))
        if gain < min_words:
            break
        covered |= present[index]
        low = min(low, index)
        high = max(high, index)
    return list(range(low, high + 1)) if len(covered) >= share * len(words) else []


def is_grounded(description: str, prompt: str, *, min_words: int = 2, share: float = 0.8) -> bool:
    """Whether a generated description restates something the prompt writes.

    At least ``min_words`` of its content words (stop words and the descriptor's own framing words left out),
    and at least ``share`` of them, must occur in the prompt. "What is this?" or an invented question about
    a bare document is not grounded; a restated question, key or field list is.
    """
    words = content_words(description)
    if len(words) < min_words:
        return False
    present = set(re.findall(r"\w+", prompt.lower()))
    return sum(w in present for w in words) >= share * len(words)
