"""Choosing sentences under a hard budget: the pure budget policy (:mod:`.budget`), maximal marginal relevance
(:mod:`.mmr`), and a scored prompt's kept sentences joined verbatim and recounted (:mod:`.assembly`)."""
