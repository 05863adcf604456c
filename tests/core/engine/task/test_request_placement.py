"""Where a prompt writes its request, from structure alone (tpc_core.engine.task.placement): pure, no model."""

from __future__ import annotations

import pytest

from benchmarks.harness.stock_templates import EVERYDAY_SHAPES, STOCK_TEMPLATES, fill
from tpc_core.engine.task.placement import PlaceKind, place_request, reads_as_request
from tpc_core.segmentation import split_sentences

MATERIAL = ("The lease starts on 1 May 2024 and runs for twelve months. Rent of 1,200 euros is due on the first day "
            "of each month.\nThe tenant pays for water and electricity. The landlord repairs the roof and the "
            "heating.\n\nA deposit of two months' rent is held by the agency. It is returned within thirty days "
            "after the keys are handed back.\n\nSigned on the date first written above by Maria Delgado")

REQUESTS = ("When is the rent due?", "Summarize the obligations of the tenant.",
            "when is the deposit returned", "Please list every cost the tenant pays. Then say who repairs the roof.")


def placed_text(prompt: str) -> list[str]:
    """The text of every candidate place, each from its first sentence's start to its last sentence's end."""
    spans = split_sentences(prompt)
    place = place_request(prompt, spans)
    if place is None:
        return []
    return [prompt[spans[c[0]][0]:spans[c[-1]][1]] for c in place.candidates]


@pytest.mark.parametrize("request_text", REQUESTS)
@pytest.mark.parametrize("template", sorted({**STOCK_TEMPLATES, **EVERYDAY_SHAPES}.items()))
def test_every_stock_template_places_the_written_request(template: tuple[str, str], request_text: str) -> None:
    prompt, written = fill(template[1], MATERIAL, request_text)
    assert any(written in text for text in placed_text(prompt)), (template[0], placed_text(prompt))


def test_a_bare_document_places_nothing() -> None:
    assert place_request(MATERIAL, split_sentences(MATERIAL)) is None


def test_a_passage_list_with_question_titles_places_nothing() -> None:
    documents = ("Document [1] (Title: Where Have All the Flowers Gone?) \"Where Have All the Flowers Gone?\" is a "
                 "folk song written by Pete Seeger in 1955.\n\nDocument [2] (Title: Pete Seeger) Pete Seeger was an "
                 "American folk singer and social activist who recorded many songs.")
    assert place_request(documents, split_sentences(documents)) is None


def test_few_shot_examples_place_only_the_unanswered_question() -> None:
    solved = "\n\n".join(f"Question: Sam has {n} apples and buys {n} more. How many does he have?\nLet's think step "
                         f"by step\nHe has {n} + {n} = {2 * n} apples.\nThe answer is {2 * n}" for n in range(2, 6))
    request = "Question: Ann has 7 pears and eats 2. How many are left?\nLet's think step by step"
    prompt = f"{solved}\n\n{request}"
    texts = placed_text(prompt)
    assert texts and texts[0] == request
    assert place_request(solved, split_sentences(solved)) is None  # solved examples alone ask nothing


def test_a_question_before_the_material_is_placed_beside_a_label_inside_it() -> None:
    prompt, written = fill(STOCK_TEMPLATES["langchain_rag"], "Input: a list of numbers.\nOutput: their sum.\n\n"
                           + MATERIAL, "Who repairs the heating?")
    assert any(written in text for text in placed_text(prompt))


def test_multiple_choice_options_stay_with_their_question() -> None:
    prompt = (MATERIAL + "\n\nQuestion: Who repairs the roof?\nA: The tenant.\nB: The landlord.\nC: The agency.\n"
              "Answer:")
    assert placed_text(prompt)[0] == ("Question: Who repairs the roof?\nA: The tenant.\nB: The landlord.\n"
                                      "C: The agency.")


def test_the_latest_user_turn_of_a_chat_is_placed_and_an_older_one_is_not() -> None:
    prompt = ("<|im_start|>user\nWhat does the lease say about pets?<|im_end|>\n<|im_start|>assistant\nNothing."
              "<|im_end|>\n<|im_start|>user\n" + MATERIAL + "\n\nwho pays the electricity<|im_end|>\n"
              "<|im_start|>assistant\n")
    spans = split_sentences(prompt)
    place = place_request(prompt, spans)
    assert place is not None and place.kind is PlaceKind.LAST_BLOCK
    texts = placed_text(prompt)
    assert any("who pays the electricity" in text for text in texts)
    assert not any("pets" in text for text in texts)


def test_a_transcript_ending_on_a_speaker_line_places_nothing() -> None:
    transcript = "\n".join(f"Speaker {k % 2}: We discussed item {k} and agreed to move on." for k in range(12))
    prompt = transcript + "\n\nProfessor E: Are all members content?\nPostdoc B: Yes."
    assert place_request(prompt, split_sentences(prompt)) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("Summarize the obligations of the tenant.", True), ("what is the termination notice period", True),
    ("Could you check the deposit terms?", True), ("The tenant pays water.", False),
    ("When in the Course of human events, it becomes necessary for one people to dissolve the bands.", False),
    ("https://github.com/example/repo", False),
])
def test_reads_as_request(text: str, expected: bool) -> None:
    assert reads_as_request(text) is expected


def test_placement_and_grounding_doctests() -> None:
    import doctest

    from tpc_core.engine.task import grounding, placement

    assert doctest.testmod(placement).failed == 0
    assert doctest.testmod(grounding).failed == 0
