"""The task a prompt is compressed for: what it is, where it came from, and how sentences are then chosen.

A :class:`Task` is a value. The caller's question makes one directly (:meth:`Task.from_question`); for a prompt
with no question, :class:`tpc_core.task_finder.TaskFinder` finds one (the prompt's written request, the CTD's
description, or the checkpoint's fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["Selection", "Task", "TaskSource"]


class TaskSource(str, Enum):
    """Where a task description came from. Members compare equal to their strings (``"extracted"``), so
    results, JSON and corpus columns read as before.

    Attributes:
        QUESTION: The caller's question (or an adapter's fixed ``task_description``).
        EXTRACTED: The prompt's own request sentences, found by the request head; nothing generated.
        MATCHED: The prompt sentences that the CTD's description restates, used as written.
        GENERATED: The CTD's description, grounded in the prompt.
        FALLBACK: The checkpoint's neutral description: the CTD's text was not grounded in the prompt.
        COVERAGE: No description at all (a request head but no CTD): coverage alone selects.
    """

    QUESTION = "question"
    EXTRACTED = "extracted"
    MATCHED = "matched"
    GENERATED = "generated"
    FALLBACK = "fallback"
    COVERAGE = "coverage"

    def __str__(self) -> str:
        return self.value


class Selection(str, Enum):
    """How sentences are chosen for a task.

    Attributes:
        RELEVANCE: By their score against the description (a question, a written request).
        COVERAGE: By the checkpoint's coverage settings (relevance, centrality, section leads, redundancy): the
            prompt asks for no specific fact (a bare document, a summary request).
    """

    RELEVANCE = "relevance"
    COVERAGE = "coverage"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Task:
    """What one prompt is compressed for.

    Attributes:
        description: The text sentences are scored against (``None`` for :attr:`TaskSource.COVERAGE`).
        source: Where it came from.
        selection: How sentences are chosen.
    """

    description: str | None
    source: TaskSource
    selection: Selection = Selection.RELEVANCE

    @classmethod
    def from_question(cls, question: str) -> Task:
        """The caller's question: scored by relevance."""
        return cls(question, TaskSource.QUESTION, Selection.RELEVANCE)
