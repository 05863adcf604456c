"""The engine around the model does each thing once: a sentence is tokenized once when the counter is
the CSE's own tokenizer, and sentence vectors are pooled in one batched product per forward batch."""

from __future__ import annotations

import pytest
import torch

from tests.golden_cases import EXAMPLE, TEXT
from tpc_core.engine.tokens import Encoded, TokenCounter

QUESTION = "Who must consent to taxes?"


def spy_on_tokenize(monkeypatch, compressor):
    """The number of texts the CSE tokenizes itself, call by call."""
    calls: list[int] = []
    tokenize = compressor.encoder.tokenize

    def counting(texts):
        calls.append(len(texts))
        return tokenize(texts)

    monkeypatch.setattr(compressor.encoder, "tokenize", counting)
    return calls


def records(result):
    return [(s.doc_index, s.index, s.score, s.tokens, s.kept) for s in result.sentences]


def test_the_default_counter_gives_its_ids_with_exactly_its_counts(tpc_mini):
    counter = tpc_mini.token_counter
    texts = ["Hello there.", "", "x" * 250 + " tail", "naïve café 東京", TEXT]
    encoded = counter.encode_many(texts)
    assert encoded.counts == counter.count_many(texts) == [counter(text) for text in texts]
    assert encoded.ids == tpc_mini.encoder.tokenize(texts)
    assert encoded.counts[2] > len(encoded.ids[2])  # the long-word rule counts the 250-character word's pieces
    assert encoded.tokenizer == tpc_mini.encoder.tokenizer_fingerprint
    assert TokenCounter(len).encode_many(texts) is None  # a counter that is no tokenizer gives no ids


@pytest.mark.slow
def test_a_sentence_is_tokenized_once_with_the_default_counter(tpc_mini, monkeypatch):
    text = EXAMPLE.read_text(encoding="utf-8")
    expected = tpc_mini.compress(text, question=QUESTION, rate=0.2)
    calls = spy_on_tokenize(monkeypatch, tpc_mini)
    assert records(tpc_mini.compress(text, question=QUESTION, rate=0.2)) == records(expected)
    assert sum(calls) == 1  # the question only: the sentences' ids came with their counts
    calls.clear()
    # The same counts without the ids: the CSE tokenizes the sentences itself, and nothing else changes.
    same_counts = TokenCounter(tpc_mini.token_counter, tpc_mini.token_counter.count_many)
    assert records(tpc_mini.compress(text, question=QUESTION, rate=0.2, token_counter=same_counts)) \
        == records(expected)
    assert sum(calls) == 1 + len(expected.sentences)


@pytest.mark.slow
def test_ids_of_another_tokenizer_are_not_read(tpc_mini, monkeypatch):
    counter = tpc_mini.token_counter

    def foreign(texts):  # right counts, ids of some other tokenizer
        return Encoded(counter.count_many(texts), [[7] * 3 for _ in texts], tokenizer="another tokenizer")

    impostor = TokenCounter(counter, counter.count_many, encode_many=foreign)
    expected = tpc_mini.compress(TEXT, question="Who designed the tower?", rate=0.4)
    calls = spy_on_tokenize(monkeypatch, tpc_mini)
    assert records(tpc_mini.compress(TEXT, question="Who designed the tower?", rate=0.4, token_counter=impostor)) \
        == records(expected)
    assert sum(calls) == 1 + len(expected.sentences)


def test_batched_pooling_is_each_sentences_own_pooling():
    from tpc_core.engine.scoring.cse import pool_sentence, pool_spans

    torch.manual_seed(0)
    hidden = torch.randn(3, 9, 5)
    spans = [(0, 1, 4, 4), (0, 5, 8, 8), (1, 2, 2, 2), (2, 0, 9, 8), (2, 3, 5, 5)]  # (2, 2): an empty span
    for pooling in ("mean", "marker"):
        expected = torch.stack([pool_sentence(hidden[row], start, end, marker, pooling)
                                for row, start, end, marker in spans])
        assert torch.allclose(pool_spans(hidden, spans, pooling), expected, atol=1e-6)
    assert pool_spans(hidden, [], "mean").shape == (0, 5)


# ---------------------------------------------------------------- a document counted as the sum of its sentences
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PIECES = ["word", "Naïve", "CAFÉ", "東京", "x" * 120, "e\u0301", "don't", "U.S.", "3.14", "[SEP]", "<end_of_sent>",
          ",", ".", "?!", "(", "’", "\u200b", "\x00", "\ufffd"]
GAPS = [" ", "  ", "\n", "\n\n", "\t", "\r\n", "\u00a0", "\u3000", "\u2028", "\x0b", "\x0c", "\x1c", "\x85", " \x0b",
        "\x0b ", ""]


@st.composite
def cut_text(draw):
    """A text of words and gaps, and spans that cover its non-blank characters (the segmentation contract)."""
    parts = draw(st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(GAPS)), min_size=1, max_size=12))
    text = draw(st.sampled_from(["", " ", "\x0b"])) + "".join(word + gap for word, gap in parts)
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=5)) | {0, len(text)})
    spans = []
    for start, end in zip(cuts, cuts[1:]):
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
    return text, spans


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut_text())
def test_a_document_counted_from_its_sentences_is_counted_exactly(tpc_mini, case):
    text, spans = case
    counter = tpc_mini.token_counter
    counts = counter.count_many([text[start:end] for start, end in spans])
    assert counter.count_from_sentences(text, spans, counts) in (None, counter(text))


def test_a_document_is_counted_from_its_sentences_where_they_are_apart(tpc_mini):
    counter = tpc_mini.token_counter
    text = " First one. Second\u00a0one!\n\nThird. "

    def from_sentences(document, spans):
        return counter.count_from_sentences(document, spans, counter.count_many([document[s:e] for s, e in spans]))

    assert from_sentences(text, [(1, 11), (12, 23), (25, 31)]) == counter(text)
    assert from_sentences(text, [(1, 6), (7, 11), (12, 23), (25, 31)]) == counter(text)
    # Sentences that touch, or are apart by a character BERT may drop ("\x1c"), are read again together.
    assert from_sentences("One.Two. Three.", [(0, 4), (4, 8), (9, 15)]) == counter("One.Two. Three.")
    assert from_sentences("One.\x1cTwo.", [(0, 4), (5, 9)]) == counter("One.\x1cTwo.")
    assert from_sentences("\x1cOne. Two.\x1c", [(1, 5), (6, 10)]) == counter("\x1cOne. Two.\x1c")
    assert from_sentences("", []) == 0 and from_sentences("\x0b", []) is None
    assert TokenCounter(len).count_from_sentences("One. Two.", [(0, 4), (5, 9)], [4, 4]) is None


# ---------------------------------------------------------------- a batch too large for the device's memory
class RowLimitedModel:
    """The real model, on a device that holds at most ``rows`` rows per forward pass (more raise its OOM error)."""

    def __init__(self, model, rows, error=torch.OutOfMemoryError):
        self.model, self.rows, self.error, self.seen = model, rows, error, []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, input_ids, **kwargs):
        self.seen.append(len(input_ids))
        if len(input_ids) > self.rows:
            raise self.error(f"CUDA out of memory. Tried to allocate a batch of {len(input_ids)} rows")
        return self.model(input_ids=input_ids, **kwargs)


@pytest.fixture
def limited_encoder(tpc_mini):
    from tpc_core.engine.scoring.cse import ContextSentenceEncoder

    def build(rows, error=torch.OutOfMemoryError):
        return ContextSentenceEncoder(RowLimitedModel(tpc_mini.encoder.model, rows, error), tpc_mini.encoder.tokenizer,
                                      tpc_mini.config.cse, tpc_mini.encoder.architecture, tpc_mini.device)

    return build


@pytest.mark.slow
@pytest.mark.parametrize("error", [torch.OutOfMemoryError, RuntimeError], ids=["cuda", "mps"])
def test_a_batch_too_large_for_the_device_is_split_and_the_caller_told_once(tpc_mini, limited_encoder, error):
    text = EXAMPLE.read_text(encoding="utf-8")
    contexts = [tpc_mini.encoder.tokenize([part for part in text.split(". ") if part])]
    expected = tpc_mini.encoder.encode_contexts(contexts)[0]
    questions = ["Who must consent to taxes?", " ".join(["What did the King refuse to do?"] * 60)]  # 1 and 4 windows
    expected_questions = tpc_mini.encoder.encode_questions(questions)
    encoder = limited_encoder(3, error)
    with pytest.warns(UserWarning, match=r"did not fit in the memory of cpu; the context encoder now runs at most "
                                         r"\d+ per pass") as caught:
        actual = encoder.encode_contexts(contexts)[0]
    assert len(caught) == 1 and caught[0].filename == __file__
    assert torch.allclose(actual, expected, atol=1e-5) and encoder.max_rows <= 3
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # told once: no second warning, and no pass over the limit is tried again
        tried = len(encoder.model.seen)
        assert torch.allclose(encoder.encode_questions(questions), expected_questions, atol=1e-5)
        assert torch.allclose(encoder.encode_contexts(contexts)[0], expected, atol=1e-5)
    assert max(encoder.model.seen[tried:]) <= 3


def test_one_row_that_does_not_fit_raises_and_other_errors_pass_through(tpc_mini, limited_encoder):
    with pytest.raises(torch.OutOfMemoryError):
        limited_encoder(0).forward([[101, 102]])
    encoder = limited_encoder(1, ValueError)
    with pytest.raises(ValueError):
        encoder.forward([[101, 102], [101, 102]])
    assert encoder.max_rows is None


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(cut_text(), min_size=1, max_size=3), st.sampled_from(["\n\n", " ", "", " | ", "\x1c"]), st.data())
def test_an_assembly_counted_from_its_sentences_is_counted_exactly(tpc_mini, documents, separator, data):
    from tpc_core.engine.selection.budget import join_documents, joined_count

    counter = tpc_mini.token_counter
    texts, spans = [text for text, _ in documents], [doc_spans for _, doc_spans in documents]
    counts = [counter.count_many([text[s:e] for s, e in doc_spans]) for text, doc_spans in documents]
    kept = [sorted(data.draw(st.sets(st.integers(0, max(len(doc_spans) - 1, 0)), max_size=len(doc_spans))))
            if doc_spans else [] for doc_spans in spans]
    read_again = join_documents(texts, spans, kept, counter, separator)
    from_sentences = join_documents(texts, spans, kept, counter, separator, counts)
    assert from_sentences == read_again
    assert from_sentences.total == counter(from_sentences.prompt(separator))
    assert joined_count(counter, texts, counter.count_many(texts), separator) == counter(separator.join(texts))


# ---------------------------------------------------------------- a chat's latest user turn is read once
def spy_on_reads(monkeypatch, compressor):
    """What the CSE reads, call by call: ("contexts", sentences read) and ("question", texts), and the forward passes
    of each (a hook on the module every pass calls)."""
    calls: list[list] = []
    encoder = compressor.encoder
    encode_contexts, encode_questions = encoder.encode_contexts, encoder.encode_questions

    def contexts(ids):
        calls.append(["contexts", sum(len(context) for context in ids), 0])
        return encode_contexts(ids)

    def questions(texts):
        calls.append(["question", list(texts), 0])
        return encode_questions(texts)

    def forward(*_):
        calls[-1][2] += 1

    monkeypatch.setattr(encoder, "encode_contexts", contexts)
    monkeypatch.setattr(encoder, "encode_questions", questions)
    hook = encoder.forward_module.register_forward_hook(forward)
    return calls, hook


@pytest.mark.slow
def test_a_single_message_chats_user_turn_is_read_once(tpc_mini, monkeypatch):
    paragraphs = [p for p in EXAMPLE.read_text(encoding="utf-8").split("\n\n") if p.strip()][:5]
    request = "What do the colonies declare about their allegiance to the British Crown?"
    user = "\n\n".join([*paragraphs, request])
    chat = [{"role": "system", "content": "You are a historian."}, {"role": "user", "content": user}]
    expected = tpc_mini.compress_messages(chat, target_tokens=250, return_result=True)
    calls, hook = spy_on_reads(monkeypatch, tpc_mini)
    try:
        result = tpc_mini.compress_messages(chat, target_tokens=250, return_result=True)
        # What compressing the turn's paragraphs for its request costs the encoder, as a plain prompt.
        passes = len(calls)
        tpc_mini.compress([*paragraphs, request], question=request, target_tokens=200)
    finally:
        hook.remove()
    assert result.messages == expected.messages and request in result.messages[1]["content"]
    read = len(result.result.sentences)  # every sentence of the turn, as the engine's documents hold them
    assert read == len(tpc_mini.engine.segment_whole([user])[0].sentences)
    # One context read of the turn's sentences (the request head's structure needed no embeddings), then the task.
    assert [call[:2] for call in calls[:passes]] == [["contexts", read], ["question", [request]]]
    assert [call[2] for call in calls[:passes]] == [call[2] for call in calls[passes:]]  # the same forward passes
    assert all(count > 0 for _, _, count in calls)
