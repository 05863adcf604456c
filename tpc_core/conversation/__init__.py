"""A conversation compressed under one budget (:func:`~.compress.compress_conversation`): chat messages read by their
shape (:mod:`.messages`), the latest user turn that carries material (:mod:`.user_turn`). Above the engine: it runs
one engine call over the messages it compresses."""
