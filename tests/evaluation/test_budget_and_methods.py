"""One budget for every method: identical budgets, never over them, original sentences in order.

Uses the real MiniLM tokenizer/embeddings, the real tpc_core splitter and engine, and the real LlamaIndex /
LangChain components.
"""

from __future__ import annotations

import pytest

from data_access.loaders import Sample
from evaluation.budget import budget_for, join_spans, minilm_token_counter, select_under_budget
from evaluation.evaluate import compress_one, evaluate
from evaluation.methods.base import Compressed, Method, split_spans
from evaluation.methods.registry import build_method
from synthesis.templates import QA_DEV_TEMPLATES

CONTEXT = (
    "The Nile is a major river in northeastern Africa. It flows north into the Mediterranean Sea.\n"
    "Its length is about 6,650 kilometres. The Aswan High Dam was completed in 1970.\n"
    "Lake Nasser lies behind the dam. Cairo is the largest city on the river. "
    "The river supported ancient Egyptian civilisation for millennia. Papyrus grew along its banks.\n"
    "Bananas are rich in potassium. Mount Everest is the highest mountain above sea level."
)
SAMPLE = Sample(
    id="nile-1", dataset="qa_dev", source="fixture", context=CONTEXT, question="When was the Aswan High Dam completed?",
    answers=("1970",), template=QA_DEV_TEMPLATES["multi_doc_qa"], metric="qa_f1", max_new_tokens=8,
    supporting_sentences=("The Aswan High Dam was completed in 1970.",),
)  # fmt: skip
SENTENCE_LEVEL = ("random", "lead", "bm25", "minilm-cosine", "tpc-aware")


def test_budget_for_and_greedy_selection() -> None:
    assert budget_for(1000, rate=0.2) == 200
    assert budget_for(3, rate=0.1) == 1  # never zero for a non-empty text
    assert budget_for(1000, target_tokens=2000) == 1000
    with pytest.raises(ValueError):
        budget_for(10, rate=0.0)
    # best (index 1, 6 tokens) fits; index 2 (5) no longer fits; index 0 (3) still does: 9 <= 10
    assert select_under_budget([0.1, 0.9, 0.5], [3, 6, 5], 10) == [0, 1]
    assert select_under_budget([1.0], [11], 10) == []


def test_join_spans_keeps_line_breaks_and_counts_add_up() -> None:
    counter = minilm_token_counter()
    spans = split_spans(CONTEXT)
    sentences = [CONTEXT[a:b] for a, b in spans]
    joined = join_spans(CONTEXT, spans, [0, 2, 3])
    assert joined == f"{sentences[0]}\n{sentences[2]} {sentences[3]}"
    # WordPiece counts are additive over whitespace joins: per-sentence budgets hold for the joined text.
    assert counter(joined) == sum(counter(sentences[i]) for i in (0, 2, 3))
    assert counter("a b c") == 3  # no padding to 128, no special tokens


def _is_subsequence(part: list[str], whole: list[str]) -> bool:
    remaining = iter(whole)
    return all(any(item == candidate for candidate in remaining) for item in part)


def test_budget_identity_across_methods() -> None:
    counter, rate = minilm_token_counter(), 0.3
    original = [CONTEXT[a:b] for a, b in split_spans(CONTEXT)]
    budgets = set()
    for name in (*SENTENCE_LEVEL, "llamaindex-seo", "langchain-filter"):
        method = build_method(name, counter)
        if method.unavailable_reason() is not None:  # e.g. langchain-community absent: skipped by the suite too
            continue
        record = compress_one(method, SAMPLE, "aware", counter, rate=rate, target_tokens=None)
        assert "error" not in record, record
        budgets.add(record["budget"])
        if record["compressed_tokens"] > record["budget"]:
            # Only LlamaIndex can overrun: its smallest setting still returns one hit with its neighbours.
            assert name == "llamaindex-seo" and record["info"]["k"] == 1, name
        if name != "llamaindex-seo":  # LlamaIndex repeats context windows in similarity order (its design)
            text = method.compress(CONTEXT, SAMPLE.question, record["budget"], sample_id=SAMPLE.id).text
            kept = [text[a:b] for a, b in split_spans(text)]
            assert kept and _is_subsequence(kept, original), (name, kept)
    assert budgets == {budget_for(counter(CONTEXT), rate=rate)}


def test_question_based_methods_find_the_evidence() -> None:
    counter = minilm_token_counter()
    for name in ("bm25", "minilm-cosine", "langchain-filter", "tpc-aware"):
        if build_method(name, counter).unavailable_reason() is not None:
            continue
        record = compress_one(build_method(name, counter), SAMPLE, "aware", counter, rate=0.2, target_tokens=None)
        assert record["evidence_recall"] == 1.0, name


def test_random_is_seeded_and_lead_keeps_the_beginning() -> None:
    counter = minilm_token_counter()
    first = build_method("random", counter, seed=1).compress(CONTEXT, None, 30, sample_id="s").text
    again = build_method("random", counter, seed=1).compress(CONTEXT, None, 30, sample_id="s").text
    assert first == again
    assert build_method("lead", counter).compress(CONTEXT, None, 12, sample_id="s").text == (
        "The Nile is a major river in northeastern Africa."
    )


class _Broken(Method):
    name = "broken"

    def compress(self, text: str, question: str | None, budget: int, *, sample_id: str = "") -> Compressed:
        raise RuntimeError("boom")


def test_missing_dependency_is_skipped_with_reason_and_failures_do_not_stop_the_run() -> None:
    counter = minilm_token_counter()
    methods = {"llmlingua": build_method("llmlingua", counter), "broken": _Broken(counter),
               "lead": build_method("lead", counter)}  # fmt: skip
    records, skipped = evaluate([SAMPLE], methods, counter, rate=0.5, settings=("aware",))
    reason = methods["llmlingua"].unavailable_reason()
    if reason is None:
        pytest.skip("llmlingua and its weights are installed here")
    assert skipped == {"llmlingua": reason} and ("not installed" in reason or "no local weights" in reason)
    by_method = {record["method"]: record for record in records}
    assert by_method["broken"]["error"] == "RuntimeError: boom"
    assert by_method["lead"]["compressed_tokens"] <= by_method["lead"]["budget"]
