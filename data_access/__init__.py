"""Data access that training and the benchmarks share: one package, imported openly by both, so neither
imports the other for data (layering: ``training`` and ``benchmarks`` -> ``data_access`` -> ``synthesis``).

* :mod:`~data_access.paths`: where the data lives (``$TPC_DATA``, else ``../shared/data``; a file's own
  variable such as ``$TPC_QA_DEV`` wins) and the held-out train ids;
* :mod:`~data_access.loaders`: qa_dev, summ_dev, LongBench and ZeroSCROLLS samples;
* :mod:`~data_access.tokens`: the MiniLM token counter every method and training set is measured with.

Not shipped in the wheel (``pyproject.toml`` packages only ``tpc_core`` and ``tpc_integrations``).
"""

__all__: list[str] = []
