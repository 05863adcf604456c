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

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["ContextSentenceEncoder", "HAND_FEATURES", "LAYOUT_FEATURES", "LeadCorrection", "PooledCosine", "SCORERS",
           "Salience", "SalienceHead", "SalienceModel", "Scorer", "bidirectional_mask", "bm25_scores", "build_scorer",
           "coverage_scores", "hand_features", "layout_features", "lead_order", "pad_batch", "paragraph_ranks",
           "passage_layout", "passage_lead_scores", "plan_windows", "pool_question", "pool_sentence", "prompt_features",
           "score_prompts", "scorer_class", "section_ranks", "words"]

if TYPE_CHECKING:
    from tpc_core.engine.scoring.coverage import coverage_scores as coverage_scores
    from tpc_core.engine.scoring.coverage import section_ranks as section_ranks
    from tpc_core.engine.scoring.cse import ContextSentenceEncoder as ContextSentenceEncoder
    from tpc_core.engine.scoring.cse import bidirectional_mask as bidirectional_mask
    from tpc_core.engine.scoring.cse import pad_batch as pad_batch
    from tpc_core.engine.scoring.cse import plan_windows as plan_windows
    from tpc_core.engine.scoring.cse import pool_question as pool_question
    from tpc_core.engine.scoring.cse import pool_sentence as pool_sentence
    from tpc_core.engine.scoring.lead import LAYOUT_FEATURES as LAYOUT_FEATURES
    from tpc_core.engine.scoring.lead import LeadCorrection as LeadCorrection
    from tpc_core.engine.scoring.lead import layout_features as layout_features
    from tpc_core.engine.scoring.lead import lead_order as lead_order
    from tpc_core.engine.scoring.lead import passage_layout as passage_layout
    from tpc_core.engine.scoring.lexical import bm25_scores as bm25_scores
    from tpc_core.engine.scoring.lexical import words as words
    from tpc_core.engine.scoring.salience import HAND_FEATURES as HAND_FEATURES
    from tpc_core.engine.scoring.salience import Salience as Salience
    from tpc_core.engine.scoring.salience import SalienceHead as SalienceHead
    from tpc_core.engine.scoring.salience import SalienceModel as SalienceModel
    from tpc_core.engine.scoring.salience import hand_features as hand_features
    from tpc_core.engine.scoring.salience import paragraph_ranks as paragraph_ranks
    from tpc_core.engine.scoring.salience import passage_lead_scores as passage_lead_scores
    from tpc_core.engine.scoring.salience import prompt_features as prompt_features
    from tpc_core.engine.scoring.scorers import SCORERS as SCORERS
    from tpc_core.engine.scoring.scorers import PooledCosine as PooledCosine
    from tpc_core.engine.scoring.scorers import Scorer as Scorer
    from tpc_core.engine.scoring.scorers import build_scorer as build_scorer
    from tpc_core.engine.scoring.scorers import score_prompts as score_prompts
    from tpc_core.engine.scoring.scorers import scorer_class as scorer_class
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
