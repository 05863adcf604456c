"""Real inputs for the timing suites: long prompts cut from qa_dev's dev contexts, and single passages.

:func:`build_prompt` concatenates real ``qa_dev`` dev contexts up to a token count (``engine_overhead``,
``scorer_latency``, ``splitting_speed``, ``index_throughput``); :func:`load_passages` cuts the Wikipedia
passages out of ``nq_train`` (the bundled public-domain text when that file is missing: ``corpus_throughput``,
``index_throughput``, ``cache_redis``, ``device_check``). Both read the data root (:mod:`data_access.paths`).
"""

from __future__ import annotations

import gzip
import json
import re

from data_access.paths import CHECKOUT, data_file

__all__ = ["BUNDLED", "PASSAGE", "TASK", "build_prompt", "load_passages"]

BUNDLED = CHECKOUT / "examples" / "data" / "declaration_of_independence.txt"
TASK = "What facts does this passage state about its subject?"
"""The fixed task description the corpus suites compress passages with (no CTD generation)."""
PASSAGE = re.compile(r"Document \[\d+\] \(Title: (?P<title>[^)]*)\) (?P<text>.*?)(?=\nDocument \[\d+\]|\Z)", re.S)


def build_prompt(counter, tokens: int) -> tuple[str, str]:
    """Concatenate real dev contexts until ``tokens`` tokens; the question is the first row's."""
    rows = [json.loads(line) for line in data_file("qa_dev.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == "dev"]
    parts = []
    total = 0
    for row in rows:
        parts.append(row["context"])
        total += counter(row["context"])
        if total >= tokens:
            break
    text = "\n\n".join(parts)
    while counter(text) > tokens:  # trim to the target size on a whitespace boundary
        text = text[: int(len(text) * 0.98)].rsplit(" ", 1)[0]
    return text, rows[0]["question"]


def load_passages(count: int) -> list[dict]:
    """``count`` real passages: NQ Wikipedia passages when the shared data is present, else bundled paragraphs."""
    rows: list[dict] = []
    nq = data_file("nq_train.jsonl.gz")
    if nq.is_file():
        seen: set[str] = set()
        with gzip.open(nq, "rt", encoding="utf-8") as handle:
            for line in handle:
                for match in PASSAGE.finditer(json.loads(line)["context"]):
                    text = match.group("text").strip()
                    if text in seen:
                        continue
                    seen.add(text)
                    rows.append({"id": f"nq-{len(rows)}", "title": match.group("title"), "text": text})
                    if len(rows) == count:
                        return rows
    paragraphs = [p for p in BUNDLED.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    while len(rows) < count:
        rows.append({"id": f"bundled-{len(rows)}", "title": "Declaration of Independence",
                     "text": paragraphs[len(rows) % len(paragraphs)]})
    return rows
