"""Bare headings (:mod:`tpc_core.segmentation.headings`): which lines only name a section, and which sentences
each one's section holds."""

from __future__ import annotations

import pytest

from tpc_core.segmentation import split_sentences
from tpc_core.segmentation.headings import heading_sections, is_heading


def _sections(text: str) -> dict[str, list[str]]:
    """Each heading of ``text`` and the sentences of its section."""
    spans = split_sentences(text)
    return {text[slice(*spans[h])]: [text[slice(*spans[k])] for k in section]
            for h, section in heading_sections(text, spans).items()}


@pytest.mark.parametrize("line", ["## Impact", "# Root cause", "**Action items**", "__Next steps:__", "Impact.",
                                  "What went well.", "Lessons learned:", "Task definition manipulation.",
                                  "Passage 2:"])
def test_a_bare_label_alone_on_its_line_is_a_heading(line):
    assert is_heading(line)


@pytest.mark.parametrize("line", ["Postmortem: checkout outage on 14 March", "Question:", "Answer:", "Context:",
                                  "Ed Wood (film)", "Edgar Kaiser Jr.", "Feel Good Inc.", "She is successful.",
                                  "We rolled back.", "Orders failed for an hour.", "Why did it fail?",
                                  "- Impact.", "<|im_start|>user", "User:", "## What did the on-call engineer do "
                                  "first, and why was it wrong?", ""])
def test_a_title_a_sentence_or_a_template_label_is_no_heading(line):
    assert not is_heading(line)


def test_sections_run_to_the_next_heading_after_a_sentence_and_stop_at_a_turn():
    text = "# Report\n## Impact\nOrders failed for an hour.\n## Timeline\nWe rolled back.\nThanks."
    assert _sections(text) == {"# Report": ["Orders failed for an hour."],
                               "## Impact": ["Orders failed for an hour."],
                               "## Timeline": ["We rolled back.", "Thanks."]}  # a lone "." label: a sentence
    # A short line ending in "." is a heading only beside another such label (sections come in sets).
    assert _sections("Line one about cats.\nLine two about cats too.\n\nUnrelated dogs paragraph here.") == {}
    assert _sections("Impact.\nOrders failed for an hour.\nAction items.\nWe add a check.") == {
        "Impact.": ["Orders failed for an hour."], "Action items.": ["We add a check."]}
    assert _sections("Impact. Orders failed for an hour.") == {}  # not alone on its line
    chat = "<|im_start|>user\nImpact.\n<|im_end|>\n<|im_start|>assistant\nIt failed.<|im_end|>"
    assert _sections(chat) == {}  # a turn ends the section: the heading has none
