"""The compared methods by name: the default rows, the opt-in ones, and one row per TPC checkpoint.

Every method maps ``(text, question | None, budget)`` to a compressed text under one budget, one token counter
and one sentence splitter (:mod:`evaluation.methods.base`). :func:`build_method` makes one from its name:
sentence-level baselines (:mod:`evaluation.methods.baselines`), the real LlamaIndex / LangChain components and
LLMLingua (:mod:`evaluation.methods.peers`), trimwise (:mod:`evaluation.methods.trimwise`) and TPC
(:mod:`evaluation.methods.tpc`).

:data:`METHOD_NAMES` are the default rows; :data:`OPT_IN_METHOD_NAMES` run only when named with ``--methods``
(they cannot run offline: trimwise's tiktoken-based strategies). :data:`ALL_METHOD_NAMES` is both.

Several TPC checkpoints can be compared in one run: :func:`method_specs` expands ``tpc-aware`` /
``tpc-agnostic`` into one row per model, labelled by :func:`tpc_model_labels`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.budget import MiniLMTokenCounter
from evaluation.methods.base import AGNOSTIC, AWARE, Method
from evaluation.methods.baselines import (
    BM25Sentences,
    FullPrompt,
    LeadPerPassage,
    LeadSentences,
    MiniLMCentroid,
    MiniLMCosine,
    RandomSentences,
)
from evaluation.methods.peers import LangChainFilter, LlamaIndexOptimizer, LLMLinguaMethod
from evaluation.methods.tpc import DEFAULT_TPC_MODEL, TPCMethod
from evaluation.methods.trimwise import TrimwiseHybrid, TrimwiseLexical, TrimwiseSemantic, TrimwiseStructural

__all__ = [
    "ALL_METHOD_NAMES",
    "METHOD_NAMES",
    "MethodSpec",
    "OPT_IN_METHOD_NAMES",
    "TPC_METHOD_NAMES",
    "build_method",
    "method_settings",
    "method_specs",
    "tpc_model_labels",
]


METHOD_NAMES: tuple[str, ...] = (
    "tpc-aware", "tpc-agnostic", "random", "lead", "lead-per-passage", "bm25", "minilm-cosine", "minilm-centroid",
    "llamaindex-seo", "langchain-filter", "trimwise-semantic", "full", "llmlingua", "llmlingua-2",
)  # fmt: skip
# Known, but run only when named with --methods: trimwise fetches their tiktoken encoding at run time.
OPT_IN_METHOD_NAMES: tuple[str, ...] = ("trimwise-lexical", "trimwise-hybrid", "trimwise-structural")
ALL_METHOD_NAMES: tuple[str, ...] = METHOD_NAMES + OPT_IN_METHOD_NAMES
TPC_METHOD_NAMES: tuple[str, ...] = ("tpc-aware", "tpc-agnostic")

_SIMPLE_METHODS: dict[str, type[Method]] = {
    "random": RandomSentences, "lead": LeadSentences, "lead-per-passage": LeadPerPassage, "bm25": BM25Sentences,
    "minilm-cosine": MiniLMCosine, "minilm-centroid": MiniLMCentroid, "llamaindex-seo": LlamaIndexOptimizer,
    "langchain-filter": LangChainFilter, "full": FullPrompt, "trimwise-semantic": TrimwiseSemantic,
    "trimwise-lexical": TrimwiseLexical, "trimwise-hybrid": TrimwiseHybrid, "trimwise-structural": TrimwiseStructural,
}  # fmt: skip


def method_settings(name: str) -> frozenset[str]:
    """The settings (``aware`` / ``agnostic``) method ``name`` runs in, without building it."""
    if name in TPC_METHOD_NAMES:
        return frozenset({AWARE if name == "tpc-aware" else AGNOSTIC})
    if name in ("llmlingua", "llmlingua-2"):
        return LLMLinguaMethod.settings
    if name not in _SIMPLE_METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(ALL_METHOD_NAMES)}")
    return _SIMPLE_METHODS[name].settings


def build_method(name: str, counter: MiniLMTokenCounter, *, seed: int = 0, tpc_model: str = DEFAULT_TPC_MODEL,
                 device: str | None = None, embedder_factory: Callable[[], Any] | None = None,
                 label: str | None = None) -> Method:  # fmt: skip
    """Instantiate a method by name (see :data:`ALL_METHOD_NAMES`); ``label`` renames a TPC row."""
    common: dict[str, Any] = {"embedder_factory": embedder_factory}
    if name in TPC_METHOD_NAMES:
        return TPCMethod(counter, aware=name == "tpc-aware", model=tpc_model, device=device, label=label, **common)
    if name in ("llmlingua", "llmlingua-2"):
        return LLMLinguaMethod(counter, variant=name, device=device, **common)
    if name == "random":
        return RandomSentences(counter, seed=seed, **common)
    if name not in _SIMPLE_METHODS:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(ALL_METHOD_NAMES)}")
    return _SIMPLE_METHODS[name](counter, **common)


@dataclass(frozen=True)
class MethodSpec:
    """One row to run: its label, the method name it builds, and (TPC rows) the checkpoint."""

    label: str
    name: str
    tpc_model: str = DEFAULT_TPC_MODEL


def _path_tail(components: Sequence[str], depth: int) -> str:
    return "/".join(components[-depth:]).lstrip("/")


def tpc_model_labels(models: Sequence[str]) -> dict[str, str]:
    """A short, unique row label per TPC model.

    A name without a path separator that starts with ``tpc`` stays as is (``tpc-mini``); anything else (a
    checkpoint directory, a Hub id) becomes ``tpc:`` + its last path component, or as many trailing
    components as it takes to tell the given models apart (``tpc:/runs/a/ckpt`` -> ``tpc:ckpt``).
    """
    labels: dict[str, str] = {}
    paths: dict[str, tuple[str, ...]] = {}
    for model in models:
        if model.startswith("tpc") and "/" not in model and os.sep not in model:
            labels[model] = model
        else:
            paths[model] = Path(model).parts or (model,)
    for model, components in paths.items():
        depth = 1
        others = [theirs for other, theirs in paths.items() if other != model]
        while depth < len(components) and any(_path_tail(o, depth) == _path_tail(components, depth) for o in others):
            depth += 1
        labels[model] = f"tpc:{_path_tail(components, depth) or model}"
    return {model: labels[model] for model in models}


def method_specs(names: Sequence[str], tpc_models: Sequence[str] = (DEFAULT_TPC_MODEL,), *,
                 label_tpc_by_model: bool = False) -> list[MethodSpec]:  # fmt: skip
    """Rows for ``names``: one per method, and one per TPC model for ``tpc-aware`` / ``tpc-agnostic``.

    TPC rows keep the method name when one model is given (``tpc-aware``) and become ``tpc-aware[tpc-mini]``,
    ``tpc-aware[tpc:ckpt]`` with several. ``label_tpc_by_model`` (one-setting suites) labels them by the
    model alone (``tpc-mini``).

    Raises:
        ValueError: no TPC model given, or two rows would share a label.
    """
    models = list(dict.fromkeys(tpc_models))
    if not models:
        raise ValueError("at least one TPC model is needed")
    labels = tpc_model_labels(models)
    specs: list[MethodSpec] = []
    for name in names:
        if name not in TPC_METHOD_NAMES:
            specs.append(MethodSpec(name, name))
            continue
        for model in models:
            if label_tpc_by_model:
                label = labels[model]
            else:
                label = name if len(models) == 1 else f"{name}[{labels[model]}]"
            specs.append(MethodSpec(label, name, model))
    seen = [spec.label for spec in specs]
    duplicates = sorted({label for label in seen if seen.count(label) > 1})
    if duplicates:
        raise ValueError(f"several rows would be labelled {', '.join(duplicates)}")
    return specs
