"""Experimental sentence scorers for issue 23 (late interaction, lexical fusion), behind the engine's
:class:`tpc_core.engine.scoring.scorers.Scorer` interface (``embed`` / ``relevance``), kept here until one ships.

* :mod:`training.scorer.lexical` — BM25 and rare-term exact match over a prompt's own sentences.
* :mod:`training.scorer.fusion` — per-prompt z-score and reciprocal-rank fusion of score vectors.
* :mod:`training.scorer.late` — MaxSim over the CSE's contextual token states (one context pass, question alone).
* :mod:`training.scorer.scorers` — the scorer classes (``LateInteraction``, ``LexicalScorer``, ``FusedScorer``,
  ``ComponentScorer`` which records every component in one pass, ``CachedComponents`` which replays them).
* :mod:`training.scorer.compare` — the held-out-train comparison CLI (``python -m training.scorer.compare``).
"""
