"""Wording cues of a request, independent of the layout around it: words that address the reader ("can you",
"please", "I need") and a sentence that opens with a verb telling the reader what to do ("Verify ...",
"Explain ...", "Label ...").

Pure functions over one sentence's text; layout features of the request finder
(:mod:`tpc_core.engine.task.request.features`).
"""

from __future__ import annotations

import re

__all__ = ["addresses_reader", "imperative_start"]

# Words a person uses when asking someone for something ("can you", "please", "I need", "let me know").
_ADDRESS = re.compile(r"\b(?:you|your|please|kindly|i need|i want|i'd like|i would like|let me know|help me|"
                      r"tell me|my question)\b", re.IGNORECASE)
# Each of those written in lower case: an ASCII sentence without any of them cannot match (a cheap test first).
_ADDRESS_TEXTS = ("you", "please", "kindly", "i need", "i want", "i'd like", "i would like", "let me know", "help me",
                  "tell me", "my question")
# A sentence (after its markup and label) that starts with a verb telling the reader what to do.
_IMPERATIVE = re.compile(r"^(?:please\s+|kindly\s+|now,?\s+)?(?:answer|tell|find|explain|describe|list|give|identify|"
                         r"verify|check|decide|determine|label|mark|classify|extract|compare|state|provide|name|"
                         r"select|choose|pick|highlight|quote|look|work|say|act|imagine|suppose|assume|consider|"
                         r"evaluate|assess|judge|confirm|estimate|calculate|count|return|locate|show|report)\b",
                         re.IGNORECASE)


def addresses_reader(sentence: str) -> bool:
    """Whether the sentence speaks to the reader or asks for something ("you", "please", "I need", "tell me").

    >>> addresses_reader("Could you find out who won?"), addresses_reader("The match was won in 1966.")
    (True, False)
    """
    if sentence.isascii():  # case-insensitive on ASCII is lower case: most sentences hold none of the words
        lowered = sentence.lower()
        if not any(text in lowered for text in _ADDRESS_TEXTS):
            return False
    return _ADDRESS.search(sentence) is not None


def imperative_start(text: str) -> bool:
    """Whether the text opens with a verb telling the reader what to do (after an optional "please").

    >>> imperative_start("Verify the following claim: the sky is green."), imperative_start("Verification failed.")
    (True, False)
    """
    return _IMPERATIVE.match(text.lstrip()) is not None
