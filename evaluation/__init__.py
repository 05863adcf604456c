"""The evaluation protocol that the benchmark suites (``python -m benchmarks``) and ``training/`` both use.

Neither of them is its home, so neither imports the other. The data they read (its root, loaders and token counter)
is the ``data_access`` package's.

* data: :mod:`~evaluation.chunks` (retrieval-sized chunks);
* budget and scores: :mod:`~evaluation.budget` (budgets; the MiniLM token counter handed on),
  :mod:`~evaluation.metrics`, :mod:`~evaluation.reader` (the answering model), :mod:`~evaluation.summ`,
  :mod:`~evaluation.index`, :mod:`~evaluation.request_outcomes` (whether a prompt's request was found);
* the compared methods: :mod:`evaluation.methods` (what a method is, the rows by name, TPC, the baselines and
  the peers);
* running and writing: :mod:`~evaluation.evaluate` (one sample through one method), :mod:`~evaluation.cache`
  (the JSON result cache), :mod:`~evaluation.report` (tables and figures).
"""
