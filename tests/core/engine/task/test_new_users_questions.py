"""A new user pastes five documents of a small company and asks about them wherever they write the question: the
shipped tpc-mini keeps the question, as written, and at rate 0.2 the sentence that answers it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.core.engine.task.company_documents import DOCUMENTS, QUESTIONS, joined


def _note_between(question: str) -> str:
    note = (f"A quick note before the remaining files. {question} The other documents are attached below, in the "
            f"order I received them.")
    return "\n\n".join([*DOCUMENTS[:2], note, *DOCUMENTS[2:]])


def _inside_a_paragraph(question: str) -> str:
    paragraphs = DOCUMENTS[2].split("\n\n")
    paragraphs[1] = f"{paragraphs[1]} {question}"
    return "\n\n".join([*DOCUMENTS[:2], "\n\n".join(paragraphs), *DOCUMENTS[3:]])


def _email(question: str) -> str:
    asked = question[:1].lower() + question[1:]
    return f"Hi team,\n\nI went through the documents below and could you tell me: {asked} Thanks\n\n{joined()}"


PLACEMENTS: dict[str, Callable[[str], str]] = {
    "before 'Please answer based on the above.'": lambda q: f"{joined()}\n\n{q}\n\nPlease answer based on the above.",
    "before 'Answer concisely.'": lambda q: f"{joined()}\n\n{q}\n\nAnswer concisely.",
    "before 'Thanks!'": lambda q: f"{joined()}\n\n{q}\n\nThanks!",
    "in a note between documents": _note_between,
    "at the top": lambda q: f"{q}\n\n{joined()}",
    "at the end": lambda q: f"{joined()}\n\n{q}",
    "under '## Ask'": lambda q: f"## Documents\n\n{joined()}\n\n## Ask\n\n{q}",
    "in an e-mail": _email,
    "inside a paragraph mid-prompt": _inside_a_paragraph,
    "as its own paragraph mid-prompt": lambda q: "\n\n".join([*DOCUMENTS[:2], q, *DOCUMENTS[2:]]),
}


@pytest.mark.slow
@pytest.mark.parametrize("placement", list(PLACEMENTS))
def test_the_question_and_its_answer_are_kept_wherever_it_is_asked(tpc_mini, placement: str) -> None:
    for question, answer in QUESTIONS:
        prompt = PLACEMENTS[placement](question)
        result = tpc_mini.compress(prompt, rate=0.2)
        written = question if placement != "in an e-mail" else question[:1].lower() + question[1:]
        assert written in result.compressed_prompt, (question, result.task_source, result.task_description)
        assert answer in result.compressed_prompt, (question, result.task_description)
        assert result.compressed_tokens <= result.budget or result.over_budget
