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


def test_batch_encoder_gives_the_backends_own_encodings():
    """The normalizer-free copy serves plain texts only, and every text's ids and offsets are the backend's."""
    import pickle
    import random

    from transformers import AutoTokenizer

    from tpc_core.engine.tokens import BatchEncoder
    from tpc_core.loading.offline import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir()))
    tokenizer.add_tokens(["<end_of_sent>"])
    encoder = BatchEncoder(tokenizer.backend_tokenizer)
    assert encoder.plain is not None and encoder.lowercase
    tricky = ["Hello, World! 3.14 e-mail@x.com", "It’s a “quote” – and — dashes…", "Café NAÏVE résumé", "東京は大きい。",
              "ΣΊΣΥΦΟΣ", "a\u00a0b", "tab\there\r\nline", "nul\x00byte", "del\x7fete", "[CLS] hi", "a [sep] b",
              "x <END_of_sent> y", "[UNK] [mask]", "e\u0301tude", "W" * 150 + " end", "", "   "]
    rng = random.Random(0)
    noise = ["".join(rng.choice("aZ .,!?[]<>|_-'\"\t\n\x01\x7f09éßΣ’“東\u0301") for _ in range(rng.randint(0, 30)))
             for _ in range(500)]
    texts = tricky + noise
    backend = encoder.backend
    expected = backend.encode_batch(texts, add_special_tokens=False)
    for offsets in (True, False):
        got = encoder.encode(texts, offsets=offsets)
        assert [e.ids for e in got] == [e.ids for e in expected]
        if offsets:
            assert [e.offsets for e in got] == [e.offsets for e in expected]
    word_ids = encoder.ids(texts + texts)  # the second time from the word table
    assert word_ids == [e.ids for e in expected] * 2 and encoder.by_words and encoder.words
    assert pickle.loads(pickle.dumps(encoder)).ids(texts) == word_ids[: len(texts)]
    assert encoder.word_split("It’s “ok”") == ["it", "’", "s", "“", "ok", "”"] and encoder.kinds["’"] == "punctuation"
    assert encoder.word_split("Café") is None and encoder.word_split("a\x01b") is None
    # Plain: ASCII, curly quotes and dashes, tabs and line breaks, a long word; not: accents, CJK, Σ, NBSP, other
    # control characters, added tokens in any case, a combining mark.
    assert [encoder.plain_text(text) for text in tricky] == [True, True, False, False, False, False, True, False,
                                                             False, False, False, False, False, False, True, True,
                                                             True]
