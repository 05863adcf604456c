"""Query-time cache suite: ``python -m benchmarks.run --suite cache --out benchmarks/results/cache``.

What a RAG pipeline pays per question for compressing the chunks it retrieved, and what the sentence cache
(``cache=`` on ``compress`` and on both query-time adapters) takes off it. In one process, one compressor:

* **Calls.** ``--cache-chunks`` (20) chunks of about ``--chunk-tokens`` (500) MiniLM tokens, cut at sentence ends
  from qa_dev ``train`` contexts (real long-context text that the dev figures never read; the JSON-blob source
  ``kv_retrieval_75_keys`` is left out), compressed at ``rate`` 0.2 with the first chunk's question given
  (prompt-aware) and with none (prompt-agnostic, ``describe_bare=False``: a bare chunk asks nothing, and a CTD
  generation is not what the cache can save). Per repeat and interleaved: **cold** (no cache: today's cost);
  for each storage, memory and a directory, **cold with a cache attached** (a fresh, empty one: the misses'
  overhead) and **warm** (the same call again, every chunk served from the cache). Medians over ``--repeats``;
  the ratios are taken between medians of the same run.
* **EmbeddingsFilter.** LangChain's ``EmbeddingsFilter`` with the offline MiniLM embeddings
  (``tpc_integrations.embeddings``) on the same chunks and question: it embeds every chunk at every call.
* **Storage.** Bytes per cached sentence: the memory cache's own count (``cache_info().bytes``) and the
  directory's size on disk.
* **Scaling.** Cold and warm call time (prompt-aware, memory) against the number of chunks (5, 10, 20, 40):
  ``cache_latency.png``.
* **End to end** (:mod:`benchmarks.cache_pipelines`): a ``ContextualCompressionRetriever`` and a LlamaIndex
  query engine over in-memory vector stores, the same 50 questions run twice with ``cache="memory"``.

``--quick`` runs all of it on tiny inputs, once: a check that the suite works, not a measurement.
Timings depend on the machine's load: the JSON records the load average before and after.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.cache_pipelines import run_pipelines
from data_access.loaders import Sample
from evaluation.budget import minilm_token_counter
from evaluation.chunks import Chunk, retrieval_set
from evaluation.report import pyplot, save_figure

__all__ = [
    "CacheSuiteSettings",
    "cache_table",
    "embeddings_filter_times",
    "measure_calls",
    "pipeline_lines",
    "plot_cache_scaling",
    "run_cache_suite",
    "scaling",
]

logger = logging.getLogger(__name__)

STORAGES = ("memory", "directory")
SETTINGS = ("aware", "agnostic")


@dataclass(frozen=True)
class CacheSuiteSettings:
    """What the suite runs (the defaults are the published protocol; :meth:`quick` is for tests)."""

    chunks: int = 20
    chunk_tokens: int = 500
    scaling: tuple[int, ...] = (5, 10, 20, 40)
    repeats: int = 5
    warm_calls: int = 3
    rate: float = 0.2
    filter_k: int = 4
    e2e_questions: int = 50
    e2e_top_k: int = 20
    device: str | None = None
    threads: int | None = None
    quick: bool = False

    @classmethod
    def quick_settings(cls, device: str | None = None) -> CacheSuiteSettings:
        """Tiny inputs, one repeat: checks that every part runs (seconds, not a measurement)."""
        return cls(chunks=4, chunk_tokens=120, scaling=(2, 4), repeats=1, warm_calls=1, filter_k=2,
                   e2e_questions=2, e2e_top_k=3, device=device, quick=True)


# ---------------------------------------------------------------------------------------------- timing
def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds ``function()`` took, and what it returned."""
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, value


def _median_ms(seconds: Sequence[float]) -> float:
    return 1000 * statistics.median(seconds)


def _kept(result: Any) -> list[tuple[int, int]]:
    return [(sentence.doc_index, sentence.index) for sentence in result.sentences if sentence.kept]


def _folder_bytes(path: Path) -> int:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


class _Caches:
    """Fresh, empty caches of each storage kind: a new memory cache, or a new directory under ``scratch``."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.made = 0

    def fresh(self, storage: str) -> Any:
        from tpc_core.cache import resolve_cache  # lazy: loads torch

        self.made += 1
        if storage == "memory":
            return resolve_cache("memory")
        folder = self.scratch / f"cache-{self.made}"
        return resolve_cache(folder)

    def folder(self) -> Path:
        return self.scratch / f"cache-{self.made}"


def measure_calls(compressor: Any, texts: list[str], question: str | None, settings: CacheSuiteSettings,
                  scratch: Path) -> dict[str, Any]:
    """Cold, cold with a fresh cache and warm call times for one setting (a question, or none), per storage."""
    options: dict[str, Any] = {"rate": settings.rate}
    if question is None:
        options["describe_bare"] = False
    caches = _Caches(scratch)
    reference = compressor.compress(texts, question=question, **options)  # warm-up, and the uncached result
    cold: list[float] = []
    per_storage: dict[str, dict[str, Any]] = {
        storage: {"cold_cached": [], "warm": [], "identical": True, "same_kept": True, "hits": [], "misses": []}
        for storage in STORAGES}
    for _ in range(settings.repeats):
        cold.append(timed(lambda: compressor.compress(texts, question=question, **options))[0])
        for storage in STORAGES:
            figures = per_storage[storage]
            cache = caches.fresh(storage)
            seconds, first = timed(lambda: compressor.compress(texts, question=question, cache=cache, **options))
            figures["cold_cached"].append(seconds)
            figures["misses"].append(first.cache_misses)
            for _ in range(settings.warm_calls):
                seconds, again = timed(lambda: compressor.compress(texts, question=question, cache=cache,
                                                                   **options))
                figures["warm"].append(seconds)
                figures["hits"].append(again.cache_hits)
                figures["identical"] &= again.compressed_prompt == reference.compressed_prompt
                figures["same_kept"] &= _kept(again) == _kept(reference)
            figures["bytes"] = _stored_bytes(compressor, cache, storage, caches)
    sentences = len(reference.sentences)
    cold_ms = _median_ms(cold)
    report: dict[str, Any] = {"cold_ms": cold_ms, "cold_all_s": cold, "sentences": sentences,
                              "origin_tokens": reference.origin_tokens,
                              "compressed_tokens": reference.compressed_tokens,
                              "task_source": str(reference.task_source) if reference.task_source else None,
                              "storages": {}}
    for storage, figures in per_storage.items():
        warm_ms = _median_ms(figures["warm"])
        cached_ms = _median_ms(figures["cold_cached"])
        report["storages"][storage] = {
            "cold_cached_ms": cached_ms, "warm_ms": warm_ms, "warm_over_cold": warm_ms / cold_ms,
            "cold_cached_over_cold": cached_ms / cold_ms, "cold_cached_all_s": figures["cold_cached"],
            "warm_all_s": figures["warm"], "warm_hits": min(figures["hits"]),
            "cold_cached_misses": max(figures["misses"]),
            "identical_to_uncached": figures["identical"], "same_kept_sentences": figures["same_kept"],
            "bytes": figures["bytes"], "bytes_per_sentence": figures["bytes"] / sentences if sentences else None,
        }  # fmt: skip
    return report


def _stored_bytes(compressor: Any, cache: Any, storage: str, caches: _Caches) -> int:
    """What the cache holds: the memory cache's own byte count, the directory's size on disk."""
    if storage == "memory":
        return int(compressor.cache_info(cache=cache).bytes)
    return _folder_bytes(caches.folder())


def embeddings_filter_times(texts: list[str], question: str, settings: CacheSuiteSettings) -> dict[str, Any]:
    """LangChain's ``EmbeddingsFilter`` (MiniLM, ``k`` documents kept) on the same chunks: it embeds every
    chunk and the question at every call."""
    for module, package in (("langchain_classic", "langchain-classic"), ("langchain_community", "langchain-community")):
        if importlib.util.find_spec(module) is None:
            return {"skipped": f"{package} not installed (EmbeddingsFilter needs it: pip install {package})"}
    from langchain_classic.retrievers.document_compressors import EmbeddingsFilter  # lazy: optional extra (langchain)
    from langchain_core.documents import Document  # lazy: optional extra (langchain)

    from tpc_integrations.embeddings import langchain_embeddings  # lazy: optional extras (langchain / llamaindex)

    documents = [Document(page_content=text) for text in texts]
    peer = EmbeddingsFilter(embeddings=langchain_embeddings(), k=min(settings.filter_k, len(texts)))
    peer.compress_documents(documents, question)  # warm-up (model load)
    seconds = [timed(lambda: peer.compress_documents(documents, question))[0] for _ in range(settings.repeats)]
    return {"k": peer.k, "ms": _median_ms(seconds), "all_s": seconds,
            "embedding": "tpc_integrations.embeddings (all-MiniLM-L6-v2, 256 tokens per text)"}


def scaling(compressor: Any, chunks: Sequence[Chunk], question: str, settings: CacheSuiteSettings) -> list[dict]:
    """Cold and warm (memory) call time, prompt-aware, by number of chunks."""
    from tpc_core.cache import resolve_cache  # lazy: loads torch

    rows = []
    for count in settings.scaling:
        texts = [chunk.text for chunk in chunks[:count]]
        cold = []
        warm = []
        for _ in range(settings.repeats):
            cold.append(timed(lambda: compressor.compress(texts, question=question, rate=settings.rate))[0])
            cache = resolve_cache("memory")
            compressor.compress(texts, question=question, rate=settings.rate, cache=cache)
            warm += [timed(lambda: compressor.compress(texts, question=question, rate=settings.rate, cache=cache))[0]
                     for _ in range(settings.warm_calls)]
        rows.append({"chunks": count, "tokens": sum(chunk.tokens for chunk in chunks[:count]),
                     "cold_ms": _median_ms(cold), "warm_ms": _median_ms(warm)})
    return rows


def plot_cache_scaling(rows: Sequence[dict[str, Any]], path: Path, *, chunk_tokens: int = 500,
                       rate: float = 0.2) -> Path:
    """Call time against the number of chunks, cold and warm (log y)."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(6, 4))
    counts = [row["chunks"] for row in rows]
    axis.plot(counts, [row["cold_ms"] for row in rows], marker="o", label="cold (no cache)")
    axis.plot(counts, [row["warm_ms"] for row in rows], marker="o", label="warm (every chunk cached, memory)")
    axis.set(yscale="log", xlabel=f"retrieved chunks (~{chunk_tokens} MiniLM tokens each)",
             ylabel="ms per call (median)", title=f"tpc-mini, question given, rate {rate}")
    axis.set_xticks(counts)
    axis.grid(alpha=0.3, which="both")
    axis.legend(fontsize=8)
    return save_figure(figure, path)


# ---------------------------------------------------------------------------------------------- the suite
def run_cache_suite(samples: Sequence[Sample], out_dir: Path, settings: CacheSuiteSettings) -> dict[str, Any]:
    """Run every part on qa_dev ``train`` samples; write ``cache.md`` and ``cache_latency.png`` under
    ``out_dir`` and return the JSON payload (``run.py`` writes ``cache.json``)."""
    from tpc_core import TPCCompressor  # lazy: loads torch

    if settings.threads is not None:  # torch's intra-op threads; a busy machine makes 2 threads slow small forwards
        import torch  # lazy: loads torch

        torch.set_num_threads(settings.threads)
    counter = minilm_token_counter()
    load_before = os.getloadavg()
    started = time.perf_counter()
    pool, question = retrieval_set(samples, counter, max(settings.chunks, *settings.scaling), settings.chunk_tokens)
    chunks = pool[: settings.chunks]
    texts = [chunk.text for chunk in chunks]
    compressor = TPCCompressor.from_pretrained("tpc-mini", device=settings.device)
    scratch = Path(tempfile.mkdtemp(prefix="tpc-cache-suite-"))
    try:
        calls = {"aware": measure_calls(compressor, texts, question, settings, scratch / "aware"),
                 "agnostic": measure_calls(compressor, texts, None, settings, scratch / "agnostic")}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    payload: dict[str, Any] = {
        "suite": "cache", "settings": asdict(settings), "model": "tpc-mini", "device": str(compressor.device),
        "chunks": len(chunks), "chunk_tokens": [chunk.tokens for chunk in chunks],
        "tokens": sum(chunk.tokens for chunk in chunks), "question": question,
        "chunk_samples": sorted({chunk.sample_id for chunk in chunks}), "calls": calls,
        "torch_threads": _torch_threads(),
        "embeddings_filter": embeddings_filter_times(texts, question, settings),
        "scaling": scaling(compressor, pool, question, settings),
        "pipelines": run_pipelines(samples, counter, settings),
    }  # fmt: skip
    payload["seconds"] = time.perf_counter() - started
    payload["load_average"] = {"before": load_before, "after": os.getloadavg()}
    plot_cache_scaling(payload["scaling"], out_dir / "cache_latency.png", chunk_tokens=settings.chunk_tokens,
                       rate=settings.rate)
    (out_dir / "cache.md").write_text(cache_table(payload), encoding="utf-8")
    return payload


def _torch_threads() -> int:
    import torch  # lazy: loads torch

    return torch.get_num_threads()


def _ms(value: float | None) -> str:
    return "—" if value is None else (f"{value:.0f}" if value >= 100 else f"{value:.1f}")


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def cache_table(payload: dict[str, Any]) -> str:
    """The suite's markdown report."""
    settings = payload["settings"]
    load = payload["load_average"]
    lines = [
        f"## Query-time cache: {payload['chunks']} chunks, {payload['tokens']} MiniLM tokens, rate {settings['rate']}, "
        f"{payload['model']} on {payload['device']}" + (" (--quick: not a measurement)" if settings["quick"] else ""),
        "",
        f"Medians over {settings['repeats']} repeats ({settings['warm_calls']} warm calls each), one process, "
        f"torch threads {payload['torch_threads']}; "
        f"load average {load['before'][0]:.2f} before, {load['after'][0]:.2f} after. Cold: no cache. Cold + cache: "
        "a fresh, empty cache attached (every chunk a miss). Warm: every chunk served from the cache.",
        "",
        "| Setting | Storage | Cold ms | Cold + cache ms | Warm ms | Warm / cold | Cold + cache / cold | Same output | "
        "Bytes / sentence |",
        "|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for setting in SETTINGS:
        figures = payload["calls"][setting]
        for storage, row in figures["storages"].items():
            same = "identical" if row["identical_to_uncached"] else (
                "same sentences" if row["same_kept_sentences"] else "differs")
            lines.append(f"| {setting} | {storage} | {_ms(figures['cold_ms'])} | {_ms(row['cold_cached_ms'])} | "
                         f"{_ms(row['warm_ms'])} | {_pct(row['warm_over_cold'])} | "
                         f"{row['cold_cached_over_cold']:.3f}× | {same} | {row['bytes_per_sentence']:.0f} |")
    peer = payload["embeddings_filter"]
    warm = payload["calls"]["aware"]["storages"]["memory"]["warm_ms"]
    peer_line = (f"LangChain `EmbeddingsFilter`: skipped, {peer['skipped']}." if "skipped" in peer else
                 f"LangChain `EmbeddingsFilter` (MiniLM, k={peer['k']}) on the same chunks and question: "
                 f"{_ms(peer['ms'])} ms per call; TPC warm (memory): {_ms(warm)} ms ({warm / peer['ms']:.2f}× of it).")
    lines += ["", peer_line,
              f"Prompt-agnostic rows: question=None, describe_bare=False (task source: "
              f"{payload['calls']['agnostic']['task_source']}). Bytes per sentence: the memory cache's own count; "
              "the directory's size on disk.", "",
              "### Call time by number of chunks (prompt-aware, memory)", "",
              "| Chunks | Tokens | Cold ms | Warm ms | Warm / cold |", "|---|---|---|---|---|"]
    for row in payload["scaling"]:
        lines.append(f"| {row['chunks']} | {row['tokens']} | {_ms(row['cold_ms'])} | {_ms(row['warm_ms'])} | "
                     f"{_pct(row['warm_ms'] / row['cold_ms'])} |")
    lines += ["", "Plot: cache_latency.png", ""]
    lines += pipeline_lines(payload["pipelines"])
    return "\n".join(lines) + "\n"


def pipeline_lines(pipelines: dict[str, Any]) -> list[str]:
    """The end-to-end table."""
    lines = [f"### End to end: {pipelines['questions']} questions run twice, top {pipelines['top_k']} of "
             f"{pipelines['corpus_chunks']} chunks, cache=\"memory\"", "",
             "| Pipeline | Run 1 compression s | Run 2 compression s | Run 2 / run 1 | Run 1 hits / misses | "
             "Run 2 hits / misses |", "|---|---|---|---|---|---|"]
    for name, row in pipelines["runs"].items():
        first, second = row["runs"]
        lines.append(f"| {name} | {first['compression_s']:.2f} | {second['compression_s']:.2f} | "
                     f"{_pct(row['second_over_first'])} | {first['cache_hits']} / {first['cache_misses']} | "
                     f"{second['cache_hits']} / {second['cache_misses']} |")
    lines += ["", "Compression time: the compressor's / postprocessor's own calls inside the pipeline, summed over "
                  "the questions (retrieval and index building excluded). Hits / misses: documents, summed from "
                  "the adapters' events (LangChain `tpc_compression`, LlamaIndex `ReRankEndEvent.tags`).", ""]
    return lines
