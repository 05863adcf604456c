"""compress_messages: conversations of three kinds in, the same kind out, one budget, protected messages whole.

Pure parts (reading, rebuilding, the plan, the per-part fit) without a model; the behaviour with the real shipped
tpc-mini (MiniLM CSE).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tests.conversation_helpers import counted, is_selection, texts_of
from tpc_core.conversation.compress import (
    assemble_part,
    fit_parts,
    paragraph_cuts,
    plan_conversation,
)
from tpc_core.conversation.messages import read_messages, rebuild_message

TEXT = (Path(__file__).resolve().parents[3] / "examples" / "data" / "declaration_of_independence.txt").read_text(
    encoding="utf-8")
PARAGRAPHS = [p for p in TEXT.split("\n\n") if p.strip()]
QUESTION = "What do the colonies declare about their allegiance to the British Crown?"
SYSTEM = "You are a historian. Answer from the documents only."
IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/scan.png"}}


def dict_conversation() -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Read this.\n\n" + "\n\n".join(PARAGRAPHS[:3]), "name": "ada", "id": "m1"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_7", "type": "function", "function": {"name": "fetch", "arguments": "{\"part\": 2}"}}]},
        {"role": "tool", "tool_call_id": "call_7", "content": [{"type": "text", "text": "\n\n".join(PARAGRAPHS[3:])},
                                                              IMAGE]},
        {"role": "assistant", "content": "I have the whole text. What would you like to know?"},
        {"role": "user", "content": QUESTION},
    ]


def langchain_conversation() -> list:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    return [SystemMessage(SYSTEM), HumanMessage("Read this.\n\n" + "\n\n".join(PARAGRAPHS[:3]), name="ada", id="m1"),
            AIMessage("", tool_calls=[{"id": "call_7", "name": "fetch", "args": {"part": 2}}], id="m2"),
            ToolMessage(content=[{"type": "text", "text": "\n\n".join(PARAGRAPHS[3:])}, IMAGE], tool_call_id="call_7"),
            AIMessage("I have the whole text. What would you like to know?"), HumanMessage(QUESTION)]


def llama_conversation() -> list:
    from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock

    return [ChatMessage(role=MessageRole.SYSTEM, content=SYSTEM),
            ChatMessage(role="user", content="Read this.\n\n" + "\n\n".join(PARAGRAPHS[:3]),
                        additional_kwargs={"name": "ada"}),
            ChatMessage(role="assistant", content=None, additional_kwargs={"tool_calls": [{"id": "call_7"}]}),
            ChatMessage(role="tool", blocks=[TextBlock(text="\n\n".join(PARAGRAPHS[3:])),
                                             ImageBlock(url="https://example.com/scan.png")],
                        additional_kwargs={"tool_call_id": "call_7"}),
            ChatMessage(role="assistant", content="I have the whole text. What would you like to know?"),
            ChatMessage(role="user", content=QUESTION)]


# ------------------------------------------------------------------------------------------- pure: no model
def test_reading_gives_roles_and_text_parts_of_each_kind():
    for conversation in (dict_conversation(), langchain_conversation(), llama_conversation()):
        read = read_messages(conversation)
        assert [m.role for m in read] == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert read[3].parts == ("\n\n".join(PARAGRAPHS[3:]), None)  # the image is a part that is not text
        assert read[-1].text == QUESTION
    assert read_messages(dict_conversation())[2].parts == ()  # content None: no parts


def test_rebuilding_replaces_only_text_parts_and_keeps_the_rest():
    original = dict_conversation()
    message = read_messages(original)[3]
    rebuilt = rebuild_message(original[3], message, ["Short.", None])
    assert rebuilt == {"role": "tool", "tool_call_id": "call_7", "content": [{"type": "text", "text": "Short."}, IMAGE]}
    assert original == dict_conversation()  # the input is not changed
    langchain = langchain_conversation()
    copy_ = rebuild_message(langchain[1], read_messages(langchain)[1], ["Short."])
    assert (copy_.content, copy_.name, copy_.id, type(copy_)) == ("Short.", "ada", "m1", type(langchain[1]))


def test_plan_protects_system_and_latest_user_turn_and_says_what_they_need():
    read = read_messages(dict_conversation())
    counts = [[10] * max(len(m.parts), 1) if m.parts else [] for m in read]
    plan = plan_conversation(read, counts, target_tokens=30)  # the whole conversation's budget
    assert (plan.task, plan.task_index, plan.origin_tokens, plan.budget) == (QUESTION, 5, 60, 30)
    assert plan.protected == (True, False, False, False, False, True) and plan.room == 10
    by_rate = plan_conversation(read, counts, rate=0.5)  # half of the other messages, the protected ones on top
    assert (by_rate.budget, by_rate.room) == (40, 20)
    first_turn = read_messages([{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}])
    assert plan_conversation(first_turn, [[10], [10]], rate=0.1).budget == 20  # a chat's first turn passes whole
    with pytest.raises(ValueError, match=r"need 20 tokens.*at least 20"):
        plan_conversation(read, counts, target_tokens=19)
    # A counter that counts an empty text (special tokens) makes every other text part cost that much, emptied.
    with pytest.raises(ValueError, match=r"need 23 tokens .*1 for each of the 3 other text parts.*at least 23"):
        plan_conversation(read, counts, target_tokens=22, empty_part_tokens=1)
    no_user = [m for m in read if m.role != "user"]
    assert plan_conversation(no_user, [[1]] * len(no_user), rate=1.0).task is None


def test_fit_parts_drops_the_weakest_until_the_parts_own_counts_fit():
    parts = ["One two. Three four five.\n\n  \nSix seven.", "Eight nine."]
    cuts = [paragraph_cuts(part) for part in parts]
    assert cuts == [[(0, 25), (30, 40)], [(0, 11)]]
    spans = [[(0, 8), (9, 25)], [(0, 10)], [(0, 11)]]  # three segments: two paragraphs, then the second part
    everything = [[0, 1], [0], [0]]
    assert fit_parts(parts, cuts, spans, everything, [[0.9, 0.1], [0.5], [0.7]], 100, len) == parts[:1] + parts[1:]
    texts = fit_parts(parts, cuts, spans, everything, [[0.9, 0.1], [0.5], [0.7]], 34, len)
    assert texts == ["One two.\n\n  \nSix seven.", "Eight nine."]  # the 0.1 sentence went: 8 + 5 + 10 + 11 = 34
    texts = fit_parts(parts, cuts, spans, everything, [[0.9, 0.1], [0.5], [0.7]], 20, len)
    assert texts == ["One two.", "Eight nine."]  # then the 0.5 paragraph: 8 + 11 <= 20
    assert fit_parts(parts, cuts, spans, everything, [[None, None], [None], [None]], 11, len) == ["", "Eight nine."]
    assert assemble_part(parts[0], cuts[0], ["", "Six seven."]) == "Six seven."


@pytest.mark.parametrize("bad, error, match", [
    ("hello", TypeError, "list of messages"),
    ({"role": "user", "content": "x"}, TypeError, "wrap a single message"),
    ([42], TypeError, "Message 0 is a int"),
    ([{"role": "wizard", "content": "x"}], ValueError, "unknown role 'wizard'.*system, developer, user"),
    ([{"content": "x"}], ValueError, "has no 'role'"),
    ([{"role": "user", "content": 3}], TypeError, "content of type int"),
    ([{"role": "user", "content": [3]}], TypeError, "part 0 is a int"),
    ([{"role": "user", "content": [{"type": "text", "text": None}]}], TypeError, "text must be a str"),
])
def test_bad_messages_are_refused_before_any_model_runs(bad, error, match):
    with pytest.raises(error, match=match):
        read_messages(bad)


def test_unknown_langchain_message_type_names_the_accepted_ones():
    from langchain_core.messages import ChatMessage, RemoveMessage

    with pytest.raises(ValueError, match="type 'remove'"):
        read_messages([RemoveMessage(id="x")])
    with pytest.raises(ValueError, match="unknown role 'oracle'"):
        read_messages([ChatMessage(role="oracle", content="x")])


# ------------------------------------------------------------------------------------------- the real model
def _check(original: list, compressed: list, compressor, counter, budget: int, task: bool = True) -> None:
    assert len(compressed) == len(original)
    assert [type(m) for m in compressed] == [type(m) for m in original]
    assert compressed[0] == original[0] and (not task or compressed[-1] == original[-1])  # system, task: whole
    for before, after in zip(original, compressed):
        for old, new in zip(texts_of(before), texts_of(after), strict=True):
            assert is_selection(old, new, compressor.engine.splitter())
    assert counted(compressed, counter) <= budget


def test_dicts_compressed_within_budget_with_ids_tool_calls_and_images_kept(tpc_mini):
    original = dict_conversation()
    result = tpc_mini.compress_messages(original, rate=0.3, return_result=True)
    out = result.messages
    _check(original, out, tpc_mini, tpc_mini.token_counter, result.budget)
    assert original == dict_conversation()  # not mutated
    protected = counted([original[0], original[-1]], tpc_mini.token_counter)  # the system message and the question
    assert result.budget == protected + int(0.3 * (counted(original, tpc_mini.token_counter) - protected))
    assert result.compressed_tokens == counted(out, tpc_mini.token_counter) <= result.budget
    assert (out[1]["name"], out[1]["id"], out[2], out[3]["tool_call_id"], out[3]["content"][1]) == \
        ("ada", "m1", original[2], "call_7", IMAGE)
    kept = " ".join(texts_of(out[1]) + texts_of(out[3]))
    assert "Absolved from all Allegiance to the British Crown" in kept  # the answer survives
    assert len(kept) < len(" ".join(PARAGRAPHS)) // 2
    assert result.task == QUESTION and result.result.task_source == "question"


def test_three_kinds_give_the_same_texts(tpc_mini):
    outputs = [tpc_mini.compress_messages(make(), target_tokens=500)
               for make in (dict_conversation, langchain_conversation, llama_conversation)]
    texts = [[[t for t in texts_of(m) if t] for m in output] for output in outputs]  # AIMessage("") is content ""
    assert texts[0] == texts[1] == texts[2]
    langchain, llama = outputs[1], outputs[2]
    assert langchain[2].tool_calls[0]["id"] == "call_7" and langchain[3].tool_call_id == "call_7"
    assert langchain[1].id == "m1" and langchain[3].content[1] == IMAGE
    assert llama[3].additional_kwargs == {"tool_call_id": "call_7"} and llama[3].blocks[1].block_type == "image"
    assert llama[2].additional_kwargs["tool_calls"] == [{"id": "call_7"}]
    _check(llama_conversation(), llama, tpc_mini, tpc_mini.token_counter, 500)


def test_custom_callable_and_tiktoken_counters_hold_the_budget_exactly(tpc_mini):
    def words(text: str) -> int:
        return len(text.split())

    original = dict_conversation()
    out = tpc_mini.compress_messages(original, rate=0.25, token_counter=words)
    protected = counted([original[0], original[-1]], words)
    _check(original, out, tpc_mini, words, protected + int(0.25 * (counted(original, words) - protected)))
    pytest.importorskip("tiktoken")
    from tpc_core.engine.tokens import resolve_token_counter

    cl100k = resolve_token_counter("cl100k_base")
    out = tpc_mini.compress_messages(original, target_tokens=400, token_counter="cl100k_base")
    _check(original, out, tpc_mini, cl100k, 400)


def test_within_budget_comes_back_unchanged_as_copies(tpc_mini):
    original = dict_conversation()
    out = tpc_mini.compress_messages(original, rate=1.0)
    assert out == original and all(a is not b for a, b in zip(out, original))


def test_no_user_turn_is_compressed_prompt_agnostically(tpc_mini):
    original = [m for m in dict_conversation() if m["role"] != "user"]
    result = tpc_mini.compress_messages(original, rate=0.3, describe_bare=False, return_result=True)
    assert result.task is None and result.result.task_source != "question"
    _check(original, result.messages, tpc_mini, tpc_mini.token_counter, result.budget, task=False)
    assert result.messages != original


def test_empty_contents_pass_through_and_count_nothing(tpc_mini):
    conversation = dict_conversation()
    original = [conversation[0], {"role": "system", "content": ""}, {"role": "assistant", "content": []},
                *conversation[1:]]
    out = tpc_mini.compress_messages(original, target_tokens=300)
    assert out[1] == original[1] and out[2] == original[2]
    _check(original, out, tpc_mini, tpc_mini.token_counter, 300)


def test_a_budget_below_the_protected_messages_says_what_they_need(tpc_mini):
    need = tpc_mini.token_counter(SYSTEM) + tpc_mini.token_counter(QUESTION)
    with pytest.raises(ValueError, match=f"need {need} tokens"):
        tpc_mini.compress_messages(dict_conversation(), target_tokens=need - 1, strict=True)
    out = tpc_mini.compress_messages(dict_conversation(), target_tokens=need, emptied="empty")  # the rest emptied
    assert [texts_of(m) for m in out[1:5]] == [[""], [], ["", ], [""]] and out[3]["content"][1] == IMAGE


def test_bad_arguments_fail_clearly(tpc_mini):
    with pytest.raises(TypeError, match="takes no question"):
        tpc_mini.compress_messages(dict_conversation(), question="Why?")
    with pytest.raises(TypeError, match="Unknown compression option"):
        tpc_mini.compress_messages(dict_conversation(), keep_first=True)
    with pytest.raises(ValueError, match="keep_request=False does not apply to conversations"):
        tpc_mini.compress_messages(dict_conversation(), target_tokens=12, keep_request=False)
    with pytest.raises(ValueError, match="Message 1: text part 0 holds a lone surrogate"):
        tpc_mini.compress_messages([{"role": "system", "content": "Hi."}, {"role": "user", "content": "Bad \ud800."}])
    conversation = copy.deepcopy(dict_conversation())
    with pytest.raises(ValueError, match="rate must be in"):
        tpc_mini.compress_messages(conversation, rate=2.0)


def test_a_counter_that_counts_an_empty_text_still_holds_the_budget(tpc_mini):
    """A counter with special tokens counts "" as 1-2 tokens: every emptied part costs that."""
    def with_special(text: str) -> int:
        return len(text.split()) + 1

    original = [{"role": "system", "content": "Sys."}] + [
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"Filler alpha beta gamma delta {i}. More words here {i}."}
        for i in range(20)] + [{"role": "user", "content": "Which way does the river flow?"}]
    out = tpc_mini.compress_messages(original, target_tokens=40, token_counter=with_special, emptied="empty")
    assert counted(out, with_special) <= 40 and out[0] == original[0] and out[-1] == original[-1]
    with pytest.raises(ValueError, match=r"need 29 tokens .*1 for each of the 20 other text parts"):
        tpc_mini.compress_messages(original, target_tokens=28, token_counter=with_special, strict=True,
                                   emptied="empty")


def test_message_list_counters_are_refused_and_chat_models_count_text(tpc_mini):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages.utils import count_tokens_approximately

    with pytest.raises(TypeError, match="counts a list of messages.*Callable\\[\\[str\\], int\\]"):
        tpc_mini.compress_messages(dict_conversation(), target_tokens=300, token_counter=count_tokens_approximately)
    class WordCountingModel(FakeListChatModel):  # a chat model counts text with get_num_tokens (GPT-2's offline)
        def get_num_tokens(self, text: str) -> int:
            return len(text.split())

    model = WordCountingModel(responses=["ok"])
    out = tpc_mini.compress_messages(dict_conversation(), target_tokens=300, token_counter=model)
    assert counted(out, model.get_num_tokens) <= 300


def test_the_output_is_a_deep_copy(tpc_mini):
    """Changing the output's tool calls, kwargs or image parts never changes the caller's messages."""
    original = dict_conversation()
    out = tpc_mini.compress_messages(original, target_tokens=300)
    out[2]["tool_calls"][0]["id"] = "changed"
    out[3]["content"][1]["image_url"]["url"] = "changed"
    assert original == dict_conversation()
    langchain = langchain_conversation()
    copied = tpc_mini.compress_messages(langchain, target_tokens=300)
    copied[2].tool_calls[0]["id"] = "changed"
    assert langchain[2].tool_calls[0]["id"] == "call_7"
