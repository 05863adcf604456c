"""Flattened chats compressed prompt-agnostically with the real tpc-mini keep every turn: the output parses with the
same template into the same roles, in order, within budget, each turn's content made of its own sentences verbatim.

Why it holds: every chat-template marker is a span of its own (``tpc_core.segmentation.markers``), selection takes
every marker first (``selection.assembly.apply_budget``), and a kept marker keeps the whitespace before it
(``selection.join_kept``), so a ``User:`` label still starts its line.
"""

from __future__ import annotations

import doctest
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.notice_helpers import compress_warning_when_oversized
from tpc_core.engine.task import turns
from tpc_core.engine.task.turns import chat_turns, parse_flattened_chat
from tpc_core.segmentation import is_turn_marker, split_sentences

Turn = tuple[str, str]

SENTENCES = [
    "The Eiffel Tower was finished in 1889 for the World's Fair in Paris.",
    "Gustave Eiffel's company designed and built the wrought-iron tower.",
    "Bananas are rich in potassium and grow in tropical regions.",
    "The Great Wall of China was built over many centuries by several dynasties.",
    "Our refund policy allows returns within thirty days of purchase.",
    "The invoice from March was charged twice to the same card.",
    "Australia introduced a national old age pension in 1909.",
    "Before that, some states paid pensions of their own.",
    "The meeting moved the release date to the second week of June.",
    "Carol flew to Rome and visited the Colosseum on her first day.",
    "Photosynthesis turns light, water and carbon dioxide into sugar.",
    "The committee will publish its report after the summer break.",
    "Sure, I can help with that.",
    "Here is a short summary of the document.",
    "You are a careful assistant that answers from the given text.",
    "Answer in one sentence.",
]
# Requests the shipped head finds, so the CTD (seconds per prompt on a CPU) is not called: the finder is not
# what this file tests.
QUESTIONS = ["When was the Eiffel Tower finished?", "When did the old age pension start in Australia?",
             "Who designed the tower?", "What did the committee decide?"]


def _chatml(turns_: list[Turn], generation: bool) -> str:
    body = "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in turns_)
    return body + ("<|im_start|>assistant\n" if generation else "")


def _llama3(turns_: list[Turn], generation: bool) -> str:
    body = "".join(f"<|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>" for role, content in turns_)
    return "<|begin_of_text|>" + body + ("<|start_header_id|>assistant<|end_header_id|>\n\n" if generation else "")


def _gemma(turns_: list[Turn], generation: bool) -> str:
    body = "".join(f"<start_of_turn>{'model' if role == 'assistant' else role}\n{content}<end_of_turn>\n"
                   for role, content in turns_)
    return "<bos>" + body + ("<start_of_turn>model\n" if generation else "")


def _phi3(turns_: list[Turn], generation: bool) -> str:
    return "".join(f"<|{role}|>\n{content}<|end|>\n" for role, content in turns_) + (
        "<|assistant|>\n" if generation else "")


def _llama2(turns_: list[Turn], generation: bool) -> str:
    """``<s>[INST] <<SYS>>...<</SYS>>`` user ``[/INST]`` answer ``</s>``; a user turn ends with the open reply."""
    text, system = "", ""
    for role, content in turns_:
        if role == "system":
            system = f"<<SYS>>\n{content}\n<</SYS>>\n\n"
        elif role == "user":
            text += f"<s>[INST] {system}{content} [/INST]"
            system = ""
        else:
            text += f" {content} </s>"
    return text


def _mistral(turns_: list[Turn], generation: bool) -> str:
    text = "<s>"
    for role, content in turns_:
        text += f"[INST] {content} [/INST]" if role == "user" else f"{content}</s>"
    return text


def _labels(names: dict[str, str], separator: str) -> Callable[[list[Turn], bool], str]:
    def render(turns_: list[Turn], generation: bool) -> str:
        text = separator.join(f"{names[role]}: {content}" for role, content in turns_)
        return text + (f"{separator}{names['assistant']}:" if generation else "")
    return render


# name -> (renderer, has a system turn, the generation prompt is written by the template itself)
TEMPLATES: dict[str, tuple[Callable[[list[Turn], bool], str], bool, bool]] = {
    "chatml": (_chatml, True, False),
    "llama3": (_llama3, True, False),
    "gemma": (_gemma, False, False),
    "phi3": (_phi3, True, False),
    "llama2": (_llama2, True, True),
    "mistral": (_mistral, False, True),
    "plain": (_labels({"system": "System", "user": "User", "assistant": "Assistant"}, "\n"), True, False),
    "human_ai": (_labels({"user": "Human", "assistant": "AI"}, "\n\n"), False, False),
}


@st.composite
def conversations(draw: st.DrawFn) -> tuple[str, list[Turn], bool]:
    """A template name, its turns (role, content) and whether a generation prompt ends it."""
    name = draw(st.sampled_from(sorted(TEMPLATES)))
    _, has_system, _ = TEMPLATES[name]

    def content() -> str:
        chosen = draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=5))
        return draw(st.sampled_from([" ", "\n"])).join(chosen)

    turns_: list[Turn] = [("system", content())] if has_system and draw(st.booleans()) else []
    exchanges = draw(st.integers(1, 3))
    for index in range(exchanges):
        question = draw(st.sampled_from(QUESTIONS)) if index == exchanges - 1 else ""
        turns_.append(("user", f"{content()}\n{question}".strip()))
        if index < exchanges - 1 or draw(st.booleans()):
            turns_.append(("assistant", content()))
    generation = turns_[-1][0] == "user"
    return name, turns_, generation


def _leaving_room(compressor, text: str, rate: float) -> float:  # a TPCCompressor
    """``rate``, raised where needed so that the budget holds every marker and a tenth of the prompt more.

    The markers cost their tokens (with MiniLM's counter ~7 a ChatML marker, ~14 a Llama 3 header: 13-41% of the
    short chats drawn here); test_a_budget_below_the_markers covers a budget that cannot hold them.
    """
    counter = compressor.token_counter
    marker_tokens = sum(counter(text[start:end]) for start, end in split_sentences(text)
                        if is_turn_marker(text[start:end]))
    return min(1.0, max(rate, marker_tokens / counter(text) + 0.1))


def _words(text: str) -> list[str]:
    return text.split()


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(conversations(), st.floats(0.15, 0.8))
@pytest.mark.slow
def test_a_compressed_flattened_chat_parses_into_the_same_roles(tpc_mini, conversation, rate: float) -> None:
    name, turns_, generation = conversation
    render = TEMPLATES[name][0]
    text = render(turns_, generation)
    before = chat_turns(text)
    expected_roles = [role for role, _ in turns_] + (["assistant"] if generation else [])
    assert [turn.role for turn in before] == expected_roles  # the parser reads the template as rendered

    result = compress_warning_when_oversized(tpc_mini, text, rate=_leaving_room(tpc_mini, text, rate))
    # within the budget, or over it by exactly what the request and the markers around it need (the request wins)
    assert result.over_budget == max(0, result.compressed_tokens - result.budget)
    assert result.over_budget == 0 or result.request_sentences > 0
    markers = [record for record in result.sentences if is_turn_marker(record.text)]
    assert all(record.kept for record in markers), name
    after = chat_turns(result.compressed_prompt)
    assert [turn.role for turn in after] == expected_roles, (name, result.compressed_prompt)
    # Each turn holds its own kept sentences, verbatim and in order.
    for turn_before, turn_after in zip(before, after):
        kept = [record.text for record in result.sentences if record.kept and not is_turn_marker(record.text)
                and turn_before.start <= record.start < max(turn_before.end, turn_before.start + 1)]
        assert _words(turn_after.content) == _words(" ".join(kept)), (name, turn_before, turn_after)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_turn_whose_sentences_are_all_dropped_keeps_its_markers(tpc_mini, name: str) -> None:
    render, has_system, _ = TEMPLATES[name]
    long_turn = " ".join(SENTENCES[:12])
    turns_ = ([("system", SENTENCES[14])] if has_system else []) + [
        ("user", f"{long_turn}\n{SENTENCES[2]}"), ("assistant", SENTENCES[12]), ("user", QUESTIONS[0])]
    text = render(turns_, True)
    result = tpc_mini.compress(text, rate=_leaving_room(tpc_mini, text, 0.2))
    assert result.compressed_tokens <= result.budget
    roles = [role for role, _ in parse_flattened_chat(text)]
    assert [role for role, _ in parse_flattened_chat(result.compressed_prompt)] == roles
    assert any(not content for _, content in parse_flattened_chat(result.compressed_prompt))  # a turn kept empty


def test_a_budget_below_the_markers_keeps_the_first_markers_that_fit(tpc_mini) -> None:
    # with the question given, nothing of the prompt is pinned: only its markers are forced, the first that fit
    text = _chatml([("user", SENTENCES[0]), ("assistant", SENTENCES[1]), ("user", QUESTIONS[0])], True)
    result = tpc_mini.compress(text, question=QUESTIONS[0], target_tokens=20)
    assert result.request_sentences == 0
    markers = [record for record in result.sentences if is_turn_marker(record.text)]
    assert sum(record.tokens for record in markers) > result.budget >= result.compressed_tokens
    kept = [record.index for record in markers if record.kept]
    assert kept == [markers[0].index, markers[1].index]  # "<|im_start|>user", "<|im_end|>": 15 of 20 tokens
    assert all(not record.kept for record in result.sentences if not is_turn_marker(record.text))


def test_a_budget_below_the_request_keeps_it_in_its_turn_over_the_budget(tpc_mini) -> None:
    text = _chatml([("user", SENTENCES[0]), ("assistant", SENTENCES[1]), ("user", QUESTIONS[0])], True)
    with pytest.warns(UserWarning, match="is kept whole"):
        result = tpc_mini.compress(text, target_tokens=20)
    assert result.over_budget == result.compressed_tokens - result.budget > 0
    assert QUESTIONS[0] in result.compressed_prompt and SENTENCES[0] not in result.compressed_prompt
    assert [turn.role for turn in chat_turns(result.compressed_prompt)] == ["user", "assistant", "user", "assistant"]


def test_the_plain_parser_reads_every_template() -> None:
    for name, (render, has_system, _) in TEMPLATES.items():
        turns_ = ([("system", "Be brief.")] if has_system else []) + [("user", "Who won?"), ("assistant", "Alice."),
                                                                       ("user", "Why?")]
        parsed = parse_flattened_chat(render(turns_, True))
        assert parsed == [*turns_, ("assistant", "")], name


def test_text_outside_every_turn_has_no_role() -> None:
    assert parse_flattened_chat("Preamble.\n<|im_start|>user\nHi<|im_end|>\nTrailer.") == [
        (None, "Preamble."), ("user", "Hi"), (None, "Trailer.")]
    assert parse_flattened_chat("No chat here.") == [(None, "No chat here.")]
    assert parse_flattened_chat("") == []


def test_turns_module_doctests() -> None:
    assert doctest.testmod(turns).failed == 0
