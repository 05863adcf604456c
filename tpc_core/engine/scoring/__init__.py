"""Scoring sentences against a task: the context-aware sentence encoder (:mod:`.cse`), the scorers' table
(:mod:`.scorers`), BM25 (:mod:`.lexical`), and the scores of tasks selected by coverage (:mod:`.salience`,
:mod:`.coverage`)."""
