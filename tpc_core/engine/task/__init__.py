"""Finding the task of a prompt that comes with no question: :class:`~.finder.TaskFinder` (the cascade), where a
prompt writes its request (:mod:`.placement`), the request head (:mod:`.request_sequence`) over layout features
(:mod:`.request`, :mod:`.turns`, :mod:`.cues`), the request's own words (:mod:`.request`), the CTD (:mod:`.ctd`), the
causal LM that writes a description when the prompt writes none, and whether that description is grounded in the
prompt (:mod:`.grounding`)."""
