"""``python -m benchmarks.run --suite cache --quick`` on tiny inputs: every part runs and writes its figures.

The input is a qa_dev-schema file made here from the bundled public-domain text (no ../shared needed). Timing
values are never checked (they depend on the machine); counts, hits and misses, and the report's shape are.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.run import main, parse_args
from data_access.loaders import load_qa_dev
from evaluation.budget import minilm_token_counter
from evaluation.chunks import build_chunks, retrieval_set, spread_over_sources
from tpc_core.segmentation import split_sentences

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "examples" / "data" / "declaration_of_independence.txt"
QUESTIONS = ("Which unalienable rights does the Declaration name?", "What did the King refuse his assent to?",
             "Who appeals to the Supreme Judge of the world?")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """Three train records (and one dev record the suite must not read), each a third of the bundled text."""
    paragraphs = [p.strip() for p in BUNDLED.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    thirds = [paragraphs[i::3] for i in range(3)]
    rows = [{"id": f"doi-{i}", "source": f"part{i}", "split": "train", "context": "\n\n".join(part),
             "question": QUESTIONS[i], "answers": ["x"], "supporting_sentences": []} for i, part in enumerate(thirds)]
    rows.append({**rows[0], "id": "dev-0", "split": "dev", "question": "Never asked?"})
    directory = tmp_path_factory.mktemp("qa")
    (directory / "qa_dev.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return directory


def test_chunks_are_verbatim_sentence_runs_within_the_size(data_dir):
    counter = minilm_token_counter()
    samples = load_qa_dev(data_dir, split="train")
    assert [s.id for s in spread_over_sources(samples, 2)] == ["doi-0", "doi-1"]
    for sample in samples:
        chunks = build_chunks(sample, counter, 120)
        assert chunks and all(chunk.text in sample.context and chunk.sample_id == sample.id for chunk in chunks)
        # at most 120 tokens, unless one sentence alone is longer (sentences are never cut)
        assert all(chunk.tokens <= 120 or len(split_sentences(chunk.text)) == 1 for chunk in chunks)
        assert all(chunk.tokens == sum(counter(chunk.text[a:b]) for a, b in split_sentences(chunk.text))
                   for chunk in chunks)
    chunks, question = retrieval_set(samples, counter, 4, 120)
    assert len(chunks) == 4 and question == QUESTIONS[0]
    with pytest.raises(ValueError, match="only .* chunks"):
        retrieval_set(samples, counter, 500, 120)


@pytest.mark.slow
def test_quick_cache_suite_writes_every_figure(data_dir, tmp_path):
    out = tmp_path / "cache"
    assert main(["--suite", "cache", "--quick", "--data-dir", str(data_dir), "--out", str(out)]) == 0
    payload = json.loads((out / "cache.json").read_text(encoding="utf-8"))
    assert payload["suite"] == "cache" and payload["settings"]["quick"] is True
    assert payload["command"].startswith("python -m benchmarks.run --suite cache --quick")
    chunks = payload["chunks"]
    assert chunks == 4 == len(payload["chunk_tokens"]) and payload["tokens"] == sum(payload["chunk_tokens"])
    assert payload["question"] == QUESTIONS[0] and set(payload["chunk_samples"]) <= {"doi-0", "doi-1", "doi-2"}
    for setting in ("aware", "agnostic"):
        calls = payload["calls"][setting]
        assert calls["sentences"] > chunks and calls["compressed_tokens"] < calls["origin_tokens"]
        assert set(calls["storages"]) == {"memory", "directory"}
        # With no question the chunks ask nothing: the lead correction scores them without embeddings, so no
        # chunk is encoded and the cache stores nothing (every call a miss, the same output).
        unencoded = setting == "agnostic" and calls["task_source"] == "fallback"
        for row in calls["storages"].values():
            hits = 0 if unencoded else chunks
            assert (row["cold_cached_misses"], row["warm_hits"]) == (chunks, hits)
            assert isinstance(row["identical_to_uncached"], bool) and isinstance(row["same_kept_sentences"], bool)
            if unencoded:
                assert row["bytes"] == 0 and row["identical_to_uncached"]
            else:
                assert 0 < row["bytes_per_sentence"] < 1536  # compact storage, below fp32's 384 x 4 bytes
            for key in ("cold_cached_ms", "warm_ms", "warm_over_cold", "cold_cached_over_cold"):
                assert row[key] > 0
    assert payload["calls"]["aware"]["task_source"] == "question"
    assert payload["embeddings_filter"]["k"] == 2 and payload["embeddings_filter"]["ms"] > 0
    assert [row["chunks"] for row in payload["scaling"]] == [2, 4]
    pipelines = payload["pipelines"]
    assert pipelines["questions"] == 2 and pipelines["top_k"] == 3
    for name in ("langchain", "llama_index"):
        first, second = pipelines["runs"][name]["runs"]
        assert first["calls"] == second["calls"] == 2
        assert first["cache_misses"] > 0 and second["cache_misses"] == 0
        assert second["cache_hits"] == first["cache_hits"] + first["cache_misses"] == 2 * 3
        assert pipelines["runs"][name]["second_over_first"] > 0
    assert set(payload["load_average"]) == {"before", "after"} and payload["environment"]["cpu_count"]
    assert payload["torch_threads"] >= 1 and payload["settings"]["threads"] is None
    assert (out / "cache_latency.png").stat().st_size > 0 and not (out / "cache.sqlite").exists()
    table = (out / "cache.md").read_text(encoding="utf-8")
    assert "## Query-time cache" in table and "EmbeddingsFilter" in table and "### End to end" in table
    assert table.count("| aware |") == 2 and table.count("| agnostic |") == 2


def test_cache_suite_arguments():
    args = parse_args(["--suite", "cache", "--quick", "--repeats", "3", "--threads", "1"])
    assert (args.suite, args.quick, args.repeats, args.threads) == ("cache", True, 3, 1)
    assert parse_args(["--suite", "cache"]).quick is False
