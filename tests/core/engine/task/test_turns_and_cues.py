"""Speaker turns of a chat flattened to text and the wording cues of a request: layout features of
the request finder that do not depend on one template."""

from __future__ import annotations

import random

import pytest

from synthesis.layouts import LAYOUTS, render
from tpc_core.engine.task.cues import addresses_reader, imperative_start
from tpc_core.engine.task.request.features import FEATURE_NAMES, layout_features
from tpc_core.engine.task.turns import sentence_roles
from tpc_core.segmentation import get_splitter

_CHATS = {
    "chatml": ["<|im_start|>system", "Be brief.<|im_end|>", "<|im_start|>user", "Who won?<|im_end|>",
               "<|im_start|>assistant"],
    "llama3": ["<|begin_of_text|><|start_header_id|>system<|end_header_id|>", "Be brief.<|eot_id|>",
               "<|start_header_id|>user<|end_header_id|>", "Who won?<|eot_id|>",
               "<|start_header_id|>assistant<|end_header_id|>"],
    "gemma": ["<start_of_turn>user", "Be brief.", "<start_of_turn>user", "Who won?<end_of_turn>",
              "<start_of_turn>model"],
    "phi": ["<|system|>", "Be brief.<|end|>", "<|user|>", "Who won?<|end|>", "<|assistant|>"],
    "plain": ["System: be brief.", "Be brief.", "User: hello.", "Who won?", "Assistant:"],
}


@pytest.mark.parametrize("name", sorted(_CHATS))
def test_each_chat_template_gives_the_user_turn_to_the_question(name):
    roles = sentence_roles(_CHATS[name])
    assert roles[3] == "user" and roles[4] == "assistant"
    assert roles[1] in ("system", "user")


def test_llama2_inst_blocks_and_a_later_assistant_turn():
    roles = sentence_roles(["<s>[INST] <<SYS>>", "Be brief.", "<</SYS>>", "Who won? [/INST]", "Spain won.",
                            "</s><s>[INST] And in 2014? [/INST]"])
    assert roles[1] == "system" and roles[3] == "user" and roles[4] == "assistant"


@pytest.mark.parametrize("sentences", [
    ["Question: who won?", "Answer:"],                      # labels, no conversation
    ["Model: Toyota Corolla.", "Year: 2004."],              # one speaker-like label is no conversation
    ["The court heard the agent.", "User reviews were mixed."],  # role words inside prose
    [],
])
def test_prompts_that_mark_no_conversation_have_no_roles(sentences):
    assert sentence_roles(sentences) == [None] * len(sentences)


def test_turn_features_mark_the_last_user_turn_only():
    sentences = ["System: be brief.", "User: here are my notes.", "The match ended 1-0.", "Assistant: Thanks.",
                 "User: who scored?", "Assistant:"]
    features = layout_features(sentences)
    column = {name: features[:, index].tolist() for index, name in enumerate(FEATURE_NAMES)}
    assert column["turn_user"] == [0, 1, 1, 0, 1, 0]
    assert column["turn_last_user"] == [0, 0, 0, 0, 1, 0]
    assert column["turn_other"] == [1, 0, 0, 1, 0, 1]


@pytest.mark.parametrize(("text", "addresses", "imperative"), [
    ("Could you find out who won the final?", True, False),
    ("Please describe the main result.", True, True),
    ("Verify the following claim: the bridge opened in 1932.", False, True),
    ("Label the statement as true or false.", False, True),
    ("The bridge opened in 1932 after four years of work.", False, False),
    ("Verification of the claims took a year.", False, False),
    ("YOUR CALL: PLEASE reply.", True, False),  # any case
    ("The youth team won.", False, False),  # a word's start is not the word
    ("Kindly note the date.", True, False),
    ("Pleaſe reply, café owner.", True, False),  # non-ASCII: the pattern's own case folding (long s)
    ("I'd like the total.", True, False),
])
def test_request_wording_cues(text, addresses, imperative):
    assert addresses_reader(text) is addresses
    assert imperative_start(text) is imperative


def test_the_early_cue_word_feature_in_any_case():
    index = FEATURE_NAMES.index("cue_early")
    features = layout_features(["QUESTION: who won?", "The questionnaire was long.", "Our task (in short) is this.",
                                "Tâche: the Ask.", "Nothing to see."])
    assert features[:, index].tolist() == [1.0, 0.0, 1.0, 1.0, 0.0]


def test_a_label_before_an_imperative_still_counts():
    index = FEATURE_NAMES.index("imperative_start")
    features = layout_features(["Verify the following claim: the sky is green.", "Task: explain the result.",
                                "Grass is green."])
    assert features[:, index].tolist() == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("layout", ["chatml", "llama3", "transcript", "gemma", "llama2", "phi", "human_assistant"])
def test_rendered_chat_layouts_put_the_request_in_the_last_user_turn(layout):
    material = "Document 1: Bridges\nThe bridge opened in 1932.\n\nDocument 2: Tunnels\nThe tunnel opened in 1950."
    rendered = render(layout, "When did the bridge open?", material, random.Random(4))
    spans = get_splitter("regex").spans(rendered.prompt)
    sentences = [rendered.prompt[s:e] for s, e in spans]
    start, end = rendered.span
    request = [i for i, (s, e) in enumerate(spans) if s < end and start < e]
    features = layout_features(sentences)
    last_user = features[:, FEATURE_NAMES.index("turn_last_user")]
    assert request and all(last_user[i] == 1.0 for i in request)
    assert layout in LAYOUTS
