"""Whether a generated task description contradicts or narrows what the prompt writes.

The CTD describes a prompt only where no request is placed in it. A small model's paraphrase can invert the
request ("... when check is true ..." described as "What exception raises when check returns false?") or swap an
entity or a number. Such a description is worse than none: sentences are then chosen for a task nobody asked.
:func:`contradicts` is the check the task finder applies before a generated description is used.

Pure functions over text; no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["contradicts"]

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
        word, before = match.group(), description[:match.start()].rstrip()
        if word.lower() in _FRAMING or word.lower() in written:
            continue
        opens_sentence = not before or before[-1] in ".?!:;\"'("
        if word[0].isdigit() or (word[0].isupper() and not opens_sentence):
            return True
    return False
