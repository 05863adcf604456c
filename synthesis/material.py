"""The material of a generated prompt: a sentence-complete excerpt of a row's context that keeps its evidence, and
questions that sit inside material without being the request (an FAQ, a quoted question, a transcript's own).

An excerpt is made of whole paragraphs of the context (paragraphs over 160 words are cut into lines, lines over
120 words at sentence ends), in their order,
copied verbatim: every evidence sentence found in the context is kept, then neighbouring units are added until the
drawn length is reached. Runs that are not adjacent in the context are joined by a blank line. NQ contexts are
written as a few of their passages (the gold one always) in one of :data:`synthesis.passages.PASSAGE_STYLES`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from synthesis.parts import NAMES
from synthesis.passages import PASSAGE_STYLES, format_passages, nq_passages

__all__ = ["MATERIAL_QUESTIONS", "evidence_spans", "excerpt", "row_material", "with_questions"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_LONG_LINE_WORDS = 120
_PARAGRAPH_WORDS = 160


def _units(text: str) -> list[tuple[int, int]]:
    """Character ranges of the text's paragraphs (blank-line separated), long paragraphs cut into lines and long
    lines cut at sentence ends (empty ones dropped)."""
    units: list[tuple[int, int]] = []
    for block in re.finditer(r"(?:[^\n]|\n(?![ \t]*\n))+", text):
        if block.group().strip() and len(block.group().split()) <= _PARAGRAPH_WORDS:
            units.append(block.span())
        elif block.group().strip():
            units += [(block.start() + start, block.start() + end) for start, end in _line_units(block.group())]
    return units


def _line_units(text: str) -> list[tuple[int, int]]:
    units: list[tuple[int, int]] = []
    for line in re.finditer(r"[^\n]+", text):
        if not line.group().strip():
            continue
        if len(line.group().split()) <= _LONG_LINE_WORDS:
            units.append(line.span())
            continue
        start = line.start()
        for cut in _SENTENCE_END.finditer(line.group()):
            end = line.start() + cut.start()
            if len(text[start:end].split()) >= 25:
                units.append((start, end))
                start = line.start() + cut.end()
        units.append((start, line.end()))
    return units


def evidence_spans(context: str, evidence: Sequence[str]) -> list[tuple[int, int]]:
    """Where each evidence sentence occurs in ``context`` (whitespace may differ); ones not found are skipped."""
    spans = []
    for sentence in evidence:
        words = sentence.split()
        if not words:
            continue
        found = re.search(r"\s+".join(re.escape(word) for word in words), context)
        if found is not None:
            spans.append(found.span())
    return spans


def excerpt(context: str, evidence: Sequence[str], target_words: int, rng: random.Random) -> str:
    """A verbatim, sentence-complete excerpt of ``context`` of about ``target_words`` words (more when the evidence
    alone is longer) that contains every evidence sentence found in it."""
    units = _units(context)
    if not units:
        return context.strip()
    found = evidence_spans(context, evidence)
    needed = {index for index, (start, end) in enumerate(units)
              for e_start, e_end in found if start < e_end and e_start < end}
    chosen = set(needed) or {rng.randrange(len(units))}
    words = sum(len(context[units[i][0]: units[i][1]].split()) for i in chosen)
    while words < target_words and len(chosen) < len(units):
        frontier = sorted({i + step for i in chosen for step in (-1, 1)} - chosen)
        frontier = [i for i in frontier if 0 <= i < len(units)]
        index = rng.choice(frontier)
        chosen.add(index)
        words += len(context[units[index][0]: units[index][1]].split())
    runs: list[list[int]] = []
    for index in sorted(chosen):
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return "\n\n".join(context[units[run[0]][0]: units[run[-1]][1]].strip() for run in runs)


def row_material(row: Mapping[str, Any], target_words: int, rng: random.Random) -> tuple[str, str]:
    """``(material, passage style)``: a few NQ passages (gold kept) or an excerpt of any other context."""
    passages = nq_passages(row)
    evidence = [str(s) for s in row.get("supporting_sentences") or []]
    if not passages:
        return excerpt(str(row["context"]), evidence, target_words, rng), "excerpt"
    gold = int((row.get("meta") or {}).get("gold_doc_index", 0))
    others = [i for i in range(len(passages)) if i != gold]
    rng.shuffle(others)
    keep = [gold]
    words = len(passages[gold].text.split())
    for index in others:
        if words >= target_words:
            break
        keep.append(index)
        words += len(passages[index].text.split())
    style = rng.choice(PASSAGE_STYLES)
    return format_passages([passages[i] for i in sorted(keep)], style), style


# ------------------------------------------------------------------ questions inside the material
MATERIAL_QUESTIONS: tuple[str, ...] = ("none", "faq", "quoted", "review", "transcript")


def with_questions(material: str, kind: str, questions: Sequence[str], rng: random.Random) -> str:
    """``material`` with questions of its own added around it (``kind`` in :data:`MATERIAL_QUESTIONS`); the
    questions come from ``questions`` (other rows' questions) and are never the request."""
    if kind == "none" or not questions:
        return material
    asked = [q.strip().rstrip("?") + "?" for q in rng.sample(list(questions), min(3, len(questions)))]
    asked = [q[:1].upper() + q[1:] for q in asked]
    if kind == "faq":
        block = "Frequently asked questions\n" + "\n".join(
            f"Q: {q}\nA: {rng.choice(('See the archive.', 'It depends on the edition.', 'Ask the desk.'))}"
            for q in asked[:2])
    elif kind == "quoted":
        block = (f'{rng.choice(("A reader wrote in to ask", "In the comments someone asked", "The brief opens with"))}:'
                 f' "{asked[0]}" {rng.choice(("That is covered elsewhere.", "We will come back to it.", ""))}').strip()
    elif kind == "review":
        block = "Review questions:\n" + "\n".join(f"{n}. {q}" for n, q in enumerate(asked, 1))
    elif kind == "transcript":
        first, second = rng.sample(NAMES, 2)
        block = (f"{first.split()[0]}: {asked[0]}\n{second.split()[0]}: "
                 f"{rng.choice(('Not sure, let me check.', 'Good question.', 'I think so.'))}")
    else:
        raise ValueError(f"unknown material question kind {kind!r}; expected one of {MATERIAL_QUESTIONS}")
    return f"{block}\n\n{material}" if rng.random() < 0.5 else f"{material}\n\n{block}"
