"""CTD data set (paper Section 3.2.1, Algorithm 2): ``(p_struct, q)`` pairs from long texts.

Stage 1 asks the LLM for a query ``q`` about a text (Prompt 1); stage 2 asks it for structured templates
with ``{text}`` and ``{question}`` placeholders (Prompt 2). One valid template, filled with the text and
``q``, becomes the training prompt ``p_struct``; its target (``task_description``) is ``q``.

Output record: ``{"id", "prompt", "task_description", "source"}``.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

__all__ = [
    "CTDRules",
    "Deduplicator",
    "choose_template",
    "clean_query",
    "extract_template_candidates",
    "fill_template",
    "query_problem",
    "template_problem",
]

_PLACEHOLDER = re.compile(r"\{(text|question)\}")
_LOOSE_PLACEHOLDER = re.compile(r"\{\{?\s*(text|question)\s*\}?\}", re.IGNORECASE)
_CONTEXT_WORD = re.compile(r"\bcontexts?\b", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:#+\s*)?(?:\d+\s*[.):]\s*)?(?:user\s+)?(?:query|question)\s*(?:\d+\s*)?:\s*", re.I)
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+\s*[.)])\s+")
_TEMPLATE_HEADER = re.compile(
    r"^\s*(?:#+\s*)?(?:\*\*)?\s*(?:template\s*\d+\s*[.):]?|\d+\s*[.)]|template\s*:)\s*(?:\*\*)?\s*",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class CTDRules:
    """Validation limits for generated queries and templates."""

    min_query_words: int = 3
    max_query_words: int = 60
    max_template_chars: int = 1500
    leak_ngram_words: int = 10  # this many consecutive words of the text inside a template = leak


def clean_query(raw: str) -> str:
    """The query in a Prompt-1 answer: first non-empty line, without labels, list markers, quotes or markdown."""
    text = raw.replace("```", "\n").replace("**", "").replace("__", "")
    for line in text.splitlines():
        line = _LIST_MARKER.sub("", _LABEL.sub("", line)).strip()
        line = line.strip().strip('"“”\'`').strip()
        if line:
            return re.sub(r"\s+", " ", line)
    return ""


def query_problem(query: str, rules: CTDRules) -> str | None:
    """A rejection reason for a cleaned query, or ``None`` if it is usable."""
    if not query:
        return "empty_query"
    if _CONTEXT_WORD.search(query):
        return "query_mentions_context"
    if "{" in query or "}" in query:
        return "query_has_braces"
    words = len(query.split())
    if words < rules.min_query_words:
        return "query_too_short"
    if words > rules.max_query_words:
        return "query_too_long"
    return None


def extract_template_candidates(raw: str) -> list[str]:
    """Templates in a Prompt-2 answer that contain both placeholders (variants like ``{{ text }}`` fixed).

    The answer usually lists several templates ("1. ...", "Template 2: ...", code fences); each block is
    one candidate. If no block has both placeholders, the whole answer is tried as one template.
    """
    text = _LOOSE_PLACEHOLDER.sub(lambda m: "{" + m.group(1).lower() + "}", raw.replace("\r", ""))
    text = text.replace("```", "\n")
    starts = [m.start() for m in _TEMPLATE_HEADER.finditer(text)]
    blocks = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])] if starts else []
    candidates = [_clean_block(b) for b in blocks]
    candidates = [c for c in candidates if "{text}" in c and "{question}" in c]
    if not candidates:
        whole = _clean_block(text)
        if "{text}" in whole and "{question}" in whole:
            candidates = [whole]
    return candidates


def _clean_block(block: str) -> str:
    block = _TEMPLATE_HEADER.sub("", block, count=1).replace("**", "")
    block = block.strip().strip('"“”').strip()
    return block


def template_problem(template: str, text: str, rules: CTDRules) -> str | None:
    """A rejection reason for a template (placeholders, size, copying the text), or ``None``."""
    names = _PLACEHOLDER.findall(template)
    if "text" not in names or "question" not in names:
        return "template_missing_placeholders"
    if names.count("text") > 1:
        return "template_repeats_text"
    if len(_PLACEHOLDER.sub("", template)) > rules.max_template_chars:
        return "template_too_long"
    if _shares_ngram(_PLACEHOLDER.sub(" ", template), text, rules.leak_ngram_words):
        return "template_leaks_text"
    return None


def choose_template(raw: str, text: str, rules: CTDRules, rng: random.Random) -> tuple[str | None, str | None]:
    """``(template, None)`` for one valid template picked at random, else ``(None, reason)``."""
    candidates = extract_template_candidates(raw)
    if not candidates:
        return None, "template_missing_placeholders"
    problems = [template_problem(c, text, rules) for c in candidates]
    valid = [c for c, problem in zip(candidates, problems) if problem is None]
    if not valid:
        return None, problems[0]
    return rng.choice(valid), None


def fill_template(template: str, text: str, question: str) -> str:
    """Replace ``{text}`` and ``{question}`` in one pass (braces inside the text or question stay as they are)."""
    values = {"text": text, "question": question}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _shares_ngram(template: str, text: str, n: int) -> bool:
    template_words = [w.lower() for w in _WORD.findall(template)]
    if len(template_words) < n:
        return False
    text_words = [w.lower() for w in _WORD.findall(text)]
    text_grams = {tuple(text_words[i : i + n]) for i in range(len(text_words) - n + 1)}
    return any(tuple(template_words[i : i + n]) in text_grams for i in range(len(template_words) - n + 1))


class Deduplicator:
    """Remembers ``(text, task description)`` pairs; a repeated pair is a duplicate sample."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    @staticmethod
    def key(text: str, task_description: str) -> str:
        norm = " ".join(_WORD.findall(task_description.lower()))
        return hashlib.sha1(f"{hashlib.sha1(text.encode()).hexdigest()}|{norm}".encode()).hexdigest()

    def add(self, key: str) -> bool:
        """Record ``key``; ``False`` if it was already there."""
        if key in self._seen:
            return False
        self._seen.add(key)
        return True
