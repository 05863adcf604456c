import pytest

from tpc_core.engine.tokens import TokenCounter, resolve_token_counter


def test_callable_counter_and_validation():
    counter = resolve_token_counter(lambda text: len(text.split()))
    assert counter("a b c") == 3
    assert counter.count_many(["a", "a b"]) == [1, 2]
    with pytest.raises(TypeError, match="non-negative int"):
        resolve_token_counter(lambda text: "three")("x")


def test_hf_tokenizer_counts_without_truncation():
    from transformers import AutoTokenizer

    from tpc_core.loading.offline import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir()))
    counter = resolve_token_counter(tokenizer)
    long_text = "word " * 400  # MiniLM's tokenizer.json truncates at 128: the counter must not
    assert counter(long_text) == 400
    assert counter("hello world") == 2
    assert counter.count_many(["hello", "hello world"]) == [1, 2]


def test_tiktoken_name_works_offline():
    pytest.importorskip("tiktoken")
    counter = resolve_token_counter("cl100k_base")
    assert counter("hello world") == 2


def test_path_name_is_loaded_as_tokenizer():
    from tpc_core.loading.offline import minilm_dir

    assert resolve_token_counter(str(minilm_dir()))("hello world") == 2


def test_bad_specs():
    with pytest.raises(TypeError):
        resolve_token_counter(42)
    with pytest.raises(ValueError, match="Could not load a tokenizer"):
        resolve_token_counter("/no/such/tokenizer/dir")
    assert isinstance(resolve_token_counter(TokenCounter(len)), TokenCounter)
