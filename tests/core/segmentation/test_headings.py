"""Bare headings (:mod:`tpc_core.segmentation.headings`): which lines only name a section, and which sentences
each one's section holds."""

from __future__ import annotations

import warnings

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


POSTMORTEM = ("Checkout outage postmortem. On 14 March the checkout service failed for an hour after a configuration "
              "change. The change set a connection limit too low, which was hard to spot.\n\n"
              "Impact. Orders failed for 62 minutes and about 4,100 customers saw an error page. Support received 380 "
              "tickets during the outage.\n\n"
              "What went well. The on-call engineer was paged within two minutes. The rollback itself took four "
              "minutes.\n\n"
              "What went wrong. The deployment did not use a canary stage. The dashboard showed no error rate for the "
              "pool.\n\n"
              "Action items. Add a canary stage to every configuration deployment. Alert on pool exhaustion.")
MANUAL = ("Contents of the box. The kit holds a filter jug, two cartridges and a cleaning brush.\n\n"
          "Installation. Rinse the jug in warm water and dry it before first use.\n\n"
          "Flushing a new cartridge. Soak the cartridge in cold water for fifteen minutes, then run two jugs through "
          "it.\n\n"
          "Daily use. Fill the top chamber and wait about five minutes for the water to pass through.")


def test_run_in_headings_open_their_paragraphs_and_their_sections_follow_on_the_same_line():
    sections = _sections(MANUAL)
    assert list(sections) == ["Contents of the box.", "Installation.", "Flushing a new cartridge.", "Daily use."]
    assert sections["Installation."] == ["Rinse the jug in warm water and dry it before first use."]
    assert _sections(POSTMORTEM)["What went well."] == ["The on-call engineer was paged within two minutes.",
                                                        "The rollback itself took four minutes."]


def test_a_short_sentence_that_opens_a_paragraph_is_no_run_in_heading():
    text = "Rent is due. Pay it on the first of the month.\n\nImpact. Orders failed.\n\nNotes. We rolled back."
    assert list(_sections(text)) == ["Impact.", "Notes."]
    # One run-in label alone in a document is a short sentence: sections come in sets.
    assert _sections("Prices rose. Costs fell in the spring.\n\nWages stayed where they were last year.") == {}


@pytest.mark.parametrize("document", [POSTMORTEM, MANUAL], ids=["postmortem", "manual"])
@pytest.mark.parametrize("question", [None, "Why did it fail, and how long do I soak the cartridge?"])
def test_a_run_in_heading_is_kept_only_with_a_sentence_of_its_section(tpc_mini, document, question):
    texts = [document[start:end] for start, end in split_sentences(document)]
    sections = {}  # each paragraph's first sentence is its run-in heading, the rest its section
    for paragraph in document.split("\n\n"):
        first, *rest = [paragraph[start:end] for start, end in split_sentences(paragraph)]
        sections[first] = set(rest)
    for rate in (0.2, 0.3, 0.4, 0.5):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = tpc_mini.compress(document, question=question, rate=rate, describe_bare=False)
        # a sentence larger than a small budget is skipped, and the caller is told
        oversized = [w for w in caught if "larger than the whole budget" in str(w.message)]
        assert len(oversized) == (1 if result.oversized_sentences else 0)
        kept = [sentence.text for sentence in result.kept_sentences()]
        assert result.compressed_tokens <= result.budget
        assert [text for text in texts if text in kept] == kept  # verbatim, in order
        for heading in set(kept) & set(sections):
            assert sections[heading] & set(kept), (rate, heading, kept)
