"""trimwise as a benchmark peer: budget kept, verbatim sentences in order, tiktoken-bound strategies skipped offline.

Uses the real trimwise + LlamaIndex postprocessor, the real MiniLM counter and embedder; skipped where trimwise
is not installed.
"""

from __future__ import annotations

import pytest

from data_access.loaders import Sample
from evaluation.budget import join_spans, minilm_token_counter
from evaluation.evaluate import evaluate
from evaluation.methods.base import split_spans
from evaluation.methods.registry import METHOD_NAMES, OPT_IN_METHOD_NAMES, build_method, method_settings
from evaluation.methods.trimwise import drop_lowest_until_fits, spans_within

pytest.importorskip("trimwise")
pytest.importorskip("llama_index.postprocessor.trimwise")

TIKTOKEN_VARIANTS = ("trimwise-lexical", "trimwise-hybrid", "trimwise-structural")
# Blank-line paragraphs: trimwise's candidates are Markdown blocks, so this gives it several to choose from.
ARTICLE = (
    "The Nile is a major river in northeastern Africa. It flows north into the Mediterranean Sea.\n\n"
    "The Aswan High Dam was completed in 1970. Lake Nasser lies behind the dam.\n\n"
    "Cairo is the largest city on the river. The river supported ancient Egyptian civilisation for millennia.\n\n"
    "Bananas are rich in potassium. They are grown in tropical regions.\n\n"
    "Mount Everest is the highest mountain above sea level. It lies in the Himalayas."
)
QUESTION = "When was the Aswan High Dam completed?"


def _sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in split_spans(text)]


def _assert_verbatim_in_order(output: str, original: str) -> None:
    """``output`` is whole sentences of ``original``, in their original order (a subsequence)."""
    remaining = iter(_sentences(original))
    for sentence in _sentences(output):
        assert any(sentence == candidate for candidate in remaining), (sentence, output)


def _runnable(name: str):
    method = build_method(name, minilm_token_counter())
    reason = method.unavailable_reason()
    if reason is not None:
        pytest.skip(f"{name}: {reason}")
    return method


def _fail_to_load(name: str) -> None:
    raise ConnectionError(f"cannot fetch {name} (simulated offline)")


def test_default_list_has_only_the_offline_variant() -> None:
    assert "trimwise-semantic" in METHOD_NAMES
    assert not set(TIKTOKEN_VARIANTS) & set(METHOD_NAMES) and set(TIKTOKEN_VARIANTS) <= set(OPT_IN_METHOD_NAMES)
    assert method_settings("trimwise-semantic") == {"aware"} and method_settings("trimwise-structural") == {"agnostic"}


def test_spans_within_and_drop_lowest_until_fits() -> None:
    spans = [(0, 5), (6, 10), (11, 20)]
    assert spans_within(spans, [(0, 10)]) == [0, 1]
    assert spans_within(spans, [(0, 8), (11, 20)]) == [0, 2]  # (6, 10) is cut by the range: dropped
    text = "one two three four five"
    spans = [(0, 3), (4, 7), (8, 13), (14, 18), (19, 23)]
    counter = minilm_token_counter()
    assert drop_lowest_until_fits(text, spans, [0, 1, 2, 3], [0.9, 0.1, 0.5, 0.1], counter, 2) == [0, 2]
    assert drop_lowest_until_fits(text, spans, [0, 1], [0.0, 1.0], counter, 5) == [0, 1]  # already fits
    assert drop_lowest_until_fits(text, spans, [0, 1], [0.0, 1.0], counter, 0) == []


@pytest.mark.parametrize("budget", [8, 12, 25, 40, 1000])
def test_semantic_keeps_budget_and_verbatim_sentences(budget: int) -> None:
    method, counter = _runnable("trimwise-semantic"), minilm_token_counter()
    output = method.compress(ARTICLE, QUESTION, budget, sample_id="nile")
    assert counter(output.text) <= budget
    _assert_verbatim_in_order(output.text, ARTICLE)
    assert "omitted" not in output.text
    if budget in (12, 25, 40):  # 12: a sentence-boundary prefix of the best block; 25, 40: the whole block fits
        assert "The Aswan High Dam was completed in 1970." in output.text
    if budget >= counter(ARTICLE):
        assert output.text == join_spans(ARTICLE, split_spans(ARTICLE), range(len(split_spans(ARTICLE))))


def test_semantic_single_paragraph_prefix_keeps_whole_sentences_only() -> None:
    """No block fits: trimwise keeps a prefix of its best block; only whole sentences of it are kept."""
    method, counter = _runnable("trimwise-semantic"), minilm_token_counter()
    paragraph = ARTICLE.replace("\n\n", " ")
    for budget in (5, 15, 30):
        text = method.compress(paragraph, QUESTION, budget, sample_id="one-block").text
        assert counter(text) <= budget
        _assert_verbatim_in_order(text, paragraph)


def test_semantic_needs_no_tiktoken_and_runs_through_the_harness(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    monkeypatch.setattr(tiktoken, "get_encoding", _fail_to_load)
    counter = minilm_token_counter()
    method = _runnable("trimwise-semantic")
    sample = Sample(id="nile", dataset="qa_dev", source="fixture", context=ARTICLE, question=QUESTION,
                    answers=("1970",), template="{context}\n\nQuestion: {input}", metric="qa_f1", max_new_tokens=8,
                    supporting_sentences=("The Aswan High Dam was completed in 1970.",))  # fmt: skip
    records, skipped = evaluate([sample], {"trimwise-semantic": method}, counter, rate=0.3, settings=("aware",))
    assert skipped == {} and "error" not in records[0], records
    assert records[0]["compressed_tokens"] <= records[0]["budget"] and records[0]["evidence_recall"] == 1.0


def test_semantic_strategy_refuses_a_missing_query() -> None:
    """Why trimwise-semantic has no prompt-agnostic row: trimwise requires a query for it."""
    from trimwise import Trimmer

    with pytest.raises(ValueError, match="requires a nonblank query"):
        Trimmer(embedding_callback=lambda query, passages: ([1.0], [[1.0]] * len(passages))).trim(
            ARTICLE, 10, strategy="semantic", token_counter=minilm_token_counter()
        )


@pytest.mark.parametrize("name", TIKTOKEN_VARIANTS)
def test_tiktoken_variants_are_skipped_with_the_reason_when_offline(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken
    from trimwise import TrimConfig

    monkeypatch.setattr(tiktoken, "get_encoding", _fail_to_load)
    counter = minilm_token_counter()
    method = build_method(name, counter)
    reason = method.unavailable_reason()
    encoding = TrimConfig().token_encoding
    assert reason is not None and f"tiktoken cannot load {encoding!r}" in reason and "ConnectionError" in reason
    setting = next(iter(method_settings(name)))
    sample = Sample(id="s", dataset="qa_dev", source="fixture", context=ARTICLE, question=QUESTION, answers=("1970",),
                    template="{context}\n\n{input}", metric="qa_f1", max_new_tokens=8)  # fmt: skip
    records, skipped = evaluate([sample], {name: method}, counter, rate=0.3, settings=(setting,))
    assert skipped == {name: reason} and records == []


@pytest.mark.parametrize("name", TIKTOKEN_VARIANTS)
def test_tiktoken_variants_reason_matches_this_machine(name: str) -> None:
    """The reason is found by really loading the encoding: it is given exactly when tiktoken cannot load it."""
    import tiktoken
    from trimwise import TrimConfig

    try:
        tiktoken.get_encoding(TrimConfig().token_encoding)
        loads = True
    except Exception:  # noqa: BLE001
        loads = False
    reason = build_method(name, minilm_token_counter()).unavailable_reason()
    assert (reason is None) == loads, reason
    if loads:  # online or cached: the variant must keep the same guarantees as trimwise-semantic
        method, counter = build_method(name, minilm_token_counter()), minilm_token_counter()
        question = QUESTION if method.needs_question else None
        output = method.compress(ARTICLE, question, 25, sample_id="nile").text
        assert counter(output) <= 25
        _assert_verbatim_in_order(output, ARTICLE)
