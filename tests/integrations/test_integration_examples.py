"""Each example runs offline as a script, on the dev data and on the bundled fallback text."""

from __future__ import annotations

import re

import pytest
from integration_helpers import EXAMPLES, example_data

from tests.subprocess_helpers import run_in_checkout

# Every example reads ../shared/data or falls back to the bundled text.
pytestmark = [pytest.mark.slow, pytest.mark.shared_data]


def _run_example(name: str, *args: str) -> str:
    result = run_in_checkout(str(EXAMPLES / name), *args, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout + result.stderr


def _sizes(output: str) -> tuple[int, int]:
    before = int(re.search(r"prompt before: (\d+) tokens", output).group(1))
    after = int(re.search(r"prompt after:\s+(\d+) tokens", output).group(1))
    return before, after


def _kept_sentences(output: str) -> list[str]:
    return re.findall(r"^  - (.+)$", output, flags=re.MULTILINE)


def test_langchain_rag_example_on_the_dev_data():
    output = _run_example("langchain_rag.py", "--target-tokens", "150")
    before, after = _sizes(output)
    assert after < before
    sample = example_data.load_sample(example_data.DEFAULT_DATA, 0)
    assert f"question: {sample.question}" in output
    assert _kept_sentences(output)


def test_langchain_chain_inputs_example_compresses_the_context_toward_the_question():
    output = _run_example("langchain_chain_inputs.py", "--target-tokens", "150")
    before, after = _sizes(output)
    assert after < before
    sample = example_data.load_sample(example_data.DEFAULT_DATA, 0)
    assert f"compressed toward (question): {sample.question}" in output
    compressed = int(re.search(r"\(context (\d+) tokens, budget 150\)", output).group(1))
    assert 0 < compressed <= 150
    corpus = " ".join(" ".join(sample.documents).split())
    kept = _kept_sentences(output)
    assert kept and all(line.rstrip("…") in corpus for line in kept)


def test_llamaindex_example_falls_back_to_the_bundled_text(tmp_path):
    output = _run_example("llamaindex_query_engine.py", "--data", str(tmp_path / "missing.jsonl"))
    assert "using the bundled public-domain text" in output and "declaration-of-independence" in output
    before, after = _sizes(output)
    assert after < before
    bundled = example_data.BUNDLED_TEXT.read_text(encoding="utf-8")
    for line in _kept_sentences(output):
        assert line.rstrip("…") in bundled


def test_prompt_agnostic_example_with_llama_index():
    output = _run_example("prompt_agnostic.py", "--framework", "llamaindex", "--target-tokens", "200")
    description = re.search(r"task description \((\w+)\): (['\"])(.+)\2$", output, re.MULTILINE).group(3)
    assert len(description.split()) >= 3
    before, after = _sizes(output)
    assert after <= 200 < before
    assert any(line.startswith("Question:") for line in _kept_sentences(output))


def test_index_time_compression_example_with_llama_index():
    output = _run_example("index_time_compression.py", "--framework", "llamaindex", "--rate", "0.5")
    sizes = re.search(r"index before: (\d+) tokens; index after: (\d+) tokens", output)
    before = int(sizes.group(1))
    after = int(sizes.group(2))
    assert after < before
    assert "chunks ingested" in output
    hits = _kept_sentences(output)
    assert hits and all(re.match(r"\[\d+ -> \d+ tokens\] ", hit) for hit in hits)


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_query_time_cache_example_is_served_from_the_cache_warmed_at_ingestion(framework, tmp_path):
    output = _run_example("query_time_cache.py", "--framework", framework, "--cache-dir", str(tmp_path / "entries"),
                          "--rate", "0.3", "--top-k", "4")
    indexed = int(re.search(r"(\d+) chunks indexed whole, their cache entries stored in ", output).group(1))
    assert indexed >= 4 and len(list((tmp_path / "entries").rglob("*.tpcs"))) == indexed
    assert "retrieved 4 chunks; served from the cache: True (4 hits, 0 misses)" in output
    before = int(re.search(r"prompt before: (\d+) tokens", output).group(1))
    after = int(re.search(r"prompt after:\s+(\d+) tokens", output).group(1))
    assert after <= 0.3 * before + 2 and after < before  # the rate is of the retrieved tokens (separators aside)
    sample = example_data.load_sample(example_data.DEFAULT_DATA, 0)
    corpus = "\n\n".join(sample.documents)
    kept = _kept_sentences(output)
    assert kept and all(line.rstrip("…") in corpus for line in kept)
