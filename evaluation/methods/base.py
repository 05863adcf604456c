"""What a compared method is: :class:`Method` maps ``(text, question | None, budget)`` to a :class:`Compressed`.

A method runs in the prompt-aware setting (:data:`AWARE`: it is given the question), the prompt-agnostic one
(:data:`AGNOSTIC`: it is not), or both. A method whose dependency is missing reports why in
:meth:`Method.unavailable_reason` and is skipped, never crashing the run. Sentence-level methods split with the
project's shared splitter, :func:`split_spans`.

The methods themselves: :mod:`evaluation.methods.baselines` (sentence scorers, the full prompt),
:mod:`evaluation.methods.peers` (LlamaIndex, LangChain, LLMLingua),
:mod:`evaluation.methods.trimwise`, :mod:`evaluation.methods.tpc`;
:mod:`evaluation.methods.registry` builds them by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluation.budget import MiniLMTokenCounter
from tpc_core.segmentation import split_sentences

__all__ = ["AGNOSTIC", "AWARE", "Compressed", "Method", "split_spans", "split_text", "tpc_core_unavailable_reason"]

AWARE = "aware"
AGNOSTIC = "agnostic"


@dataclass(frozen=True)
class Compressed:
    """A method's output: the compressed text plus whatever it reports (task description, knob...)."""

    text: str
    info: dict[str, Any] = field(default_factory=dict)


def split_spans(text: str) -> list[tuple[int, int]]:
    """The project's shared sentence splitter."""
    return list(split_sentences(text))


def split_text(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Sentence spans of ``text`` and the sentences themselves."""
    spans = split_spans(text)
    return spans, [text[start:end] for start, end in spans]


def tpc_core_unavailable_reason() -> str | None:
    """``None`` when ``tpc_core`` (the shared splitter) imports here, else why not."""
    try:
        import tpc_core.segmentation  # noqa: F401
    except Exception as error:  # noqa: BLE001 (any import failure means "cannot run")
        return f"tpc_core not importable ({type(error).__name__}: {error})"
    return None


class Method:
    """Base class. Subclasses set ``name``/``settings`` and implement :meth:`compress`."""

    name: str = ""
    settings: frozenset[str] = frozenset({AWARE, AGNOSTIC})
    needs_question: bool = False

    def __init__(self, counter: MiniLMTokenCounter, *, embedder_factory: Callable[[], Any] | None = None) -> None:
        self.counter = counter
        self.embedder_factory = embedder_factory

    def unavailable_reason(self) -> str | None:
        """``None`` if the method can run here, else why not."""
        return None

    def identity(self) -> str:
        """Everything that changes the output, for cache keys."""
        return self.name

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        raise NotImplementedError

    def warm_up(self) -> None:
        """Load models and run once on a tiny input, so per-sample seconds exclude loading."""
        self.compress("Warm-up sentence one. Warm-up sentence two.", "warm up" if self.needs_question else None, 4)

    @property
    def embedder(self) -> Any:
        if self.embedder_factory is None:
            from evaluation.methods.embedder import shared_embedder  # lazy: loads torch

            self.embedder_factory = shared_embedder
        return self.embedder_factory()
