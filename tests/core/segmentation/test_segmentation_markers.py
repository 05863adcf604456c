"""Structure-aware splitting: chat-template markers are spans of their own, and line-structured formats keep
their lines apart (tpc_core.segmentation.markers and the key-line rules of tpc_core.segmentation.layout)."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tpc_core.segmentation import get_splitter, markers, split_sentences
from tpc_core.segmentation.markers import is_turn_marker, marker_spans

SENTENCE_BACKENDS = ["nupunkt", "regex"]


def pieces(text: str, splitter: str = "nupunkt") -> list[str]:
    return [text[start:end] for start, end in split_sentences(text, splitter)]


# Every template tpc_core.engine.task.turns reads, with the exact spans the default splitter gives.
TEMPLATES = {
    "chatml": ("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nOne. Two. Three.<|im_end|>\n"
               "<|im_start|>assistant\n",
               ["<|im_start|>system", "Be brief.", "<|im_end|>", "<|im_start|>user", "One.", "Two.", "Three.",
                "<|im_end|>", "<|im_start|>assistant"]),
    "llama3": ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
               "<|start_header_id|>user<|end_header_id|>\n\nWhat is his nationality? Tell me.<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n",
               ["<|begin_of_text|>", "<|start_header_id|>system<|end_header_id|>", "Be brief.", "<|eot_id|>",
                "<|start_header_id|>user<|end_header_id|>", "What is his nationality?", "Tell me.", "<|eot_id|>",
                "<|start_header_id|>assistant<|end_header_id|>"]),
    "llama2": ("<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nDoc one. What is it? [/INST] It is X. </s><s>[INST] "
               "And Y? [/INST]",
               ["<s>", "[INST]", "<<SYS>>", "Be brief.", "<</SYS>>", "Doc one.", "What is it?", "[/INST]",
                "It is X.", "</s>", "<s>", "[INST]", "And Y?", "[/INST]"]),
    "mistral": ("<s>[INST] Doc one. Who won? [/INST] Alice won.</s>[INST] Why? [/INST]",
                ["<s>", "[INST]", "Doc one.", "Who won?", "[/INST]", "Alice won.", "</s>", "[INST]", "Why?",
                 "[/INST]"]),
    "gemma": ("<bos><start_of_turn>user\nDoc one. Who won?<end_of_turn>\n<start_of_turn>model\n",
              ["<bos>", "<start_of_turn>user", "Doc one.", "Who won?", "<end_of_turn>", "<start_of_turn>model"]),
    "phi3": ("<|system|>\nBe brief.<|end|>\n<|user|>\nDoc one. Who won?<|end|>\n<|assistant|>\n",
             ["<|system|>", "Be brief.", "<|end|>", "<|user|>", "Doc one.", "Who won?", "<|end|>", "<|assistant|>"]),
    "plain": ("System: Be brief.\nUser: when did the old age pension start in australia\nThe pension began in 1909. "
              "It was paid by the states.\nAssistant:",
              ["System:", "Be brief.", "User:", "when did the old age pension start in australia",
               "The pension began in 1909.", "It was paid by the states.", "Assistant:"]),
    "human_ai": ("Human: Doc one. Who won?\nAI: Alice.\nHuman: Why?\nAI:",
                 ["Human:", "Doc one.", "Who won?", "AI:", "Alice.", "Human:", "Why?", "AI:"]),
    "markdown_labels": ("### User: Who won?\n### Assistant: Alice.",
                        ["### User:", "Who won?", "### Assistant:", "Alice."]),
}


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_every_template_splits_into_markers_and_sentences(name: str) -> None:
    text, expected = TEMPLATES[name]
    assert pieces(text) == expected
    for piece in expected:
        assert is_turn_marker(piece) == (piece in {text[s:e] for s, e in marker_spans(text)})


@pytest.mark.parametrize("backend", [*SENTENCE_BACKENDS, "line"])
def test_a_closing_marker_ends_the_sentence_in_every_backend(backend: str) -> None:
    text = "One. Two. Three.<|im_end|>"
    expected = ["One. Two. Three.", "<|im_end|>"] if backend == "line" else ["One.", "Two.", "Three.", "<|im_end|>"]
    assert pieces(text, backend) == expected


def test_the_issue_example_and_a_long_user_turn_is_not_one_sentence() -> None:
    assert pieces("One. Two. Three.<|im_end|>") == ["One.", "Two.", "Three.", "<|im_end|>"]
    paragraph = " ".join(f"Sentence number {i} says something about the topic." for i in range(40))
    text = f"<|im_start|>user\n{paragraph}<|im_end|>\n<|im_start|>assistant\n"
    got = pieces(text)
    assert got[0] == "<|im_start|>user" and got[-2:] == ["<|im_end|>", "<|im_start|>assistant"]
    assert len(got) == 43  # 40 sentences and three markers


def test_bar_tokens_do_not_make_a_table_row() -> None:
    # Two bars in "<|im_end|>" once made the line a verbatim table row, never split.
    assert pieces("The cat sat. The dog ran.<|end|>") == ["The cat sat.", "The dog ran.", "<|end|>"]
    assert pieces("| a | b |\n| 1 | 2 |") == ["| a | b |", "| 1 | 2 |"]  # a real table stays one span a row


def test_s_tags_count_only_in_an_inst_chat() -> None:
    html = "The <s>old price</s> is gone. The new one is lower."
    assert pieces(html) == ["The <s>old price</s> is gone.", "The new one is lower."]
    assert marker_spans(html) == []


def test_plain_labels_need_a_conversation() -> None:
    form = "User: Bob Smith\nPriority: high\nThe account is locked."
    assert marker_spans(form) == []
    assert pieces(form)[0] == "User: Bob Smith"
    assert marker_spans("user: x\nassistant: y") == []  # lower-case keys are YAML, not speakers


def test_a_marker_glued_to_text_is_cut_out() -> None:
    text = "<|im_start|>user\nWho won?<|im_end|><|im_start|>assistant\nAlice.<|im_end|>"
    assert pieces(text) == ["<|im_start|>user", "Who won?", "<|im_end|>", "<|im_start|>assistant", "Alice.",
                            "<|im_end|>"]
    text = "[INST]Doc one.[/INST]Answer."
    assert pieces(text) == ["[INST]", "Doc one.", "[/INST]", "Answer."]


def test_is_turn_marker() -> None:
    for marker in ("<|im_start|>user", "<|im_end|>", "<|start_header_id|>assistant<|end_header_id|>", "<|eot_id|>",
                   "<start_of_turn>model", "<end_of_turn>", "<|user|>", "<|end|>", "[INST]", "[/INST]", "<<SYS>>",
                   "<</SYS>>", "</s>", "<bos>", "User:", "**Assistant:**", "### Human:", "AI:"):
        assert is_turn_marker(marker), marker
    for sentence in ("Who won?<|im_end|>", "User: hi", "Priority:", "Question:", "", "<b>", "[INST] hi"):
        assert not is_turn_marker(sentence), sentence


def test_markers_module_doctests() -> None:
    assert doctest.testmod(markers).failed == 0


# Line-structured formats: a key line is never joined to the line before it.
LINE_STRUCTURED = {
    "yaml": ("title: Report on sales in the northern region for the year\nquestion: what were total sales\n"
             "owner: Bob",
             ["title: Report on sales in the northern region for the year", "question: what were total sales",
              "owner: Bob"]),
    "yaml_after_prose": ("context: The region sold more than ever before in the spring and the summer.\n"
                         "question: what were total sales",
                         ["context: The region sold more than ever before in the spring and the summer.",
                          "question: what were total sales"]),
    "ticket": ("Ticket #48213 | Priority: High | Customer: Acme Ltd\nCustomer request: We were charged twice for "
               "the March invoice. Please refund the duplicate charge and confirm when the refund will appear\n"
               "Internal notes: check the billing docs first.",
               ["Ticket #48213 | Priority: High | Customer: Acme Ltd",
                "Customer request: We were charged twice for the March invoice.",
                "Please refund the duplicate charge and confirm when the refund will appear",
                "Internal notes: check the billing docs first."]),
    "form": ("Name: John Smith of the accounts department in the north\nEmail: john@example.com\n"
             "Message: my card was declined",
             ["Name: John Smith of the accounts department in the north", "Email: john@example.com",
              "Message: my card was declined"]),
    "ini": ("[server]\nhost = example.com\nport=8080\ndescription = the main server of the company for all users",
            ["[server]", "host = example.com", "port=8080",
             "description = the main server of the company for all users"]),
    "query_over_material": ("Question: when did the old age pension start in australia\nThe pension began in "
                            "1909.",
                            ["Question: when did the old age pension start in australia",
                             "The pension began in 1909."]),
}


@pytest.mark.parametrize("backend", SENTENCE_BACKENDS)
@pytest.mark.parametrize("name", list(LINE_STRUCTURED))
def test_line_structured_formats_keep_their_lines(name: str, backend: str) -> None:
    text, expected = LINE_STRUCTURED[name]
    assert pieces(text, backend) == expected


def test_wrapped_prose_still_joins_a_line_that_only_looks_like_a_key() -> None:
    # Hard-wrapped at 80 columns: "area:" opens a wrapped line, not a field (qa_dev's HotpotQA, wrapped).
    text = ("one of the largest college towns in Kansas, is on Mount Oread, the highest\nelevation in Lawrence. "
            "Two branch campuses are in the Kansas City metropolitan\narea: the Edwards Campus in Overland Park, "
            "and the university's medical school\nand hospital in Kansas City.")
    assert pieces(text)[-1] == ("Two branch campuses are in the Kansas City metropolitan\narea: the Edwards Campus "
                                "in Overland Park, and the university's medical school\nand hospital in Kansas City.")
    # A key's value still wraps on in lower case.
    assert pieces("Description: the server of the company that holds all of the accounts\nand the backups.") == [
        "Description: the server of the company that holds all of the accounts\nand the backups."]


_MARKER_CHOICES = ["<|im_start|>user\n", "<|im_start|>assistant\n", "<|im_end|>", "<|eot_id|>",
                   "<|start_header_id|>user<|end_header_id|>\n\n", "<start_of_turn>model\n", "<end_of_turn>",
                   "<|user|>", "<|end|>", "[INST] ", " [/INST]", "<<SYS>>\n", "\n<</SYS>>", "</s>", "<s>"]
_WORDS = st.sampled_from(["One.", "two", "Three?", "four!", "Dr.", "5.5", "x", "\n", "\n\n", " ", "|", ":", "key:",
                          "User:", "AI:", "\nUser: ", "\nAssistant: ", "<b>", "[", "]"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_WORDS, st.sampled_from(_MARKER_CHOICES)), max_size=40),
       st.sampled_from([*SENTENCE_BACKENDS, "line"]), st.integers(5, 60))
def test_markers_are_whole_spans_and_the_contract_holds(parts: list[str], backend: str, cap: int) -> None:
    text = " ".join(parts)
    splitter = get_splitter(backend, max_sentence_chars=cap)
    spans = splitter.spans(text)
    position = 0
    for start, end in spans:  # the span contract
        assert position <= start < end <= len(text) and end - start <= cap
        assert not text[start].isspace() and not text[end - 1].isspace() and not text[position:start].strip()
        position = end
    assert not text[position:].strip()
    found = set(spans)
    for start, end in marker_spans(text):
        if end - start <= cap:
            assert (start, end) in found, text[start:end]
