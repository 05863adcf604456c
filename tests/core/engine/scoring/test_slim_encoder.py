"""The slim encoder pass computes the model's own forward pass: the real tpc-mini CSE, padded and unpadded."""

from __future__ import annotations

import pytest
import torch

from tpc_core.engine.scoring.cse import pad_batch
from tpc_core.engine.scoring.slim import SlimBert, slim_encoder

TEXTS = ["The committee approved the budget for 2026 after a long debate.",
         "Which river flows through the capital?",
         "Revenue rose 12% in the third quarter, driven by exports to Asia and a weaker currency that year."]


def _model_forward(model, input_ids, attention):
    with torch.inference_mode():
        return model(input_ids=input_ids, attention_mask=attention).last_hidden_state


@pytest.mark.parametrize("rows", [[0], [0, 1, 2], [2, 2]])
def test_the_slim_pass_equals_the_model_forward_on_the_real_cse(tpc_mini, rows):
    encoder = tpc_mini.encoder
    assert isinstance(encoder.slim, SlimBert)
    batch = [encoder.prefix + encoder.tokenize([TEXTS[row]])[0] + encoder.suffix for row in rows]
    input_ids, attention = pad_batch(batch, encoder.tokenizer.pad_token_id or 0)
    padded = bool((attention == 0).any())
    expected = _model_forward(encoder.model, input_ids, attention)
    with torch.inference_mode():
        slim = encoder.slim(input_ids, attention if padded else None)
    real = attention.bool()
    assert slim.shape == expected.shape
    torch.testing.assert_close(slim[real], expected[real], atol=1e-5, rtol=1e-5)


def test_the_cse_reads_through_the_slim_pass_with_the_models_embeddings(tpc_mini):
    encoder = tpc_mini.encoder
    contexts = [encoder.tokenize(TEXTS), encoder.tokenize(TEXTS[:2])]
    slim_vectors = encoder.encode_contexts(contexts)
    slim_question = encoder.encode_questions(["Which river?"])
    kept, encoder.slim = encoder.slim, None
    try:
        model_vectors = encoder.encode_contexts(contexts)
        model_question = encoder.encode_questions(["Which river?"])
    finally:
        encoder.slim = kept
    for slim, model in zip(slim_vectors, model_vectors):
        torch.testing.assert_close(slim, model, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(slim_question, model_question, atol=1e-5, rtol=1e-5)


def test_the_slim_pass_reads_the_weights_as_they_are_now(tiny):
    encoder = tiny.encoder
    batch = [encoder.prefix + encoder.tokenize(["a short text"])[0] + encoder.suffix]
    input_ids, _ = pad_batch(batch, 0)
    before = encoder.slim(input_ids)
    with torch.no_grad():
        encoder.model.encoder.layer[0].output.dense.weight.mul_(2.0)
    try:
        torch.testing.assert_close(encoder.slim(input_ids), _model_forward(encoder.model, input_ids, None),
                                   atol=1e-5, rtol=1e-5)
        assert not torch.allclose(encoder.slim(input_ids), before)
    finally:
        with torch.no_grad():
            encoder.model.encoder.layer[0].output.dense.weight.div_(2.0)


def test_a_model_the_slim_pass_cannot_stand_for_runs_as_it_is():
    from transformers import BertConfig, BertModel, LlamaConfig, LlamaModel

    small = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    assert slim_encoder(LlamaModel(LlamaConfig(vocab_size=64, **small))) is None
    assert slim_encoder(BertModel(BertConfig(vocab_size=64, hidden_act="relu", **small))) is None
    assert isinstance(slim_encoder(BertModel(BertConfig(vocab_size=64, **small))), SlimBert)
