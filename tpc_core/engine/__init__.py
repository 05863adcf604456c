"""The algorithm: one prompt in, one :class:`~tpc_core.engine.output.result.CompressionResult` out.

Nothing here imports the loading package above it (which finds checkpoints and builds the models and heads
this package runs), and nothing here reads the network. The route of one prompt through it is written once, in
docs/ARCHITECTURE.md ("The route of one prompt"); its parts:

* :mod:`.options` (every compress keyword, checked once), :mod:`.tokens` (token counters), :mod:`.fast_encoder`
  (the token ids the default counter and the CSE read), :mod:`.values` (the stage values and the task);
* :mod:`.reading` (split, count and embed a batch of prompts; a cache wraps its per-document step);
* :mod:`.task` (finding the task of a prompt with no question: request heads, layout features, the CTD);
* :mod:`.scoring` (the CSE, the scorers' table, BM25, salience and coverage scores);
* :mod:`.selection` (the budget, MMR, who is kept and the kept text);
* :mod:`.output` (the result, its sentence records, the HTML view);
* :mod:`.pipeline` (the batch loop that runs them).
"""
