"""One channel per runtime notice: what the caller's code should change is a warning at its line; what an operator
should see is a WARNING record; never both for one event. Wiring on the tiny random checkpoint."""

from __future__ import annotations

import logging
import warnings

from tests.notice_helpers import logged_only

LONG = "word " * 3000  # one sentence far over the splitter's length cap: cut into pieces, some kept


def test_a_sentence_cut_for_length_is_logged_once_and_not_warned(tiny, caplog):
    with logged_only(caplog, "longer than .* characters were cut", count=1):
        result = tiny.compress(LONG, question="x?", rate=0.5)
    assert result.truncated_sentences == 1


def test_a_budget_too_small_for_a_sentence_is_warned_and_not_logged(tiny, caplog):
    text = "The harbour opened at dawn after a long night of storms over the bay. Boats left."
    with caplog.at_level(logging.DEBUG), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = tiny.compress(text, question="When did it open?", target_tokens=4)
    assert result.oversized_sentences >= 1
    warned = [warning for warning in caught if "larger than" in str(warning.message)]
    assert len(warned) == 1 and warned[0].filename == __file__
    assert not [record for record in caplog.records if "larger than" in record.getMessage()]
