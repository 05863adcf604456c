"""Finding the task of a prompt that comes with no question: :class:`~.finder.TaskFinder` (the cascade), the request
heads (:mod:`.request`, :mod:`.request_sequence`) over layout features (:mod:`.turns`, :mod:`.cues`), and the CTD
(:mod:`.ctd`), the causal LM that writes a description when the prompt writes none."""
