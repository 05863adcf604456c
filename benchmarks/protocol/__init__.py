"""The evaluation protocol: the library pieces that the suites (``python -m benchmarks.X``) and ``training/``
import (the data they both read, its root, loaders and token counter, is the ``data_access`` package's).

* data: :mod:`~benchmarks.protocol.chunks` (retrieval-sized chunks);
* budget and scores: :mod:`~benchmarks.protocol.budget` (budgets; the MiniLM token counter handed on),
  :mod:`~benchmarks.protocol.metrics`, :mod:`~benchmarks.protocol.reader` (the answering model),
  :mod:`~benchmarks.protocol.summ`, :mod:`~benchmarks.protocol.index`;
* the compared methods: :mod:`benchmarks.protocol.methods` (what a method is, the rows by name, TPC, the
  baselines and the peers);
* running and writing: :mod:`~benchmarks.protocol.evaluate` (one sample through one method),
  :mod:`~benchmarks.protocol.cache` (the JSON result cache), :mod:`~benchmarks.protocol.report` (tables and
  figures), :mod:`~benchmarks.protocol.cache_redis_server` (a throwaway local Redis for the cache suites).
"""
