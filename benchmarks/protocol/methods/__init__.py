"""The compared methods: :mod:`~benchmarks.protocol.methods.base` (what a method is: ``Method``, ``Compressed``,
the two settings), :mod:`~benchmarks.protocol.methods.registry` (every row by name: ``build_method``),
:mod:`~benchmarks.protocol.methods.tpc` (TPC through its public API), :mod:`~benchmarks.protocol.methods.baselines`,
:mod:`~benchmarks.protocol.methods.peers` (LlamaIndex, LangChain, LLMLingua),
:mod:`~benchmarks.protocol.methods.trimwise`, :mod:`~benchmarks.protocol.methods.forward_floor` (the model's own
passes, the floor of every MiniLM method) and :mod:`~benchmarks.protocol.methods.embedder` (the cached
sentence-transformers MiniLM the baselines share).
"""
