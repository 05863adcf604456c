"""Salience from human summaries: sentence labels for compressing prompts that ask no question.

* :mod:`training.salience.data`: the summ_train file, licences per dataset, held-out datasets, the library's
  sentence spans and MiniLM token counts.
* :mod:`training.salience.labels`: ROUGE-1/2 recall, the greedy ROUGE oracle, soft per-sentence gains, and
  ``python -m training.salience.labels`` to label the whole file (resumable, with a manifest).
"""
