"""A prompt with no question whose task falls back, although a sentence outside its material asks the reader, gets
one warning per call at the caller's line, with the sentence's character offsets and not its text; index-time
compression of documents does not warn. With the shipped tpc-mini."""

from __future__ import annotations

import warnings

import pytest

from tpc_core.engine.task.missed import MissedRequestWarning, index_time

MATERIAL = ("The museum opens at nine and closes at six. Tickets cost twelve euros for adults. Children under "
            "twelve enter for free. The cafe on the ground floor serves lunch from noon.\n\n"
            "The east wing shows paintings of the nineteenth century. The west wing holds the sculpture garden. "
            "Guided tours start every hour from the main hall.\n\n")
# Two questions to the reader in the middle of the material: no rule places either (each asks in neither the first
# person nor after a lead-in, and material that asks twice may be asking itself), so the task falls back.
ASKED = "Do you know whether the tours run on Sundays?"
ALSO = "Do you know if the cafe takes cards?"
PROMPT = f"{MATERIAL}{ASKED}\n\nThe shop sells postcards and books.\n\n{ALSO}\n\nThe shop closes at five."


def _caught(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, MissedRequestWarning)]


@pytest.mark.slow
def test_a_fallback_with_a_question_to_the_reader_warns_once_with_offsets(tpc_mini) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = tpc_mini.compress_batch([PROMPT, PROMPT], rate=0.3)
    missed = [w for w in caught if issubclass(w.category, MissedRequestWarning)]
    assert [result.task_source for result in results] == ["fallback", "fallback"]
    assert len(missed) == 1
    message = str(missed[0].message)
    start = PROMPT.index(ASKED)
    assert f"characters {start}-{start + len(ASKED)} of document 0" in message
    assert "Sundays" not in message and "cafe" not in message
    assert "1 more prompt" in message
    assert missed[0].filename == __file__


@pytest.mark.slow
def test_a_pointer_at_nothing_warns_where_a_sentence_asks_the_reader(tpc_mini) -> None:
    prompt = f"{PROMPT}\n\nPlease respond to it."
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = tpc_mini.compress(prompt, rate=0.3)
    missed = [w for w in caught if issubclass(w.category, MissedRequestWarning)]
    assert "Please respond to it." in result.compressed_prompt
    assert result.task_source == "fallback"
    assert len(missed) == 1 and missed[0].filename == __file__


@pytest.mark.slow
def test_a_prompt_whose_request_is_found_does_not_warn(tpc_mini) -> None:
    assert _caught(lambda: tpc_mini.compress(f"{MATERIAL}When does the museum open?", rate=0.3)) == []


@pytest.mark.slow
def test_material_alone_does_not_warn(tpc_mini) -> None:
    assert _caught(lambda: tpc_mini.compress(MATERIAL * 3, rate=0.3)) == []


@pytest.mark.slow
def test_index_time_compression_does_not_warn(tpc_mini) -> None:
    def compress() -> None:
        with index_time():
            tpc_mini.compress_batch([PROMPT], rate=0.3)

    assert _caught(compress) == []
