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
    with pytest.raises(ValueError, match="Could not load a tokenizer.*no such directory"):
        resolve_token_counter("/no/such/tokenizer/dir")
    assert isinstance(resolve_token_counter(TokenCounter(len)), TokenCounter)


@pytest.mark.parametrize("offline", [False, True], ids=["no network", "HF_HUB_OFFLINE"])
def test_a_misspelt_counter_name_fails_at_once_without_the_network_and_says_what_was_meant(monkeypatch, offline):
    """No socket opens here (pytest-socket): the Hub is unreachable, so the name fails in well under 2 s, with the
    counter it was close to, instead of after transformers' retries."""
    import time

    import transformers  # noqa: F401 - imported beforehand: the time measured is the lookup's, not an import's

    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for misspelt, meant in (("cl100k_bse", "cl100k_base"), ("gpt-2", "gpt2"), ("o200k-base", "o200k_base")):
        started = time.perf_counter()
        with pytest.raises(ValueError, match=f"Hub cannot be reached.*did you mean '{meant}'") as error:
            resolve_token_counter(misspelt)
        assert time.perf_counter() - started < 2.0
        assert ("HF_HUB_OFFLINE is set" in str(error.value)) is offline


def test_the_hub_probe_is_bounded_when_a_connection_hangs(monkeypatch):
    """A resolver or a firewall that never answers costs the probe its time limit, not the system's timeouts."""
    import socket
    import time

    from tpc_core.engine import named_tokenizers

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "create_connection", lambda *args, **kwargs: time.sleep(30))
    started = time.perf_counter()
    reason = named_tokenizers.hub_unreachable(timeout=0.3)
    assert time.perf_counter() - started < 1.0 and reason is not None and "did not answer within 0.3 s" in reason


@pytest.mark.enable_socket  # to find a free local port; the lookup itself runs in the subprocess
def test_a_misspelt_counter_name_makes_no_hub_request_in_a_process_with_sockets(tmp_path):
    """In a plain process (sockets allowed) whose Hub endpoint refuses connections: one quick error, no retries."""
    import os
    import socket
    import subprocess
    import sys
    from pathlib import Path

    with socket.socket() as probe:  # a local port nothing listens on: connections are refused at once
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = ("import time, transformers\n"
              "from tpc_core.engine.tokens import resolve_token_counter\n"
              "started = time.perf_counter()\n"
              "try:\n    resolve_token_counter('cl100k_bse')\n"
              "except ValueError as error:\n    print('ERROR', error)\n"
              "print('SECONDS', time.perf_counter() - started)\n")
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HOME": str(tmp_path / "hf"),
           "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("HF_HUB_OFFLINE", None)
    run = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert output.count("ERROR") == 1 and "did you mean 'cl100k_base'" in output and "ConnectionRefusedError" in output
    assert "Retry" not in output and float(output.split("SECONDS")[1]) < 2.0


def test_batch_encoder_gives_the_backends_own_encodings():
    """The normalizer-free copy serves plain texts only, and every text's ids and offsets are the backend's."""
    import pickle
    import random

    from transformers import AutoTokenizer

    from tpc_core.engine.fast_encoder import BatchEncoder
    from tpc_core.loading.offline import minilm_dir

    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir()))
    tokenizer.add_tokens(["<end_of_sent>"])
    encoder = BatchEncoder(tokenizer.backend_tokenizer)
    assert encoder.plain is not None and encoder.lowercase
    tricky = ["Hello, World! 3.14 e-mail@x.com", "It’s a “quote” – and — dashes…", "Café NAÏVE résumé",
              "東京は大きい。", "ΣΊΣΥΦΟΣ", "a\u00a0b", "tab\there\r\nline", "nul\x00byte", "del\x7fete", "[CLS] hi",
              "a [sep] b",
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


def test_the_fast_encoder_names_stay_importable_from_tokens():
    """``BatchEncoder``, ``WORD_TABLE_SIZE`` and ``tokenizer_fingerprint`` moved to ``engine.fast_encoder``; the
    old import path names the same objects."""
    from tpc_core.engine import fast_encoder, tokens

    for name in fast_encoder.__all__:
        assert name in tokens.__all__ and getattr(tokens, name) is getattr(fast_encoder, name)
