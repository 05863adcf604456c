"""CTD: chat formatting, the bounded-input rule, batched deterministic generation (tiny random Llama)."""

from tpc_core.engine.task.ctd import ELISION, bound_prompt, finish_description


def test_long_prompts_keep_head_and_tail(tiny):
    tokenizer = tiny._ctd.get().tokenizer
    words = [f"w{i}" for i in range(400)]
    prompt = " ".join(words)
    bounded = bound_prompt(prompt, tokenizer, max_input_tokens=40, head_fraction=0.25)
    head, tail = bounded.split(ELISION)
    assert prompt.startswith(head) and prompt.endswith(tail)
    assert len(tokenizer(head, add_special_tokens=False)["input_ids"]) <= 10
    assert len(tokenizer(tail, add_special_tokens=False)["input_ids"]) <= 30
    assert bound_prompt("short prompt", tokenizer, 40, 0.25) == "short prompt"


def test_chat_inputs_end_with_the_response_prefix(tiny):
    text = tiny._ctd.get().build_chat_inputs("Summarise this report.")
    assert text.endswith(tiny.config.ctd.response_prefix)
    assert "<user>" in text and "Summarise this report." in text


def test_generation_is_batched_bounded_and_deterministic(tiny):
    descriptor = tiny._ctd.get()
    prompts = ["First prompt about cats. " * 50, "Second prompt.", "Third one about dogs."]
    first = descriptor.describe(prompts)
    second = [descriptor.describe([p])[0] for p in prompts]
    assert len(first) == 3 and first == second
    assert all(d.startswith(tiny.config.ctd.response_prefix) for d in first)


def test_prompt_agnostic_compression_uses_the_description(tiny):
    text = " ".join(f"Fact {i} is about item {i}." for i in range(30))
    result = tiny.compress(text, rate=0.3, describe_bare=True)
    assert result.task_description.startswith(tiny.config.ctd.response_prefix)
    assert result.compressed_tokens <= result.budget


def test_finish_description_trims_to_one_line():
    assert finish_description("The prompt asks the assistant to", "summarise the text.\nMore") == \
        "The prompt asks the assistant to summarise the text."
    assert finish_description("P", "") == "P"


def test_describe_task_takes_one_prompt_or_a_list(tiny):
    import pytest

    prompts = ["Summarise this report.", "Translate the letter into French."]
    listed = tiny.describe_task(prompts)
    single = tiny.describe_task(prompts[0])
    assert isinstance(single, str) and isinstance(listed, list) and len(listed) == 2
    assert single == listed[0]  # a string is one prompt, never a sequence of characters
    assert tiny.describe_task([]) == []
    with pytest.raises(TypeError, match="prompt 1"):
        tiny.describe_task(["fine", 42])
