"""The README demo, ``tpc compress examples/data/declaration_of_independence.txt --rate 0.2``: a bare document.

With no question and no written request, the kept sentences must still read as a summary of the text: they
must include its key statements. The statements below were chosen by reading the document,
BEFORE the salience head was trained or selected, and were not changed afterwards. They are the
purpose of the document, its founding principle, the government-by-consent clause that follows from it, and
the thesis that the list of grievances supports. All four together are about 175 of the ~230 tokens that rate
0.2 allows, so a sensible summary has room for them. (The closing declaration itself is one ~170-token sentence:
it cannot sit beside them at this budget, so it is not required here.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

DEMO_TEXT = Path(__file__).resolve().parents[2] / "examples" / "data" / "declaration_of_independence.txt"

# Chosen before training (see the module docstring): the opening words of each key sentence.
KEY_STATEMENTS = (
    "When in the Course of human events, it becomes necessary for one people to dissolve the political bands",
    "We hold these truths to be self-evident, that all men are created equal",
    "That to secure these rights, Governments are instituted among Men",
    "The history of the present King of Great Britain is a history of repeated injuries and usurpations",
)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "Not met: the coverage rule kept 2 of the 4 key statements, the shipped salience "
    "head (emb-mlp, permissive data, +lead2.0) keeps 3 of 4: it drops 'The history of the present King ...'. "
    "The statements were fixed before training and are not changed to fit; strict, so a fix shows up here."))
def test_the_readme_demo_keeps_the_documents_key_statements(tpc_mini):
    text = DEMO_TEXT.read_text(encoding="utf-8")
    result = tpc_mini.compress(text, rate=0.2)  # exactly what `tpc compress FILE --rate 0.2` calls
    kept = [sentence.text for sentence in result.sentences if sentence.kept]
    missing = [key for key in KEY_STATEMENTS if not any(sentence.startswith(key) for sentence in kept)]
    assert not missing, f"key statements dropped: {missing}; kept: {kept}"
    assert result.task_source != "question" and 0 < result.compressed_tokens <= result.budget
    # verbatim and in order: every kept sentence is a slice of the text, at increasing offsets
    offsets = [text.index(sentence) for sentence in kept]
    assert offsets == sorted(offsets)
