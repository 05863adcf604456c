"""The algorithm: one prompt in, one :class:`~tpc_core.engine.result.CompressionResult` out.

No file, Hub or network access happens here, and nothing here imports the loading package above it (which
finds checkpoints and builds the models and heads this package runs).
The stages, in the order a prompt goes through them:

* split: :mod:`tpc_core.segmentation` (public on its own), counted by :mod:`.tokens`, checked by :mod:`.options`;
* read: :mod:`.cse` (the context-aware sentence encoder), :mod:`.ctd` (the task descriptor, a causal LM);
* task: :mod:`.task` (the one home of the prompt-agnostic cascade), :mod:`.request` (the request head);
* score: :mod:`.scoring` (the scorers' table), :mod:`.lexical` (BM25), :mod:`.salience`, :mod:`.coverage`;
* select: :mod:`.selection` (pure budget functions);
* render: :mod:`.result`, :mod:`.render` (HTML);
* :mod:`.stages` ties them together as frozen stage values ``Segmented → Scored → Selected → Assembled``.
"""
