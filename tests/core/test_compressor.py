"""TPCCompressor behaviour on the real shipped tpc-mini (MiniLM CSE) and bad input."""

from __future__ import annotations

import re
import warnings

import pytest

from tpc_core import CompressionResult

TEXT = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was designed by Gustave Eiffel's company. "
    "Construction finished in 1889 for the World's Fair.\n\n"
    "Bananas are rich in potassium. Many people eat them for breakfast. They grow in tropical regions.\n\n"
    "The Great Wall of China is thousands of kilometres long. It was built over many centuries."
)


def assert_verbatim_in_order(result: CompressionResult, documents: list[str]) -> None:
    """Every kept sentence is an exact substring at its offsets, and the output is made of them in order."""
    for record in result.sentences:
        assert documents[record.doc_index][record.start:record.end] == record.text
    for index, compressed in enumerate(result.compressed_documents):
        kept = [s.text for s in result.kept_sentences(index)]
        position = 0
        for sentence in kept:
            found = compressed.find(sentence, position)
            assert found >= position, sentence
            position = found + len(sentence)
        leftover = compressed
        for sentence in kept:
            leftover = leftover.replace(sentence, "", 1)
        assert leftover.strip() == ""


def test_prompt_aware_keeps_the_relevant_sentence(tpc_mini):
    result = tpc_mini.compress(TEXT, question="When was the Eiffel Tower finished?", target_tokens=28)
    kept = [s.text for s in result.kept_sentences()]
    assert kept and all(s in TEXT.split("\n\n")[0] for s in kept)  # only the Eiffel paragraph survives
    assert result.compressed_tokens <= 28 == result.budget
    assert result.task_description == "When was the Eiffel Tower finished?"
    assert_verbatim_in_order(result, [TEXT])
    score = {s.text: s.score for s in result.sentences}
    assert score["Construction finished in 1889 for the World's Fair."] > max(
        v for k, v in score.items() if "Banana" in k or "potassium" in k or "breakfast" in k or "tropical" in k)


def test_result_fields_and_ratio(tpc_mini):
    result = tpc_mini.compress(TEXT, question="Bananas?", rate=0.4)
    assert result.origin_tokens == len(tpc_mini.encoder.tokenize([TEXT])[0])
    assert result.budget == int(0.4 * result.origin_tokens)
    assert result.ratio == pytest.approx(result.origin_tokens / result.compressed_tokens)
    assert "potassium" in result.compressed_prompt
    assert sum(s.kept for s in result.sentences) == len(result.kept_sentences())
    assert result.to_dict()["compressed_prompt"] == result.compressed_prompt


def test_budget_at_or_above_input_returns_it_unchanged(tpc_mini):
    result = tpc_mini.compress(TEXT, question="anything", rate=1.0)
    assert result.compressed_prompt == TEXT
    assert all(s.kept and s.score is None for s in result.sentences)
    big = tpc_mini.compress(TEXT, target_tokens=10_000)
    assert big.compressed_prompt == TEXT and big.task_description is None


def test_original_separators_are_kept(tpc_mini):
    text = "Line one about cats.\nLine two about cats too.\n\nUnrelated dogs paragraph here."
    result = tpc_mini.compress(text, question="Which lines are about cats?", target_tokens=12)
    assert result.compressed_prompt == "Line one about cats.\nLine two about cats too."


def test_force_keep_and_keep_first(tpc_mini):
    result = tpc_mini.compress(TEXT, question="Great Wall length", target_tokens=30, keep_first_sentence=True)
    assert result.sentences[0].kept
    forced = tpc_mini.compress(TEXT, question="Great Wall length", target_tokens=30,
                               force_keep_patterns=[r"potassium"])
    assert "Bananas are rich in potassium." in forced.compressed_prompt
    assert forced.compressed_tokens <= 30


def test_multi_document_global_and_per_document_budgets(tpc_mini):
    docs = [TEXT, "Potatoes are tubers. They store starch. Potatoes came from the Andes.", "   "]
    global_result = tpc_mini.compress(docs, question="Where do potatoes come from?", rate=0.3)
    assert len(global_result.compressed_documents) == 3
    assert global_result.compressed_documents[2] == ""
    assert "Potatoes came from the Andes." in global_result.compressed_documents[1]
    assert global_result.compressed_tokens <= global_result.budget
    per_doc = tpc_mini.compress(docs, question="Where do potatoes come from?", rate=0.3, budget_scope="per_document")
    assert per_doc.compressed_tokens <= per_doc.budget
    assert per_doc.compressed_documents[0] != ""  # each document gets its share
    assert_verbatim_in_order(per_doc, docs)


@pytest.mark.parametrize("counter", ["cl100k_base", lambda text: len(text.split())])
def test_never_over_budget_with_other_counters(tpc_mini, dev_rows, counter):
    for row in dev_rows[:6]:
        result = tpc_mini.compress(row["context"], question=row["question"], rate=0.2, token_counter=counter)
        assert 0 < result.compressed_tokens <= result.budget
        assert_verbatim_in_order(result, [row["context"]])


def test_sentence_larger_than_budget_is_skipped_with_warning(tpc_mini):
    text = "Short fact one. " + "This sentence is very long " * 20 + "and ends here. Short fact two."
    with pytest.warns(UserWarning, match="larger than the whole budget"):
        result = tpc_mini.compress(text, question="very long sentence", target_tokens=10)
    assert result.compressed_tokens <= 10
    assert "very long" not in result.compressed_prompt


@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_empty_input_gives_empty_result_without_model_call(tpc_mini, text):
    calls = []
    handle = tpc_mini.encoder.forward_module.register_forward_hook(lambda *_: calls.append(1))
    try:
        result = tpc_mini.compress(text)
    finally:
        handle.remove()
    assert result.compressed_prompt == "" and result.origin_tokens == 0 and result.sentences == []
    assert calls == []


@pytest.mark.parametrize("bad", [None, 42, b"bytes", ["ok", 3]])
def test_non_string_input_raises_type_error(tpc_mini, bad):
    with pytest.raises(TypeError):
        tpc_mini.compress(bad)


def test_bad_budget_and_options(tpc_mini):
    with pytest.raises(ValueError, match="positive"):
        tpc_mini.compress(TEXT, target_tokens=0)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        tpc_mini.compress(TEXT, rate=1.2)
    with pytest.raises(ValueError, match="not both"):
        tpc_mini.compress(TEXT, rate=0.5, target_tokens=10)
    with pytest.raises(ValueError, match="budget_scope"):
        tpc_mini.compress(TEXT, question="x", budget_scope="per-doc")
    with pytest.raises(TypeError):
        tpc_mini.compress(TEXT, question=3)
    with pytest.raises(ValueError, match="questions for"):
        tpc_mini.compress_batch([TEXT, TEXT], question=["a"])


@pytest.mark.parametrize("text", [
    "Control\x00chars\x07 here. And\x1b[31m escapes. Fine sentence about rockets.",
    "Emoji 🚀🚀 launch today! The rocket 🚀 flew. Weather was 😀 sunny.",
    "东京是日本的首都。人口很多。富士山很高！你去过吗？",
    "def f(x):\n    return x * 2\n\nprint(f(3))\n# rockets are code too",
    "no punctuation at all just words going on and on " * 60,
])
def test_unusual_text_never_loses_or_invents_characters(tpc_mini, text):
    result = tpc_mini.compress(text, question="rocket", rate=0.5)
    assert result.compressed_tokens <= result.budget
    assert_verbatim_in_order(result, [text])
    covered = "".join(s.text for s in result.sentences)
    assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", text)


def test_compress_batch_matches_single_calls(tpc_mini, dev_rows):
    rows = dev_rows[:4]
    batch = tpc_mini.compress_batch([r["context"] for r in rows], question=[r["question"] for r in rows], rate=0.2)
    for row, result in zip(rows, batch):
        single = tpc_mini.compress(row["context"], question=row["question"], rate=0.2)
        assert result.compressed_prompt == single.compressed_prompt


def test_large_input_completes_with_bounded_memory(tpc_mini, dev_rows):
    """~200k tokens: windows are encoded in batches, so peak memory stays far below the input's attention cost."""
    import resource

    text = "\n\n".join(row["context"] for row in dev_rows)[:900_000]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tpc_mini.compress(text, question="Who founded the company?", rate=0.05)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert result.origin_tokens > 150_000
    assert result.compressed_tokens <= result.budget
    assert grown_mib < 2048


@pytest.mark.slow
def test_prompt_agnostic_mode_finds_the_written_question(tpc_mini, dev_rows):
    row = next(r for r in dev_rows if r["source"].startswith("nq_open"))
    prompt = (f"Write a high-quality answer for the given question using only the provided search results.\n\n"
              f"{row['context']}\n\nQuestion: {row['question']}\nAnswer:")
    result = tpc_mini.compress(prompt, rate=0.2)
    # the labelled question is placed: it is the description, verbatim, and nothing is generated
    assert result.task_source == "extracted" and row["question"] in result.task_description
    assert result.task_description in " ".join(prompt.split())
    assert result.compressed_tokens <= result.budget
    assert_verbatim_in_order(result, [prompt])
    again = tpc_mini.compress(prompt, rate=0.2)
    assert again.task_description == result.task_description  # deterministic by default


def test_per_document_token_counts_and_thread_safety(tpc_mini):
    from concurrent.futures import ThreadPoolExecutor

    docs = [TEXT, "Potatoes are tubers. They store starch. Potatoes came from the Andes."]
    result = tpc_mini.compress(docs, question="potatoes", rate=0.3)
    counter = tpc_mini.token_counter
    assert result.document_origin_tokens == counter.count_many(docs)
    assert result.document_compressed_tokens == [counter(t) if t else 0 for t in result.compressed_documents]
    assert sum(result.document_compressed_tokens) == result.compressed_tokens
    with ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(lambda q: tpc_mini.compress(docs, question=q, rate=0.3).compressed_prompt,
                                 ["potatoes", "Eiffel", "bananas", "China"] * 2))
    sequential = [tpc_mini.compress(docs, question=q, rate=0.3).compressed_prompt
                  for q in ["potatoes", "Eiffel", "bananas", "China"] * 2]
    assert parallel == sequential


def test_compress_refuses_show_progress_with_a_message_naming_compress_batch(tpc_mini):
    with pytest.raises(TypeError, match="show_progress is an option of compress_batch"):
        tpc_mini.compress(TEXT, question="Bananas?", rate=0.5, show_progress=True)
