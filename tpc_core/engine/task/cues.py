"""Wording cues of a request, independent of the layout around it: words that address the reader ("can you",
"please", "I need"), a sentence that opens with a verb telling the reader what to do ("Verify ...",
"Explain ...", "Label ..."), and an instruction that carries no content of its own (:func:`request_content`,
:func:`is_generic`, :func:`is_pointer`): "Answer concisely." asks for nothing in particular, and "Now answer the
question." only points at a request written elsewhere.

Pure functions over one sentence's text; layout features of the request finder
(:mod:`tpc_core.engine.task.request.features`).
"""

from __future__ import annotations

import re

__all__ = ["REFERENCE_WORDS", "addresses_reader", "imperative_start", "is_generic", "is_pointer", "pointer_direction",
           "request_content"]

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


# Word classes an instruction is made of when it carries no content of its own. Classes of words, not phrases:
# function words; words that name the request or point at a place in the prompt; words that name the material;
# the verbs and nouns of replying; the words of an answer's form and manner.
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with and or but nor is are was were be been being am this that these those "
    "it its itself what which who whom whose when where why how whether do does did done doing can could should "
    "would will shall may might must i you he she we they me my your yours our their us him her them there here then "
    "now also just only please kindly so as if than into onto about up down out over under again any all each every "
    "some no not own same such very too more most other both either let lets s t ll ve re d m go ahead ok okay "
    "well thanks thank one ones via per like get got make sure".split())
# Words that name the request, or point at where in the prompt it stands.
REFERENCE_WORDS = frozenset(
    "question questions query queries request requests task tasks prompt prompts ask asks asked asking inquiry "
    "inquiries enquiry problem problems instruction instructions input inputs above below following follows "
    "followed previous preceding earlier later before after aforementioned given stated posed written mentioned "
    "provided it this that these those said".split())
# Words that name the request itself (a place alone, "the text above", names the material).
_NAMES_REQUEST = frozenset(
    "question questions query queries request requests task tasks prompt prompts asked inquiry inquiries enquiry "
    "problem problems instruction instructions input it".split())
_PLURAL = frozenset("questions queries requests tasks prompts inquiries problems instructions".split())
_BEFORE = frozenset("above previous preceding earlier aforementioned before".split())
_AFTER = frozenset("below following follows followed after next".split())
_MATERIAL_WORDS = frozenset(
    "context contexts document documents doc docs passage passages text texts material materials information info "
    "notes note source sources article articles excerpt excerpts snippet snippets data content contents record "
    "records file files page pages section sections paragraph paragraphs reference references evidence facts "
    "transcript attached supplied shown retrieved included".split())
_REPLY_WORDS = frozenset(
    "answer answers answered answering respond responds responding response responses reply replies replying "
    "address handle tackle solve proceed use using used based read reading consider considering follow refer "
    "look see help assist assistant tell give provide write return output outputs result results solution "
    "knowledge best ability".split())
_MANNER_WORDS = frozenset(
    "brief briefly concise concisely short shortly clear clearly simple simply single sentence sentences word words "
    "english language detail details detailed full fully complete completely accurate accurately correct correctly "
    "precise precisely truthful truthfully honest honestly possible step steps careful carefully think thinking "
    "reasoning reason first then finally final format plain exact exactly quick quickly directly direct relevant "
    "keep limit less fewer maximum minimum least most within under few two three four five ten twenty fifty "
    "hundred cite quote mention include number numbers sure thorough thoroughly polite politely helpful "
    "outside own external".split())
_GENERIC_WORDS = _FUNCTION_WORDS | REFERENCE_WORDS | _MATERIAL_WORDS | _REPLY_WORDS | _MANNER_WORDS
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def request_content(text: str) -> list[str]:
    """The words of a request that carry its content: lower-cased, without function words, words that name the
    request or point at it, words that name the material, and the words of replying and of an answer's manner.

    >>> request_content("Now answer the question in one short sentence.")
    []
    >>> request_content("Can I claim my internet bill?")
    ['claim', 'internet', 'bill']
    """
    return [word for word in _TOKEN.findall(text.lower()) if word not in _GENERIC_WORDS and not
            (len(word) == 1 and word.isalpha())]


def is_generic(text: str) -> bool:
    """Whether an instruction asks for nothing in particular: it has words, and none of them carries content
    ("Answer concisely.", "Use only the documents provided.", "Please respond to it.").

    >>> is_generic("Be brief and cite the documents."), is_generic("Summarise the tenant's obligations.")
    (True, False)
    """
    return bool(_TOKEN.search(text)) and not request_content(text)


def is_pointer(text: str) -> bool:
    """Whether an instruction only points at a request written elsewhere: it is generic (:func:`is_generic`) and
    names the request or a place in the prompt ("Now answer the question.", "Reply to the query.", "answer what
    was asked above", "the request follows below", "Please respond to it.").

    >>> is_pointer("Reply to the query."), is_pointer("Answer concisely."), is_pointer("Who signed the lease?")
    (True, False, False)
    """
    return is_generic(text) and any(word in _NAMES_REQUEST for word in _TOKEN.findall(text.lower()))


def pointer_direction(text: str) -> tuple[int, bool]:
    """Where a pointer (:func:`is_pointer`) points, and whether at several requests: ``(-1, ...)`` before itself
    ("above", "previous"), ``(1, ...)`` after itself ("below", "follows"), ``(0, ...)`` anywhere; ``True`` when it
    names requests in the plural ("the questions above").

    >>> pointer_direction("Answer the questions above."), pointer_direction("The query follows below.")
    ((-1, True), (1, False))
    """
    words = set(_TOKEN.findall(text.lower()))
    side = -1 if words & _BEFORE and not words & _AFTER else 1 if words & _AFTER and not words & _BEFORE else 0
    return side, bool(words & _PLURAL)
