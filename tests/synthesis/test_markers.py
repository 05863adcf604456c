"""The chat shells write the library's chat-template tokens (synthesis/markers.py), and the text they write is the
text the training data was made of: byte for byte, for every template."""

from __future__ import annotations

import random

import pytest

from synthesis.markers import template_token
from synthesis.shells import CHAT_TEMPLATES, Slots, render_shell
from tpc_core.segmentation.vocabulary import (
    CHAT_TEMPLATES as LIBRARY_TEMPLATES,
)
from tpc_core.segmentation.vocabulary import (
    ChatTemplate,
    Marker,
    MarkerKind,
    literal,
    read_marker,
    registered,
)

# One conversation (a system prompt, the material in a user turn, an answer, the request in the last turn) in each
# template, as the generated request-finder data writes it.
WRITTEN = {
    "chatml": "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nUse these notes:\n\nThe tunnel.<|im_end|>\n"
              "<|im_start|>assistant\nOkay.<|im_end|>\n<|im_start|>user\nWho built the tunnel?<|im_end|>\n"
              "<|im_start|>assistant\n",
    "gemma": "<bos><start_of_turn>user\nBe brief.\n\nUse these notes:\n\nThe tunnel.<end_of_turn>\n"
             "<start_of_turn>model\nOkay.<end_of_turn>\n<start_of_turn>user\nWho built the tunnel?<end_of_turn>\n"
             "<start_of_turn>model\n",
    "human_ai": "System: Be brief.\n\nHuman: Use these notes:\n\nThe tunnel.\n\nAI: Okay.\n\nHuman: Who built the "
                "tunnel?\n\nAI:",
    "llama2": "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nUse these notes:\n\nThe tunnel. [/INST] Okay. </s><s>[INST] "
              "Who built the tunnel? [/INST]",
    "llama3": "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>"
              "user<|end_header_id|>\n\nUse these notes:\n\nThe tunnel.<|eot_id|><|start_header_id|>assistant"
              "<|end_header_id|>\n\nOkay.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho built the tunnel?"
              "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "mistral": "<s>[INST] Be brief.\n\nUse these notes:\n\nThe tunnel. [/INST] Okay.</s>[INST] Who built the tunnel? "
               "[/INST]",
    "phi3": "<|system|>\nBe brief.<|end|>\n<|user|>\nUse these notes:\n\nThe tunnel.<|end|>\n<|assistant|>\n"
            "Okay.<|end|>\n<|user|>\nWho built the tunnel?<|end|>\n<|assistant|>\n",
    "user_assistant": "System: Be brief.\n\nUser: Use these notes:\n\nThe tunnel.\n\nAssistant: Okay.\n\n"
                      "User: Who built the tunnel?\n\nAssistant:",
}
SLOTS = Slots(request=(("Who built the tunnel?", True),), labelled=False, vocabulary=("Question", "Context"),
              casing="title", material="The tunnel.", position="own_turn", system="Be brief.")


@pytest.mark.parametrize("shell", sorted(CHAT_TEMPLATES))
def test_every_chat_shell_writes_the_text_the_data_was_made_of(shell):
    prompt, spans = render_shell(shell, SLOTS, random.Random(3))
    assert prompt == WRITTEN[shell]
    assert [prompt[start:end] for start, end in spans] == ["Who built the tunnel?"]


def test_the_shells_write_only_library_templates_and_labels():
    transcripts = {"user_assistant", "human_ai"}
    assert set(CHAT_TEMPLATES) - transcripts - {"mistral"} <= set(LIBRARY_TEMPLATES)


@pytest.mark.parametrize(("template", "kind", "role", "token"), [
    ("chatml", MarkerKind.OPEN, "user", "<|im_start|>user"),
    ("chatml", MarkerKind.CLOSE, None, "<|im_end|>"),
    ("chatml", MarkerKind.START, None, ""),
    ("llama3", MarkerKind.OPEN, "system", "<|start_header_id|>system<|end_header_id|>"),
    ("llama3", MarkerKind.START, None, "<|begin_of_text|>"),
    ("phi3", MarkerKind.OPEN, "assistant", "<|assistant|>"),
    ("gemma", MarkerKind.OPEN, "model", "<start_of_turn>model"),
    ("llama2", MarkerKind.OPEN, "assistant", "[/INST]"),
    ("llama2", MarkerKind.RESUME, None, "<</SYS>>"),
])
def test_a_token_is_the_library_marker_written_out(template, kind, role, token):
    assert template_token(template, kind, role) == token
    if token:
        assert read_marker(token).kind is kind


def test_a_token_follows_the_library_table_and_is_checked_against_it():
    with pytest.raises(KeyError):
        template_token("no_such_template", MarkerKind.OPEN, "user")
    with pytest.raises(ValueError, match="names its role"):
        template_token("chatml", MarkerKind.OPEN)
    added = ChatTemplate("probe_turns", (Marker(r"<\|turn\|>(?P<role>[a-z]+)", MarkerKind.OPEN),
                                         literal("<|/turn|>", MarkerKind.CLOSE)))
    with registered(added):
        assert template_token("probe_turns", MarkerKind.OPEN, "user") == "<|turn|>user"
        assert template_token("probe_turns", MarkerKind.CLOSE) == "<|/turn|>"
