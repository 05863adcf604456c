"""A bare document is compressed without the CTD and without a CSE pass, on every path, with the real tpc-mini.

A prompt that asks nothing gets the fallback task by default (``describe_bare=False``: no generation, the CTD never
loads), and tpc-mini scores it with the lead correction, which reads layout and lexical features only: its sentences
are never encoded (the CSE's ``encode_contexts`` is not called; a freshly loaded compressor does not even load the
backbone's weights). A prompt that asks, or a question, is encoded as before, and a sentence cache warmed with
``warm_cache`` still serves a later question-aware call.
"""

from __future__ import annotations

import pytest

from tests.golden_cases import EXAMPLE
from tpc_core import TPCCompressor
from tpc_core.cache import MemoryCache
from tpc_core.cli import build_parser
from tpc_core.options import CompressOptions

DECLARATION = EXAMPLE.read_text(encoding="utf-8")
QUESTION = "What grievances are listed against the King?"


class EncodeCounter:
    """Counts the calls of the real CSE's ``encode_contexts`` (the forward passes over a prompt's sentences)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, compressor: TPCCompressor) -> None:
        self.calls = 0
        encoder = compressor.encoder
        real = encoder.encode_contexts

        def counted(contexts):
            self.calls += 1
            return real(contexts)

        monkeypatch.setattr(encoder, "encode_contexts", counted)


def test_describe_bare_is_off_by_default_on_every_path():
    assert CompressOptions().describe_bare is False
    args = build_parser().parse_args(["compress", str(EXAMPLE)])
    assert args.describe_bare in (None, False)  # the flag leaves the option's default (False) in place
    on = build_parser().parse_args(["compress", str(EXAMPLE), "--describe-bare"])
    assert on.describe_bare is True
    from tpc_core.options import BatchOptions  # the group of the adapters that have the option

    assert BatchOptions.model_fields["describe_bare"].default is False


def test_bare_document_runs_neither_ctd_nor_cse(tpc_mini, monkeypatch):
    counter = EncodeCounter(monkeypatch, tpc_mini)
    for result in (tpc_mini.compress(DECLARATION, rate=0.2),
                   tpc_mini.compress_batch([DECLARATION, DECLARATION[:3000]], rate=0.3)[0]):
        assert result.task_source == "fallback"
        assert result.request_sentences == 0  # no request invented
        assert 0 < result.compressed_tokens <= result.budget
    assert counter.calls == 0
    # The same document with a question is encoded (the count sees the real passes).
    aware = tpc_mini.compress(DECLARATION, question=QUESTION, rate=0.2)
    assert aware.task_source == "question" and counter.calls == 1


def test_fresh_compressor_loads_no_backbone_for_a_bare_document():
    compressor = TPCCompressor.from_pretrained("tpc-mini")
    bare = compressor.compress(DECLARATION, rate=0.2)
    fingerprint = compressor._cache_fingerprint  # what a sentence cache keys entries by: read without the weights
    assert not compressor.encoder.model_loaded
    assert not compressor._ctd.loaded
    aware = compressor.compress(DECLARATION, question=QUESTION, rate=0.2)
    assert compressor.encoder.model_loaded and aware.task_source == "question"
    del compressor._cache_fingerprint  # computed again from the loaded backbone: the same keys
    assert compressor._cache_fingerprint == fingerprint
    # The deferred backbone computes what an eagerly loaded one does: the bare result is the lead correction's.
    assert bare.compressed_prompt == compressor.compress(DECLARATION, rate=0.2).compressed_prompt


def test_bare_call_writes_no_entry_and_a_warmed_cache_serves_a_question(tpc_mini, monkeypatch):
    cache = MemoryCache()
    counter = EncodeCounter(monkeypatch, tpc_mini)
    bare = tpc_mini.compress(DECLARATION, rate=0.2, cache=cache)
    assert (bare.cache_hits, bare.cache_misses) == (0, 1)
    assert counter.calls == 0 and tpc_mini.cache_info(cache).entries == 0  # nothing encoded, nothing stored
    assert tpc_mini.warm_cache([DECLARATION], cache=cache) == 1  # warming encodes and stores the document
    assert counter.calls == 1
    aware = tpc_mini.compress(DECLARATION, question=QUESTION, rate=0.2, cache=cache)
    assert (aware.cache_hits, aware.cache_misses) == (1, 0)
    assert counter.calls == 1  # served from the warmed entry: no CSE pass
    uncached = tpc_mini.compress(DECLARATION, question=QUESTION, rate=0.2)
    assert aware.compressed_prompt == uncached.compressed_prompt
