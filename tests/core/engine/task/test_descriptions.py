"""What the shipped tpc-mini writes as the task description of real prompts (prompt-agnostic mode).

A prompt that writes its question must get that question back (its key words, options included); a
summarisation prompt and a bare document must get a request to summarise, never an invented question.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "data"
DECLARATION = (EXAMPLES / "declaration_of_independence.txt").read_text(encoding="utf-8")
STOPWORDS = {"the", "a", "an", "of", "in", "is", "was", "what", "which", "who", "to", "did", "does", "for", "on",
             "and", "by", "how", "with", "that", "from", "at", "as", "be", "are", "were"}


def _key_words(question: str) -> set[str]:
    return {w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS}


def _restates(description: str, question: str) -> bool:
    wanted = _key_words(question)
    return len(wanted & _key_words(description)) >= 0.8 * len(wanted)


@pytest.mark.slow
def test_the_written_question_of_the_bundled_example_comes_back(tpc_mini):
    question = json.loads((EXAMPLES / "declaration_of_independence.json").read_text(encoding="utf-8"))["question"]
    prompt = DECLARATION + f"\n\nQuestion: {question}\nAnswer:"
    result = tpc_mini.compress(prompt, rate=0.2)
    assert result.task_source == "extracted" and _restates(result.task_description, question)


@pytest.mark.slow
def test_dev_prompts_in_longbench_and_held_out_layouts_get_their_question(tpc_mini, dev_rows):
    from synthesis.templates import QA_DEV_TEMPLATES, fill_template

    rows = [dev_rows[i] for i in (0, 60, 120)]
    prompts = [fill_template(QA_DEV_TEMPLATES[row["task_type"]], row["context"], row["question"]) for row in rows]
    # a layout the descriptor never saw in training: the question first, in markdown sections
    prompts += [f"### Question\n{row['question']}\n\n### Context\n{row['context']}" for row in rows]
    descriptions = tpc_mini.describe_task(prompts)
    for description, row in zip(descriptions, rows + rows):
        assert _restates(description, row["question"]), (description, row["question"])


@pytest.mark.slow
def test_summarisation_prompts_and_bare_documents_ask_for_a_summary(tpc_mini):
    report = ("You are given a report by a government agency. Write a one-page summary of the report.\n\nReport:\n"
              f"{DECLARATION}\n\nNow, write a one-page summary of the report.\n\nSummary:")
    written = tpc_mini.compress(report, rate=0.2)  # the request is written: it is the task, kept verbatim
    assert written.task_source == "extracted" and written.request_sentences >= 1
    assert "Now, write a one-page summary of the report." in written.compressed_prompt
    assert re.search(r"summar", written.task_description, re.IGNORECASE), written.task_description
    bare = tpc_mini.compress(DECLARATION, rate=0.2)
    assert bare.task_source in ("generated", "fallback") and bare.request_sentences == 0  # nothing is written
    assert re.search(r"summar", bare.task_description, re.IGNORECASE), bare.task_description
    assert "?" not in bare.task_description  # no invented question


# The description is the request's own words: no template tokens, no wrapper, no field name, no speaker label.
QUESTION = "Were Scott Derrickson and Ed Wood of the same nationality?"
CHAT_PROMPTS = {
    "chatml": "<|im_start|>system\nBe brief.<|im_end|>\n"
              f"<|im_start|>user\nEd Wood was American.\n{QUESTION}<|im_end|>\n"
              "<|im_start|>assistant\n",
    "llama3": "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nEd Wood was American. "
              f"{QUESTION}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "llama2": f"<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nEd Wood was American. {QUESTION} [/INST]",
    "mistral": f"<s>[INST] Ed Wood was American. {QUESTION} [/INST]",
    "gemma": f"<bos><start_of_turn>user\nEd Wood was American. {QUESTION}<end_of_turn>\n<start_of_turn>model\n",
    "phi3": f"<|user|>\nEd Wood was American. {QUESTION}<|end|>\n<|assistant|>\n",
    "plain": f"System: Be brief.\nUser: {QUESTION}\nEd Wood was American.\nAssistant:",
    "human_ai": f"Human: Ed Wood was American. {QUESTION}\n\nAI:",
}


@pytest.mark.parametrize("name", sorted(CHAT_PROMPTS))
def test_a_request_in_every_chat_template_is_described_in_its_own_words(name):
    from tpc_core.engine.task.request.text import request_text
    from tpc_core.segmentation import is_turn_marker, split_sentences

    prompt = CHAT_PROMPTS[name]
    sentences = [prompt[start:end] for start, end in split_sentences(prompt)]
    question = next(i for i, sentence in enumerate(sentences) if "nationality" in sentence)
    # the finder may pick the markers around the question too (the turn's opening marker or label, its closing one)
    around = [i for i in (question - 1, question + 1) if 0 <= i < len(sentences) and is_turn_marker(sentences[i])]
    assert request_text(sentences, [question]) == QUESTION
    assert request_text(sentences, sorted([question, *around])) == QUESTION


@pytest.mark.parametrize("sentence", [
    f"{QUESTION}<|im_end|>",
    f"{QUESTION}<|eot_id|><|start_header_id|>assistant<|end_header_id|>",
    f"<|im_start|>user\n{QUESTION}<|im_end|>\n<|im_start|>assistant\nThey were both American.",
    f"<start_of_turn>user\n{QUESTION}<end_of_turn>",
    f"[INST] {QUESTION} [/INST]",
    f"<|user|>\n{QUESTION}<|end|>",
    f"User: {QUESTION}",
    f"### Human: {QUESTION}",
    f"**User:** Question: {QUESTION}",
])
def test_template_tokens_and_speaker_labels_never_reach_the_description(sentence):
    """Sentences as a custom splitter (or a cache made before markers were cut) can still hand them over."""
    from tpc_core.engine.task.request.text import request_text

    assert request_text([sentence], [0]) == QUESTION


@pytest.mark.parametrize(("sentences", "picked", "expected"), [
    (["User: when did the old age pension start in australia"], [0],
     "when did the old age pension start in australia"),
    (["User: Which of these is red?", "A. ruby", "B. jade"], [0], "Which of these is red? A. ruby B. jade"),
    (["User: Which of these is red?", "A. ruby", "B. jade"], [2], "Which of these is red? A. ruby B. jade"),
    (["User:", "Which of these is red?", "A. ruby", "B. jade"], [0, 1], "Which of these is red? A. ruby B. jade"),
    (["Customer request: Please refund the duplicate charge."], [0], "Please refund the duplicate charge."),
    (["Message: my card was declined twice"], [0], "my card was declined twice"),
    (["question: what were total sales"], [0], "what were total sales"),
    (['  "question": "Who wrote it?",'], [0], "Who wrote it?"),
    (["<question>Who wrote it?</question>"], [0], "Who wrote it?"),
    (['Key: "a1b2"'], [0], 'Key: "a1b2"'),  # a label that is part of the request stays
    (["Extract the value of the key."], [0], "Extract the value of the key."),
])
def test_wrappers_and_field_names_are_peeled_off(sentences, picked, expected):
    from tpc_core.engine.task.request.text import request_text

    assert request_text(sentences, picked) == expected


def test_markers_alone_fall_back_to_the_sentences_that_are_not_markers():
    from tpc_core.engine.task.request.text import request_text

    assert request_text(["<|im_start|>user", "Question:", "<|im_end|>"], [0, 1, 2]) == "Question:"


@pytest.mark.parametrize("module", ["tpc_core.engine.task.request.text", "tpc_core.engine.task.grounding"])
def test_request_text_and_grounding_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["chatml", "llama3", "plain"])
def test_tpc_mini_describes_a_flattened_chat_without_its_markup(tpc_mini, name):
    context = " ".join(["Ed Wood was an American filmmaker.", "Scott Derrickson is an American director.",
                        "Bananas grow in tropical regions.", "The Eiffel Tower is in Paris."] * 3)
    prompt = CHAT_PROMPTS[name].replace("Ed Wood was American.", context)
    result = tpc_mini.compress(prompt, rate=0.5)
    description = result.task_description
    assert result.task_source == "extracted" and QUESTION in description, description
    # which neighbours the shipped head picks with the question is the finder's business; the markup is not there
    assert not re.search(r"<\||\|>|<start|<end|\[/?INST\]|<</?SYS>>|\b(?:User|System|Assistant)\s*:", description)
