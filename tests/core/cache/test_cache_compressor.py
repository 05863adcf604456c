"""``compress(..., cache=...)`` with the real shipped tpc-mini: fp32 entries give the uncached results exactly
(prompt-aware, request head, salience head, several documents, a caller's counter), the compact default keeps
the golden kept sets, damaged entries and failing stores never change a result, threads and processes share a
cache safely, and ``warm_cache`` / ``cache_info`` do what ingestion and observability need."""

from __future__ import annotations

import contextlib
import copy
import multiprocessing
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.golden_cases import EXAMPLE, GOLDEN, TEXT, cases
from tests.notice_helpers import GOLDEN_OVERSIZED, logged_only, oversized
from tpc_core import TPCCompressor
from tpc_core.cache import DirectoryCache, MemoryCache, decode_entry
from tpc_core.engine.scoring.scorers import SCORERS, PooledCosine

DECLARATION = EXAMPLE.read_text(encoding="utf-8")


def chunked(text: str, size: int = 560) -> list[str]:
    """Retrieval-style chunks: whole sentences, about ``size`` characters each."""
    chunks, current = [], ""
    for sentence in re.split(r"(?<=[.;:])\s+", text):
        if current and len(current) + len(sentence) > size:
            chunks.append(current)
            current = ""
        current = f"{current} {sentence}".strip()
    return [*chunks, current] if current else chunks


# The Declaration's sentences run to 38-97 tokens: over the small budgets of a few of these chunks at rate 0.2 or
# 0.3, some are larger than the whole budget, skipped, and said so (``oversized``).
CHUNKS = chunked(DECLARATION)[:8]


def facts(result):
    """Everything a result says, but whether it came from the cache."""
    data = result.to_dict()
    data.pop("cache_hits")
    data.pop("cache_misses")
    return data


def words(text: str) -> int:
    return len(text.split())


CASES = {
    "aware, one document": (DECLARATION, {"question": "What grievances are listed against the King?", "rate": 0.1}),
    "aware, several documents": (CHUNKS, {"question": "Who has the right to abolish a government?", "rate": 0.2}),
    "aware, per document, forced": (CHUNKS, {"question": "taxes", "target_tokens": 150, "budget_scope": "per_document",
                                             "force_keep_patterns": ["King"], "keep_first_sentence": True}),
    "aware, a caller's counter": (CHUNKS, {"question": "What did he refuse?", "rate": 0.3, "token_counter": words}),
    "agnostic, request head": (TEXT + "\n\nWhen was the Eiffel Tower finished?", {"rate": 0.3}),
    "agnostic, bare documents": (CHUNKS, {"rate": 0.2}),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_fp32_entries_give_the_uncached_results_exactly(tpc_mini, name):
    context, options = CASES[name]
    documents = [context] if isinstance(context, str) else context
    cache = MemoryCache(dtype="fp32")
    # the whole Declaration at rate 0.1 has sentences over its budget; the eight chunks' larger budgets do not
    with oversized() if name == "aware, one document" else contextlib.nullcontext():
        uncached = tpc_mini.compress(context, **options)
        cold = tpc_mini.compress(context, cache=cache, **options)
        assert (cold.cache_hits, cold.cache_misses) == (0, len(documents))
        if name == "agnostic, bare documents":  # scored by the lead correction: never encoded, so nothing stored
            assert tpc_mini.cache_info(cache).entries == 0
            assert tpc_mini.warm_cache(documents, cache=cache) == len(documents)
        warm = tpc_mini.compress(context, cache=cache, **options)
    assert uncached.scored and (uncached.cache_hits, uncached.cache_misses) == (0, 0)
    assert (warm.cache_hits, warm.cache_misses) == (len(documents), 0)
    assert facts(cold) == facts(uncached)  # byte-identical prompt, same kept sentences, same scores
    assert facts(warm) == facts(uncached)
    if name.startswith("agnostic"):
        assert warm.task_source == ("extracted" if "request" in name else "fallback")


@pytest.mark.slow
def test_the_default_int8_storage_keeps_the_golden_kept_sets(tpc_mini):
    import json

    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    cache = MemoryCache()
    assert cache.dtype == "int8"
    for name, context, options in cases():
        options = dict(options)
        if options.get("token_counter") == "len":
            options["token_counter"] = len
        with oversized() if name in GOLDEN_OVERSIZED else contextlib.nullcontext():
            tpc_mini.compress(context, cache=cache, **options)
            warm = tpc_mini.compress(context, cache=cache, **options)
        assert warm.cache_hits == (1 if isinstance(context, str) else len(context)), name
        assert [[s.doc_index, s.index] for s in warm.sentences if s.kept] == recorded[name]["kept"], name
        assert warm.compressed_prompt == recorded[name]["compressed_prompt"], name


def test_warm_cache_stores_each_text_once_and_compress_then_finds_them(tpc_mini):
    cache = MemoryCache()
    texts = [*CHUNKS[:4], CHUNKS[0], "   "]
    assert tpc_mini.warm_cache(texts, cache=cache, batch_size=2) == 4
    assert tpc_mini.warm_cache(texts, cache=cache) == 0
    with oversized():
        result = tpc_mini.compress(CHUNKS[:4], question="What did he refuse?", rate=0.2, cache=cache)
    assert (result.cache_hits, result.cache_misses) == (4, 0)
    assert cache.info().entries == 4
    with pytest.raises(TypeError, match="list of texts"):
        tpc_mini.warm_cache(CHUNKS[0], cache=cache)


def test_cache_memory_is_one_lru_per_compressor_and_a_path_one_object(tpc_mini, tmp_path):
    compressor = copy.copy(tpc_mini)
    compressor.__setstate__(compressor.__getstate__())  # a fresh registry, the same model
    with oversized():
        compressor.compress(CHUNKS[:2], question="taxes", rate=0.2, cache="memory")
        again = compressor.compress(CHUNKS[:2], question="taxes", rate=0.2, cache="memory")
        assert again.cache_hits == 2
        assert compressor.cache_info("memory").hits == 2 and compressor.cache_info().entries == 2
        compressor.compress(CHUNKS[:2], question="taxes", rate=0.2, cache=tmp_path / "dir")
        compressor.compress(CHUNKS[:2], question="taxes", rate=0.2, cache=str(tmp_path / "dir"))
    info = compressor.cache_info(str(tmp_path / "dir"))
    assert (info.hits, info.misses, info.entries) == (2, 2, 2)


def test_a_cache_of_an_unsupported_type_fails_before_any_model_runs(tpc_mini):
    with pytest.raises(TypeError, match="cache must be None, 'memory'"):
        tpc_mini.compress("Some text. More text.", question="q", cache=42)


def test_a_splitter_that_cannot_name_itself_is_not_cached(tpc_mini, caplog):
    class Lines:
        def spans(self, text):
            out, start = [], 0
            for line in text.split("\n"):
                if line.strip():
                    left = text.index(line.strip(), start)
                    out.append((left, left + len(line.strip())))
                start += len(line) + 1
            return out

    with caplog.at_level("WARNING", logger="tpc_core.cache.documents"), oversized():
        result = tpc_mini.compress(CHUNKS[:2], question="taxes", rate=0.3, splitter=Lines(), cache=MemoryCache())
    assert (result.cache_hits, result.cache_misses) == (0, 0)
    assert "cache_identity" in caplog.text


# ---------------------------------------------------------------------------------------------- damage, failures
def entry_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*.tpcs") if not path.name.startswith("."))


@pytest.mark.parametrize("damage", ["truncated", "flipped", "garbage", "foreign"])
def test_a_damaged_entry_on_disk_is_recomputed_and_overwritten(tpc_mini, tmp_path, damage, caplog):
    options = {"question": "Who has the right to abolish a government?", "rate": 0.2}
    with oversized():
        uncached = tpc_mini.compress(CHUNKS[:3], **options)
    cache = DirectoryCache(tmp_path / "c", dtype="fp32")
    with oversized():
        tpc_mini.compress(CHUNKS[:3], cache=cache, **options)
    files = entry_files(tmp_path / "c")
    assert len(files) == 3
    if damage == "foreign":  # a sound entry, made with another splitter, under this document's key
        other = DirectoryCache(tmp_path / "other", dtype="fp32")
        with oversized():
            tpc_mini.compress(CHUNKS[:1], cache=other, splitter="regex", **options)
        foreign = entry_files(tmp_path / "other")[0].read_bytes()
    for path in files:
        data = path.read_bytes()
        damaged = {"truncated": data[: len(data) // 2], "flipped": data[:100] + bytes([data[100] ^ 1]) + data[101:],
                   "garbage": b"not an entry at all", "foreign": foreign if damage == "foreign" else b""}
        path.write_bytes(damaged[damage])
    with caplog.at_level("WARNING", logger="tpc_core.cache.stores"), oversized():
        again = tpc_mini.compress(CHUNKS[:3], cache=cache, **options)
    assert facts(again) == facts(uncached)
    assert (again.cache_hits, again.cache_misses) == (0, 3)
    assert caplog.text.count("damaged") == 3 and cache.info().errors == 3
    for path in entry_files(tmp_path / "c"):  # overwritten with sound entries
        assert decode_entry(path.read_bytes()).text_length in {len(chunk) for chunk in CHUNKS[:3]}
    with oversized():
        assert tpc_mini.compress(CHUNKS[:3], cache=cache, **options).cache_hits == 3


class DownStore:
    """A LangChain-style byte store whose service is down."""

    def mget(self, keys):
        raise ConnectionError("connection refused")

    def mset(self, items):
        raise ConnectionError("connection refused")


def test_a_failing_store_never_breaks_compression_and_is_logged_once(tpc_mini, caplog):
    options = {"question": "taxes", "rate": 0.2}
    with oversized():
        uncached = tpc_mini.compress(CHUNKS[:3], **options)
    store = DownStore()
    with logged_only(caplog, "sentence cache .* failed", count=1), oversized():
        first = tpc_mini.compress(CHUNKS[:3], cache=store, **options)
        second = tpc_mini.compress(CHUNKS[:3], cache=store, **options)
    assert facts(first) == facts(second) == facts(uncached)
    assert tpc_mini.cache_info(store).errors == 4


def test_values_of_the_wrong_type_from_real_stores_are_damaged_entries(tpc_mini):
    from langchain_core.stores import InMemoryByteStore
    from llama_index.core.storage.kvstore import SimpleKVStore

    options = {"question": "taxes", "rate": 0.2}
    with oversized():
        uncached = tpc_mini.compress(CHUNKS[:2], **options)
    byte_store, kv_store = InMemoryByteStore(), SimpleKVStore()
    for store in (byte_store, kv_store):
        with oversized():
            tpc_mini.compress(CHUNKS[:2], cache=store, **options)
    for key in list(byte_store.yield_keys()):
        byte_store.mset([(key, "a str, not bytes")])
    for key in list(kv_store.get_all(collection="tpc_sentence_cache")):
        kv_store.put(key, {"unexpected": [1, 2]}, collection="tpc_sentence_cache")
    for store in (byte_store, kv_store):
        with oversized():
            again = tpc_mini.compress(CHUNKS[:2], cache=store, **options)
        assert facts(again) == facts(uncached) and again.cache_misses == 2
        with oversized():
            assert tpc_mini.compress(CHUNKS[:2], cache=store, **options).cache_hits == 2  # overwritten


# ---------------------------------------------------------------------------------------------- concurrency
@pytest.mark.slow
def test_threads_sharing_one_compressor_and_cache_get_sound_results(tpc_mini, tmp_path):
    prompts = [CHUNKS[k: k + 3] for k in range(6)] * 2
    questions = ["taxes", "Who has the right to abolish a government?", "What did he refuse?"]
    jobs = [(prompt, questions[k % 3]) for k, prompt in enumerate(prompts)]
    with oversized():
        expected = [tpc_mini.compress(prompt, question=q, rate=0.2) for prompt, q in jobs]
    for cache in (MemoryCache(dtype="fp32"), DirectoryCache(tmp_path, dtype="fp32")):
        barrier = threading.Barrier(4)

        def run(job, cache=cache, barrier=barrier):
            if job[1] == "taxes":
                barrier.wait(timeout=60)  # start some calls together, on the same documents
            return tpc_mini.compress(job[0], question=job[1], rate=0.2, cache=cache)

        with oversized(), ThreadPoolExecutor(max_workers=4) as pool:  # the threads' warnings are caught here too
            results = list(pool.map(run, jobs))
        for result, reference in zip(results, expected):
            assert result.compressed_prompt == reference.compressed_prompt
            assert [s.score for s in result.sentences] == pytest.approx([s.score for s in reference.sentences],
                                                                         abs=1e-5)
        assert cache.info().errors == 0 and cache.info().entries == 8


def _compress_in_a_process(directory: str, order: list[int], queue) -> None:
    from tpc_core import TPCCompressor

    compressor = TPCCompressor.from_pretrained("tpc-mini")
    prompts = [CHUNKS[k: k + 3] for k in order]
    first = [compressor.compress(p, question="taxes", rate=0.2, cache=directory).compressed_prompt for p in prompts]
    second = [compressor.compress(p, question="taxes", rate=0.2, cache=directory) for p in prompts]
    info = compressor.cache_info(directory)
    queue.put((order, first, [r.compressed_prompt for r in second], [r.cache_hits for r in second], info.errors))


@pytest.mark.slow
def test_processes_sharing_one_directory_never_read_a_torn_entry(tpc_mini, tmp_path):
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    orders = [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 0, 4, 1, 5, 3]]
    workers = [context.Process(target=_compress_in_a_process, args=(str(tmp_path), order, queue)) for order in orders]
    for worker in workers:
        worker.start()
    reports = [queue.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    with oversized():
        expected = {k: tpc_mini.compress(CHUNKS[k: k + 3], question="taxes", rate=0.2).compressed_prompt
                    for k in range(6)}
    for order, first, second, hits, errors in reports:
        assert errors == 0
        assert first == second == [expected[k] for k in order]
        assert hits == [3] * 6
    files = entry_files(tmp_path)
    assert len(files) == 8
    for path in files:
        decode_entry(path.read_bytes())  # every file whole
    assert not [path for path in tmp_path.rglob(".tmp-*")]  # no temporary file left behind


def test_a_compressor_with_caches_still_copies_and_pickles(tpc_mini):
    import pickle

    compressor = copy.deepcopy(tpc_mini)
    with oversized():
        compressor.compress(CHUNKS[:2], question="taxes", rate=0.2, cache="memory")
    again = pickle.loads(pickle.dumps(compressor))
    assert again.cache_info("memory").entries == 0  # caches start empty in a copy
    with oversized():
        assert again.compress(CHUNKS[:2], question="taxes", rate=0.2, cache="memory").cache_misses == 2


class _NegatedEmbeddings(PooledCosine):
    """A scorer that embeds differently (the CSE's vectors negated) and says so by its identity."""

    identity = "negated_pooled_cse"

    def embed_documents(self, documents):
        return [-matrix for matrix in super().embed_documents(documents)]


def test_the_cache_holds_what_the_scorer_embeds_keyed_by_its_identity(tpc_mini, monkeypatch):
    """The cache wraps the scorer's per-document step. Scorers that embed alike (pooled_cosine and
    tpc-mini's cosine_bm25) share entries; one that embeds differently never gets their embeddings."""
    shared = MemoryCache(dtype="fp32")
    question = "Who declared the causes of the separation?"
    tpc_mini.compress(CHUNKS, question=question, rate=0.3, cache=shared)  # fills the cache with tpc-mini's vectors

    plain = TPCCompressor.from_pretrained("tpc-mini", scorer="pooled_cosine")
    assert plain.engine.scorer.identity == tpc_mini.engine.scorer.identity
    assert plain.compress(CHUNKS, question=question, rate=0.3, cache=shared).cache_hits == len(CHUNKS)

    monkeypatch.setitem(SCORERS, "negated", _NegatedEmbeddings)
    negated = TPCCompressor.from_pretrained("tpc-mini", scorer="negated")
    assert negated._cache_fingerprint != tpc_mini._cache_fingerprint
    uncached = negated.compress(CHUNKS, question=question, rate=0.3)
    first = negated.compress(CHUNKS, question=question, rate=0.3, cache=shared)
    assert first.cache_hits == 0 and first.cache_misses == len(CHUNKS)  # tpc-mini's entries are not its own
    again = negated.compress(CHUNKS, question=question, rate=0.3, cache=shared)
    assert again.cache_hits == len(CHUNKS)
    for result in (first, again):
        assert result.compressed_prompt == uncached.compressed_prompt
        assert [s.score for s in result.sentences] == pytest.approx([s.score for s in uncached.sentences], abs=1e-6)


class _EmbedOnly:
    """A scorer with only ``embed`` and ``relevance``: not a whole :class:`~tpc_core.engine.scoring.scorers.Scorer`
    (it has no per-document step for a cache to wrap, and no identity)."""

    def __init__(self, inner):
        self.inner = inner

    def embed(self, prompts):
        return self.inner.embed(prompts)

    def relevance(self, prompts, embeddings, descriptions):
        return self.inner.relevance(prompts, embeddings, descriptions)


def test_a_scorer_without_a_per_document_step_is_not_run(tpc_mini):
    """The engine runs whole scorers only: one without a per-document step is refused."""
    compressor = copy.deepcopy(tpc_mini)
    compressor._swap_scorer(_EmbedOnly(tpc_mini.engine.scorer))  # swapping the scorer rebuilds the engine around it
    with pytest.raises(AttributeError, match="embed_documents"):
        compressor.compress(CHUNKS, question="Who declared the causes of the separation?", rate=0.3)