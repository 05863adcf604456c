"""The compared methods: :mod:`~evaluation.methods.base` (what a method is: ``Method``, ``Compressed``,
the two settings), :mod:`~evaluation.methods.registry` (every row by name: ``build_method``),
:mod:`~evaluation.methods.tpc` (TPC through its public API), :mod:`~evaluation.methods.baselines`,
:mod:`~evaluation.methods.peers` (LlamaIndex, LangChain, LLMLingua),
:mod:`~evaluation.methods.trimwise`, :mod:`~evaluation.methods.forward_floor` (the model's own
passes, the floor of every MiniLM method) and :mod:`~evaluation.methods.embedder` (the cached
sentence-transformers MiniLM the baselines share).
"""
