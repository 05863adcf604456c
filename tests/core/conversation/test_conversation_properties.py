"""Property tests (hypothesis) of compress_messages with the real shipped tpc-mini: any conversation comes back
with the same messages in the same order, each intact or a verbatim selection of its own sentences, the
protected ones (system, developer, the latest user turn) whole, and within budget for the caller's counter; or,
when the budget is below the protected messages, a ValueError that says what they need."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conversation_helpers import is_selection, texts_of

CASES = 30
WORDS = ["Alice", "went", "to", "Paris", "the", "café", "東京", "x=1;", "Dr.", "3.14", "Straße", "data", "report",
         "revenue", "grew", "in", "Q3", "because", "of", "cloud", "sales"]
ROLES = ["system", "developer", "user", "assistant", "tool", "function", "human", "ai"]
PARTS = [{"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
         {"type": "file", "file": {"file_id": "f-1"}}, {"type": "tool_use", "id": "t1", "input": {}}]


@st.composite
def texts(draw) -> str:
    sentences = draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=0, max_size=6))
    ends = draw(st.lists(st.sampled_from([".", "?", "!", ""]), min_size=len(sentences), max_size=len(sentences)))
    gaps = draw(st.lists(st.sampled_from([" ", "\n", "\n\n", "  "]), min_size=len(sentences),
                         max_size=len(sentences)))
    return "".join(" ".join(words) + end + gap for words, end, gap in zip(sentences, ends, gaps))


@st.composite
def messages(draw) -> dict:
    message = {"role": draw(st.sampled_from(ROLES))}
    shape = draw(st.sampled_from(["text", "text", "parts", "none", "empty"]))
    if shape == "text":
        message["content"] = draw(texts())
    elif shape == "parts":
        message["content"] = draw(st.lists(st.one_of(st.builds(lambda t: {"type": "text", "text": t}, texts()),
                                                     st.sampled_from(PARTS)), min_size=1, max_size=3))
    elif shape == "none":
        message["content"] = None
    else:
        message["content"] = draw(st.sampled_from(["", []]))
    if draw(st.booleans()):
        message["id"] = f"m{draw(st.integers(0, 99))}"
    return message


def _langchain(message: dict):
    from langchain_core.messages import convert_to_messages

    content = message["content"] if message["content"] is not None else ""
    extra = {"tool": {"tool_call_id": "call_1"}, "function": {"name": "lookup"}}.get(message["role"], {})
    return convert_to_messages([{**message, **extra, "content": content}])[0]


@settings(max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(conversation=st.lists(messages(), min_size=1, max_size=6), kind=st.sampled_from(["dict", "langchain"]),
       rate=st.sampled_from([0.1, 0.3, 0.6, 1.0]), counter_name=st.sampled_from(["default", "words", "words+1"]),
       by_rate=st.booleans())
def test_any_conversation_keeps_its_messages_whole_or_as_verbatim_selections(tpc_mini, conversation, kind, rate,
                                                                            counter_name, by_rate):
    """``target_tokens`` budgets the whole conversation; ``rate`` keeps that share of the other messages on top of
    the protected ones. ``words+1`` counts an empty text as 1 token (as a counter with special tokens does)."""
    from tpc_core.conversation.messages import read_messages

    original = conversation if kind == "dict" else [_langchain(m) for m in conversation]
    counter = {"default": tpc_mini.token_counter, "words": lambda text: len(text.split()),
               "words+1": lambda text: len(text.split()) + 1}[counter_name]
    users = [k for k, m in enumerate(conversation) if m["role"] in ("user", "human")]
    protected = {k for k, m in enumerate(conversation) if m["role"] in ("system", "developer")} | set(users[-1:])
    read = read_messages(original)  # the text parts as compress_messages reads them (tested in test_conversations)

    def count(messages: list) -> int:
        return sum(counter(part) for m in read_messages(messages) for part in m.parts if part is not None)

    need = sum(counter(part) for m in read if m.index in protected for part in m.parts if part is not None)
    total = count(original)
    parts = sum(part is not None for m in read if m.index not in protected for part in m.parts)
    budget = need + int(rate * (total - need)) if by_rate else int(rate * total)
    need += counter("") * parts  # every other text part costs at least an empty text
    options = {"token_counter": None if counter_name == "default" else counter, "describe_bare": False,
               "strict": True, "emptied": "empty",  # the property holds the budget exactly, emptied parts ""
               **({"rate": rate} if by_rate else {"target_tokens": max(budget, 1)})}
    budget = max(budget, 1) if not by_rate else budget
    if budget < need:
        # A long latest user turn is narrowed to its request sentences, so the library may need fewer tokens than the
        # whole turn counts: it refuses naming what it needs (more than the budget, at most the whole turn's), or,
        # where the narrowed turn fits, returns verbatim selections of every message.
        try:
            narrowed = tpc_mini.compress_messages(original, **options)
        except ValueError as error:
            needed = re.search(r"need (\d+) tokens", str(error))
            assert needed is not None, str(error)
            assert budget < int(needed.group(1)) <= need, (budget, needed.group(1), need)
            return
        assert len(narrowed) == len(original)
        splitter = tpc_mini.engine.splitter()
        for before, after in zip(original, narrowed):
            assert all(is_selection(o, n, splitter) for o, n in zip(texts_of(before), texts_of(after)))
        return
    out = tpc_mini.compress_messages(original, **options)
    assert len(out) == len(original) and [type(m) for m in out] == [type(m) for m in original]
    for k, (before, after) in enumerate(zip(original, out)):
        if k in protected:
            assert after == before
        old, new = texts_of(before), texts_of(after)
        assert len(old) == len(new)
        assert all(is_selection(o, n, tpc_mini.engine.splitter()) for o, n in zip(old, new))
        if kind == "dict":
            assert {key: v for key, v in after.items() if key != "content"} == \
                {key: v for key, v in before.items() if key != "content"}
            if isinstance(before["content"], list):  # non-text parts in place, untouched
                assert [p for p in after["content"] if p.get("type") != "text"] == \
                    [p for p in before["content"] if p.get("type") != "text"]
        else:
            assert (after.id, after.type) == (before.id, before.type)
    assert count(out) <= budget
