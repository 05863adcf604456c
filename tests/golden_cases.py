"""The tpc-mini cases whose outputs ``tests/data/tpc_mini_golden.json`` pins (recorded before Engine v2;
re-recorded when tpc-mini's scorer became ``cosine_bm25``: two prompt-aware cases keep other sentences; and
``agnostic_extracted`` when the written request became placed by structure and kept: its description lost the
document sentence glued onto it; and ``agnostic_declaration``, a bare document, when tpc-mini's salience model became
a lead correction: it keeps other sentences, and its scores are in rounds of lead-per-passage).

Run ``python -m tests.golden_cases`` to re-record them, only when a change of output is intended.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "data" / "tpc_mini_golden.json"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "data" / "declaration_of_independence.txt"

TEXT = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was designed by Gustave Eiffel's company. "
    "Construction finished in 1889 for the World's Fair.\n\n"
    "Bananas are rich in potassium. Many people eat them for breakfast. They grow in tropical regions.\n\n"
    "The Great Wall of China is thousands of kilometres long. It was built over many centuries."
)
DOCS = [
    "Alice went to Paris in May. Bob stayed home all summer. The weather in Paris was warm.\r\nAlice visited "
    "the Louvre twice.",
    "Carol flew to Rome.\tRome is the capital of Italy. Pasta is popular there. Carol ate a lot of it.",
    "```python\nprint('hello')\n```\nThe code above prints a greeting. Nobody ran it.",
]


def cases() -> list[tuple[str, Any, dict[str, Any]]]:
    """(name, context, compress keyword arguments)."""
    declaration = EXAMPLE.read_text(encoding="utf-8")
    return [
        ("aware_single", TEXT, {"question": "When was the Eiffel Tower finished?", "target_tokens": 28}),
        ("aware_rate", TEXT, {"question": "Bananas?", "rate": 0.4}),
        ("aware_docs_global", DOCS, {"question": "Where did Carol go?", "target_tokens": 30}),
        ("aware_docs_per_document", DOCS, {"question": "Where did Carol go?", "target_tokens": 40,
                                           "budget_scope": "per_document"}),
        ("aware_docs_chars", DOCS, {"question": "What did Alice visit?", "target_tokens": 120, "token_counter": "len"}),
        ("aware_forced", DOCS, {"question": "Where did Carol go?", "target_tokens": 30,
                                "force_keep_patterns": ["Bob"], "keep_first_sentence": False}),
        ("aware_first_sentence", DOCS, {"question": "pasta", "rate": 0.5, "keep_first_sentence": True}),
        ("aware_declaration", declaration, {"question": "What grievances are listed against the King?",
                                            "rate": 0.1}),
        ("agnostic_extracted", TEXT + "\n\nWhen was the Eiffel Tower finished?", {"rate": 0.3}),
        ("agnostic_declaration", declaration, {"rate": 0.1}),
    ]


def run_case(compressor: Any, context: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The pinned facts of one compression."""
    options = dict(options)
    if options.get("token_counter") == "len":
        options["token_counter"] = len
    result = compressor.compress(context, **options)
    return {"compressed_prompt": result.compressed_prompt, "compressed_documents": result.compressed_documents,
            "origin_tokens": result.origin_tokens, "compressed_tokens": result.compressed_tokens,
            "budget": result.budget, "task_description": result.task_description,
            "task_source": result.task_source,
            "kept": [[s.doc_index, s.index] for s in result.sentences if s.kept],
            "scores": [s.score for s in result.sentences]}


def record() -> None:
    """Write the golden file with the current engine."""
    from tpc_core import TPCCompressor

    compressor = TPCCompressor.from_pretrained("tpc-mini")
    golden = {name: run_case(compressor, context, options) for name, context, options in cases()}
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    record()
