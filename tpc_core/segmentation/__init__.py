"""Sentence spans with exact character offsets: the first stage of the pipeline.

Every later stage (CSE scoring, selection, the result) refers to a sentence by its ``(start, end)`` span in
the original text, so this package guarantees, for every backend and every input string:

* spans are sorted, non-overlapping and non-empty, and ``text[start:end]`` has no leading or trailing
  whitespace (``str.isspace``);
* together they cover every non-whitespace character of ``text`` (nothing is ever dropped);
* no span is longer than ``max_sentence_chars`` (a long run is cut at whitespace, or hard-cut).

How text is split, in order:

1. **Lines first.** The text is cut into lines (every ``str.splitlines`` separator). Blank lines always
   separate. Structural lines -- list items, markdown headings and rules, table rows, block quotes,
   indented lines, lone HTML tags, code-looking lines and everything inside a code fence (three
   backticks or ``~~~``) -- are never joined with a neighbour, so they never merge into prose. Fenced
   code and table rows are kept whole, one span per line (a ``.`` inside code or a cell is not a
   sentence end).
2. **Soft-wrap joining** (``join_wrapped_lines=True``, the default). Hard-wrapped prose (plain text,
   e-mails, text extracted from papers) breaks sentences across lines. A line is joined to the next when
   neither is structural and either the next line starts with a lowercase letter (``"... the\\nstore"``,
   ``"et al.\\nin"``), or the line has no sentence-final punctuation, has at least
   4 words and was visibly *full*: the next line's first word would not have fitted within the widest
   line of the paragraph (how greedy wrapping breaks), and that width is at least 40 characters (narrower
   blocks are lists, verse or addresses) and at most 300 (a longer line was never wrapped: a document or a
   JSON payload on one line). A title above a paragraph
   (``"Ed Wood (film)\\nEd Wood is ..."``, HotpotQA's layout) is therefore not joined. Joined lines are
   handed to the backend with the line breaks replaced by spaces in a same-length copy, so offsets stay
   exact. A line of a line-structured format
   (``key: value`` as in YAML, forms and tickets, ``key = value``, ``[section]``) is never joined to the line
   before it, unless that line is visibly wrapped prose (full, open, not a key line itself: ``"... in the Kansas
   City metropolitan\\narea: the Edwards Campus ..."``); a speaker's or a request's label line (``User:``,
   ``Question:``) is continued only by a line in lower case, so a query typed without a question mark is not
   joined to the material under it.
3. **Chat-template markers** (:mod:`.markers`): every special token of a chat template (``<|im_start|>user``,
   ``<|im_end|>``, ``<|start_header_id|>user<|end_header_id|>``, ``<|eot_id|>``, ``[INST]``, ``[/INST]``,
   ``<start_of_turn>model``, ``<end_of_turn>``, ``<|user|>``, ``<|end|>``, ...) and, in a text that labels two
   roles, every ``User:`` / ``Assistant:`` / ``System:`` / ``Human:`` / ``AI:`` label at a line's start is a span
   of its own: a cut before and after it, none inside it, whatever the backend. A marker's bars never make a line
   a table row. :mod:`.markers` says why a marker is a span of its own.
4. **Backend** inside each unit: it only proposes cut positions in that offset-preserving copy; the
   spans are the pieces between cuts with surrounding whitespace trimmed, which is why no backend can lose
   or misplace a character.
5. **CJK**: a cut after every run of ``。！？｡`` (plus closing quotes/brackets), so unspaced Chinese or
   Japanese splits into sentences that keep their punctuation. ``；`` is not a cut: it joins clauses.
6. **Length cap**: a piece longer than ``max_sentence_chars`` is cut at its last whitespace within the
   limit, or hard-cut (never between a character and its combining mark) when there is none.

Backends: ``"nupunkt"`` (default: Punkt with nupunkt's pre-trained model, no dependencies),
``"nltk"`` (Punkt with NLTK's ``punkt_tab`` data; the copy shipped by ``llama-index-core`` is used when no
other is installed; nothing is ever downloaded), ``"regex"`` (dependency-free rules, fastest) and
``"line"`` (one sentence per non-blank line, no joining).

Why ``nupunkt`` is the default and joining is on: ``python -m benchmarks.segmentation_accuracy`` (its
table: ``benchmarks/results/segmentation/README.md``).

Modules, one concern each: :mod:`.contract` (``Span``, ``SentenceSplitter`` and the check of a custom
splitter's spans), :mod:`.layout` (steps 1, 2 and 5), :mod:`.backends` (step 4), :mod:`.length` (step 6),
:mod:`.markers` (step 3), :mod:`.splitter` (``LineAwareSplitter``, :func:`get_splitter`, :func:`split_sentences`),
:mod:`.headings` (bare headings and their sections, which selection keeps a heading for).

Example:
    >>> text = "Dr. Smith arrived. He sat down.\\n- item one\\n- item two"
    >>> [text[s:e] for s, e in split_sentences(text)]
    ['Dr. Smith arrived.', 'He sat down.', '- item one', '- item two']
"""

from __future__ import annotations

from tpc_core.segmentation.backends import SPLITTER_NAMES
from tpc_core.segmentation.contract import SentenceSplitter, Span
from tpc_core.segmentation.headings import heading_sections
from tpc_core.segmentation.length import cut_sentences
from tpc_core.segmentation.markers import is_turn_marker, marker_spans
from tpc_core.segmentation.splitter import (
    DEFAULT_MAX_SENTENCE_CHARS,
    SPLIT_RULES_REVISION,
    LineAwareSplitter,
    get_splitter,
    split_sentences,
)

__all__ = [
    "DEFAULT_MAX_SENTENCE_CHARS",
    "SPLITTER_NAMES",
    "SPLIT_RULES_REVISION",
    "LineAwareSplitter",
    "SentenceSplitter",
    "Span",
    "cut_sentences",
    "get_splitter",
    "heading_sections",
    "is_turn_marker",
    "marker_spans",
    "split_sentences",
]
