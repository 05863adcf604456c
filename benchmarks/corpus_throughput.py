"""Corpus throughput of ``tpc compress-corpus``: local engine vs Ray Data with 1 and 2 workers on this machine.

Usage:
    python -m benchmarks.corpus_throughput [--docs 256] [--small-docs 32] [--rate 0.2] [--out benchmarks/results/corpus]

The corpus: real Wikipedia passages (``Document [k] (Title: ...) text``) cut out of the NQ contexts of
``nq_train.jsonl.gz`` under the data root (:mod:`data_access.paths`) (the bundled public-domain paragraphs,
repeated, when that file is missing), one passage per row. Every configuration runs the command as a user runs it, in a
fresh process (``python -m tpc_core compress-corpus``), with a fixed ``--task-description`` (no CTD generation), and is
run twice: over the first ``--small-docs`` documents and over all ``--docs``. The difference of the two times removes
the fixed cost (interpreter, Ray start, model load in every worker), so the table shows both the end-to-end rate and the
marginal one, which is what a long run converges to. Peak memory is the peak RSS of each process doing the compression
(the command itself for ``local``, each Ray actor for ``ray``), sampled every 0.2 s with psutil.

Prints a markdown table, writes it with the raw figures (``corpus_throughput.{md,json}``) and a bar plot
(``corpus_throughput.png``) to ``--out``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.harness.timing_inputs import TASK, load_passages
from evaluation.report import pyplot, save_figure

ROOT = Path(__file__).resolve().parents[1]
#: (name, engine, workers, cpus per worker)
CONFIGS: tuple[tuple[str, str, int, float], ...] = (("local", "local", 1, 2.0), ("ray, 1 worker", "ray", 1, 2.0),
                                                    ("ray, 2 workers", "ray", 2, 1.0))


@dataclass(frozen=True)
class Measurement:
    """One configuration's runs over ``docs`` documents and over the first ``small_docs``."""

    config: str
    engine: str
    workers: int
    cpus_per_worker: float
    docs: int
    tokens: int
    seconds: float
    small_docs: int
    seconds_small: float
    peak_rss_mib: float  # per compressing process (the command for local, each actor for ray): the largest

    @property
    def docs_per_second(self) -> float:
        return self.docs / self.seconds

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds

    @property
    def marginal_docs_per_second(self) -> float:
        return (self.docs - self.small_docs) / (self.seconds - self.seconds_small)

    @property
    def marginal_tokens_per_second(self) -> float:
        return self.marginal_docs_per_second * self.tokens / self.docs


class PeakRss:
    """Samples the RSS of a process and its descendants; keeps each process's peak, by its name."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        self.pid = pid
        self.interval = interval
        self.peaks: dict[int, tuple[str, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import psutil  # lazy: optional (benchmarks extra)

        while not self._stop.is_set():
            try:
                root = psutil.Process(self.pid)
                processes = [root, *root.children(recursive=True)]
            except psutil.Error:
                processes = []
            for process in processes:
                try:
                    name = " ".join(process.cmdline())[:80]
                    rss = process.memory_info().rss
                except psutil.Error:
                    continue
                if rss > self.peaks.get(process.pid, ("", 0))[1]:
                    self.peaks[process.pid] = (name, rss)
            self._stop.wait(self.interval)

    def worker_peak(self, engine: str) -> float:
        """MiB: the command's own peak (local) or the largest Ray actor's (ray)."""
        if engine == "local":
            return self.peaks.get(self.pid, ("", 0))[1] / 2 ** 20
        actors = [rss for name, rss in self.peaks.values() if name.startswith("ray::MapWorker")]
        return max(actors, default=0) / 2 ** 20


def run_once(source: Path, out: Path, engine: str, workers: int, cpus: float, rate: float, batch_size: int,
             device: str | None = None) -> tuple[float, float]:
    """Wall seconds of one command run and the compressing processes' peak RSS (MiB)."""
    command = [sys.executable, "-m", "tpc_core", "compress-corpus", str(source), str(out), "--engine", engine,
               "--task-description", TASK, "--rate", str(rate), "--batch-size", str(batch_size),
               "--num-workers", str(workers), "--cpus-per-worker", str(cpus)] + (["--device", device] if device else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    with PeakRss(process.pid) as sampler:
        _, stderr = process.communicate()
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{stderr[-3000:]}")
    return seconds, sampler.worker_peak(engine)


def measure(rows: list[dict], small_docs: int, rate: float, batch_size: int, workdir: Path,
            device: str | None = None) -> list[Measurement]:
    import pyarrow.parquet as pq  # lazy: optional extra (corpus)

    full = workdir / "corpus.jsonl"
    small = workdir / "small.jsonl"
    full.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    small.write_text("".join(json.dumps(r) + "\n" for r in rows[:small_docs]), encoding="utf-8")
    results = []
    for config, engine, workers, cpus in CONFIGS:
        slug = re.sub(r"\W+", "-", config)
        seconds_small, _ = run_once(small, workdir / f"{slug}-small", engine, workers, cpus, rate, batch_size, device)
        seconds, peak = run_once(full, workdir / f"{slug}-all", engine, workers, cpus, rate, batch_size, device)
        tokens = sum(pq.read_table(workdir / f"{slug}-all", columns=["origin_tokens"]).column(0).to_pylist())
        results.append(Measurement(config, engine, workers, cpus, len(rows), tokens, seconds, small_docs,
                                   seconds_small, peak))
        print(f"{config}: {seconds:.1f} s for {len(rows)} docs, {seconds_small:.1f} s for {small_docs}",
              file=sys.stderr)
    return results


def markdown(results: list[Measurement], rate: float, batch_size: int) -> str:
    first = results[0]
    lines = [f"{first.docs} documents, {first.tokens} tokens (MiniLM), rate {rate}, batch {batch_size}, fixed "
             f"--task-description; {os.cpu_count()} CPUs",
             "",
             f"| engine | workers × CPUs | s ({first.docs} docs) | s ({first.small_docs} docs) | docs/s | tokens/s | "
             "marginal docs/s | "
             "marginal tokens/s | peak RSS per worker (MiB) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for m in results:
        lines.append(f"| {m.config} | {m.workers} × {m.cpus_per_worker:g} | {m.seconds:.1f} | {m.seconds_small:.1f} "
                     f"| {m.docs_per_second:.2f} | {m.tokens_per_second:.0f} | {m.marginal_docs_per_second:.2f} | "
                     f"{m.marginal_tokens_per_second:.0f} | {m.peak_rss_mib:.0f} |")
    return "\n".join(lines) + "\n"


def plot(results: list[Measurement], path: Path) -> None:
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7, 3.5))
    names = [m.config for m in results]
    positions = range(len(results))
    axis.bar([p - 0.2 for p in positions], [m.docs_per_second for m in results], width=0.4, label="end to end")
    axis.bar([p + 0.2 for p in positions], [m.marginal_docs_per_second for m in results], width=0.4,
             label="marginal (fixed costs removed)")
    axis.set_xticks(list(positions), names)
    axis.set_ylabel("documents / s")
    axis.set_title("tpc compress-corpus throughput, tpc-mini on this machine's CPUs")
    axis.legend()
    save_figure(figure, path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=256, help="documents in the corpus (default 256)")
    parser.add_argument("--small-docs", type=int, default=32, help="documents of the run that measures fixed costs")
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default=None, help="model device of every worker (default: best available)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "corpus")
    args = parser.parse_args(argv)
    rows = load_passages(args.docs)
    with tempfile.TemporaryDirectory() as workdir:
        results = measure(rows, args.small_docs, args.rate, args.batch_size, Path(workdir), args.device)
    table = markdown(results, args.rate, args.batch_size)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "corpus_throughput.md").write_text(table, encoding="utf-8")
    (args.out / "corpus_throughput.json").write_text(json.dumps(
        [{**asdict(m), "docs_per_second": m.docs_per_second, "tokens_per_second": m.tokens_per_second,
          "marginal_docs_per_second": m.marginal_docs_per_second,
          "marginal_tokens_per_second": m.marginal_tokens_per_second} for m in results], indent=2) + "\n",
        encoding="utf-8")
    plot(results, args.out / "corpus_throughput.png")


if __name__ == "__main__":
    main()
