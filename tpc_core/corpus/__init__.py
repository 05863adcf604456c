"""The corpus job: compress every row of a dataset (``tpc compress-corpus IN OUT``, :func:`compress_corpus`).

Modules, in the order a run goes through them:

* :mod:`tpc_core.corpus.io`: no model: input formats, validation, row ids, the OUT manifest, resume;
* :mod:`tpc_core.corpus.table`: one table of rows through a compressor (below both engines);
* :mod:`tpc_core.corpus.local`: :func:`compress_corpus` and the local engine (batched, atomic Parquet parts);
* :mod:`tpc_core.corpus.ray_engine`: the Ray Data engine (an actor pool, a compressor per actor).
"""

from __future__ import annotations

from tpc_core.corpus.io import CorpusInputError, CorpusSettings, plan_corpus, write_manifest
from tpc_core.corpus.local import CorpusReport, add_corpus_parser, compress_corpus, run_corpus_command, run_local

__all__ = ["CorpusInputError", "CorpusReport", "CorpusSettings", "add_corpus_parser", "compress_corpus", "plan_corpus",
           "run_corpus_command", "run_local", "write_manifest"]
