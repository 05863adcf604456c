"""Scoring sentences against a task: the context-aware sentence encoder (:mod:`.cse`), the scorers' table
(:mod:`.scorers`), BM25 (:mod:`.lexical`), and the scores of tasks selected by coverage (:mod:`.salience`,
:mod:`.coverage`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (tpc_core.lazy).
_EXPORTS = {
    "coverage_scores": "tpc_core.engine.scoring.coverage",
    "section_ranks": "tpc_core.engine.scoring.coverage",
    "ContextSentenceEncoder": "tpc_core.engine.scoring.cse",
    "bidirectional_mask": "tpc_core.engine.scoring.cse",
    "pad_batch": "tpc_core.engine.scoring.cse",
    "plan_windows": "tpc_core.engine.scoring.cse",
    "pool_question": "tpc_core.engine.scoring.cse",
    "pool_sentence": "tpc_core.engine.scoring.cse",
    "LAYOUT_FEATURES": "tpc_core.engine.scoring.lead",
    "LeadCorrection": "tpc_core.engine.scoring.lead",
    "layout_features": "tpc_core.engine.scoring.lead",
    "lead_order": "tpc_core.engine.scoring.lead",
    "passage_layout": "tpc_core.engine.scoring.lead",
    "bm25_scores": "tpc_core.engine.scoring.lexical",
    "words": "tpc_core.engine.scoring.lexical",
    "HAND_FEATURES": "tpc_core.engine.scoring.salience",
    "Salience": "tpc_core.engine.scoring.salience",
    "SalienceHead": "tpc_core.engine.scoring.salience",
    "SalienceModel": "tpc_core.engine.scoring.salience",
    "hand_features": "tpc_core.engine.scoring.salience",
    "paragraph_ranks": "tpc_core.engine.scoring.salience",
    "passage_lead_scores": "tpc_core.engine.scoring.salience",
    "prompt_features": "tpc_core.engine.scoring.salience",
    "PooledCosine": "tpc_core.engine.scoring.scorers",
    "SCORERS": "tpc_core.engine.scoring.scorers",
    "Scorer": "tpc_core.engine.scoring.scorers",
    "build_scorer": "tpc_core.engine.scoring.scorers",
    "score_prompts": "tpc_core.engine.scoring.scorers",
    "scorer_class": "tpc_core.engine.scoring.scorers",
}

__all__ = ["ContextSentenceEncoder", "HAND_FEATURES", "LAYOUT_FEATURES", "LeadCorrection", "PooledCosine", "SCORERS",
           "Salience", "SalienceHead", "SalienceModel", "Scorer", "bidirectional_mask", "bm25_scores", "build_scorer",
           "coverage_scores", "hand_features", "layout_features", "lead_order", "pad_batch", "paragraph_ranks",
           "passage_layout", "passage_lead_scores", "plan_windows", "pool_question", "pool_sentence", "prompt_features",
           "score_prompts", "scorer_class", "section_ranks", "words"]

if TYPE_CHECKING:
    from tpc_core.engine.scoring.coverage import coverage_scores, section_ranks
    from tpc_core.engine.scoring.cse import (
        ContextSentenceEncoder,
        bidirectional_mask,
        pad_batch,
        plan_windows,
        pool_question,
        pool_sentence,
    )
    from tpc_core.engine.scoring.lead import (
        LAYOUT_FEATURES,
        LeadCorrection,
        layout_features,
        lead_order,
        passage_layout,
    )
    from tpc_core.engine.scoring.lexical import bm25_scores, words
    from tpc_core.engine.scoring.salience import (
        HAND_FEATURES,
        Salience,
        SalienceHead,
        SalienceModel,
        hand_features,
        paragraph_ranks,
        passage_lead_scores,
        prompt_features,
    )
    from tpc_core.engine.scoring.scorers import SCORERS, PooledCosine, Scorer, build_scorer, score_prompts, scorer_class

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
