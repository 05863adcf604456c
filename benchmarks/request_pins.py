"""The sentences prompt-agnostic compression pins for the request, over a fixed corpus of real prompts.

``python -m benchmarks.request_pins --out tests/data/structural_pins.json``

The corpus (:func:`corpus`): ``qa_dev`` train rows in the frameworks' stock templates, ``real_requests`` train
requests in the everyday shapes (built as :mod:`benchmarks.request_kept` builds them, documents cut at ``--words``),
and the golden cases with no question. A sentence is pinned when compression keeps it at a budget of one token
(what is pinned is kept whatever the budget; nothing else fits). Written per prompt: its id, the sha256 of its text
and the pinned sentences' ``[document, start, end]``. A file recorded with one tree is the reference another tree's
pins must contain (``tests/core/engine/task/test_pins_only_grow.py``). Uses only public ``tpc_core`` names.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.request_kept import real_prompts, stock_prompts

__all__ = ["corpus", "main", "pins"]


def _golden_prompts() -> list[dict[str, Any]]:
    from tests.golden_cases import cases  # lazy: the test suite's golden cases, read only when the corpus is built

    return [{"id": f"golden/{name}", "prompt": context} for name, context, options in cases()
            if "question" not in options]


def corpus(*, documents: int = 12, rows: int = 6, words: int = 400, seed: int = 7) -> list[dict[str, Any]]:
    """The prompts: ``rows`` qa_dev rows in every stock template, ``documents`` real documents in every everyday
    shape, and the golden cases that pass no question."""
    stock = stock_prompts("heldout-train", rows=rows, words=words, seed=seed)
    real = real_prompts("train", documents=documents, per_document=1, words=words, seed=seed)
    return [{"id": f"stock/{r['id']}", "prompt": r["prompt"]} for r in stock] + \
        [{"id": f"real/{r['id']}", "prompt": r["prompt"]} for r in real] + _golden_prompts()


def digest(prompt: Any) -> str:
    """The sha256 of a prompt (a string, or its documents joined by a NUL)."""
    text = prompt if isinstance(prompt, str) else "\0".join(prompt)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pins(compressor: Any, prompt: Any) -> list[list[int]]:
    """``[document, start, end]`` of every sentence compression pins for ``prompt``'s request (asked nothing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a request over a one-token budget warns: that is the point here
        result = compressor.compress(prompt, target_tokens=1)
    return [[s.doc_index, s.start, s.end] for s in result.sentences if s.kept]


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.request_pins", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="tpc-mini")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    from tpc_core import TPCCompressor  # lazy: the corpus builders above are imported by tests without a model

    compressor = TPCCompressor.from_pretrained(args.checkpoint)
    recorded = {}
    for number, record in enumerate(corpus(), 1):
        recorded[record["id"]] = {"sha256": digest(record["prompt"]), "pinned": pins(compressor, record["prompt"])}
        if number % 20 == 0:
            print(number, file=sys.stderr, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(recorded, indent=0) + "\n", encoding="utf-8")
    print(f"{len(recorded)} prompts, {sum(bool(v['pinned']) for v in recorded.values())} with pinned sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
