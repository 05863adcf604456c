"""Cache resume after an interruption, reader answer caching, and the CLI end to end in subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from data_access.loaders import Sample
from evaluation.budget import minilm_token_counter
from evaluation.cache import JsonCache
from evaluation.evaluate import evaluate
from evaluation.methods.base import Compressed, Method
from evaluation.reader import CachedReader

REPO = Path(__file__).resolve().parents[2]


def _samples(count: int) -> list[Sample]:
    return [
        Sample(id=f"s{i}", dataset="qa_dev", source="fixture", context=f"Fact {i} is true. Filler text here.",
               question=f"What about fact {i}?", answers=(f"{i}",), template="{context}\n\n{input}",
               metric="qa_f1", max_new_tokens=4)
        for i in range(count)
    ]  # fmt: skip


class _FirstSentence(Method):
    """Deterministic compressor that can be told to die after N calls (a simulated interruption)."""

    name = "first-sentence"

    def __init__(self, counter, die_after: int | None = None) -> None:
        super().__init__(counter)
        self.calls, self.die_after = 0, die_after

    def warm_up(self) -> None:
        pass

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        if self.die_after is not None and self.calls >= self.die_after:
            raise KeyboardInterrupt
        self.calls += 1
        return Compressed(text.split(". ")[0] + ".")


def test_interrupted_run_resumes_from_cache(tmp_path: Path) -> None:
    counter, samples = minilm_token_counter(), _samples(3)
    cache = JsonCache(tmp_path / "cache.sqlite")
    with pytest.raises(KeyboardInterrupt):
        evaluate(samples, {"m": _FirstSentence(counter, die_after=2)}, counter, rate=0.5, settings=("aware",),
                 cache=cache)
    cache.close()
    cache = JsonCache(tmp_path / "cache.sqlite")  # a new process would reopen the same file
    method = _FirstSentence(counter)
    records, _ = evaluate(samples, {"m": method}, counter, rate=0.5, settings=("aware",), cache=cache)
    assert method.calls == 1  # only the sample the interruption lost is computed again
    assert [record["sample_id"] for record in records] == ["s0", "s1", "s2"]
    assert cache.count("compress") == 3
    records_again, _ = evaluate(samples, {"m": _FirstSentence(counter, die_after=0)}, counter, rate=0.5,
                                settings=("aware",), cache=cache)  # fmt: skip
    assert records_again == records
    # A different budget is a different experiment: not served from the cache.
    with pytest.raises(KeyboardInterrupt):
        evaluate(samples, {"m": _FirstSentence(counter, die_after=0)}, counter, rate=0.3, settings=("aware",),
                 cache=cache)


class _CountingReader:
    identity = "counting-reader"

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, prompt: str, *, max_new_tokens: int, chat: bool) -> str:
        self.calls += 1
        return prompt.split()[1]  # "Fact 0 ..." -> "0"


def test_reader_answers_are_cached_and_scored(tmp_path: Path) -> None:
    counter, cache, inner = minilm_token_counter(), JsonCache(tmp_path / "c.sqlite"), _CountingReader()
    reader = CachedReader(inner, cache)
    for _ in range(2):
        records, _ = evaluate(_samples(2), {"m": _FirstSentence(counter)}, counter, rate=0.5, settings=("aware",),
                              cache=cache, reader=reader)  # fmt: skip
    assert inner.calls == 2  # second pass: all answers from the cache
    assert [record["score"] for record in records] == [1.0, 1.0]


def _run_cli(*args: str, timeout: float = 170) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "benchmarks.run", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip


def test_missing_data_exits_nonzero_with_a_message(tmp_path: Path) -> None:
    done = _run_cli("--suite", "longbench", "--tasks", "qasper", "--data-dir", str(tmp_path),
                    "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "--data-dir" in done.stderr and "qasper.jsonl" in done.stderr


@pytest.mark.shared_data
def test_smoke_run_end_to_end(tmp_path: Path) -> None:
    data = REPO.parent / "shared" / "data" / "qa_dev.jsonl"
    if not data.is_file() and not os.environ.get("TPC_QA_DEV"):
        pytest.skip("qa_dev.jsonl is not beside this checkout")
    out = tmp_path / "out"
    done = _run_cli("--suite", "dev", "--smoke", "--limit", "2", "--methods", "tpc-aware,lead,bm25,full,llmlingua",
                    "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    payload = json.loads((out / "dev.json").read_text())
    assert payload["samples"] == 2 and payload["skipped"]["llmlingua"]
    overall = payload["summary"]["aware"]
    assert overall["lead"]["overall"]["over_budget"] == 0 and overall["bm25"]["overall"]["over_budget"] == 0
    table = (out / "dev.md").read_text()
    assert "| tpc-aware |" in table and "| llmlingua | skipped: llmlingua not installed" in table
    assert "Prompt-agnostic compression" in table  # lead / full also run without the question


def test_hf_reader_wiring_with_a_tiny_random_llama(tiny_checkpoint: Path, tmp_path: Path) -> None:
    from evaluation.reader import HFReader, ReaderUnavailable, resolve_reader

    reader = HFReader(tiny_checkpoint / "ctd_base", device="cpu", max_input_tokens=64)
    long_prompt = "word " * 500 + "Question: what?"  # longer than the window: cut in the middle, still answers
    for chat in (True, False):
        assert isinstance(reader.generate(long_prompt, max_new_tokens=4, chat=chat), str)
    cached = CachedReader(reader, JsonCache(tmp_path / "a.sqlite"))
    first = cached.answer("Hi there.", max_new_tokens=3, chat=True)
    assert cached.answer("Hi there.", max_new_tokens=3, chat=True) == first
    with pytest.raises(ReaderUnavailable, match="reader-base-url"):
        resolve_reader("openai")
    with pytest.raises(ReaderUnavailable, match="no such local model directory"):
        resolve_reader(str(tmp_path / "missing"))
