"""What a call returns: :class:`~.result.CompressionResult`, its :class:`~.sentence.SentenceRecord` rows, and the HTML
view (:mod:`.render`)."""
