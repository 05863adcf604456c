"""The per-sentence request head (training/request_mlp.py): its file round trip, its refusals, its fit, and the
library refusing to load it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from tpc_core.engine.task.request import FEATURE_NAMES, layout_features
from tpc_core.engine.task.request_sequence import SentenceTagger, SequenceRequestHead
from training.request_mlp import RequestHead, fit_request_head, load_any_head


def test_request_head_round_trip_and_width_check(tmp_path):
    weight = torch.randn(4 + len(FEATURE_NAMES))
    head = RequestHead(weight, 0.25)
    head.save(tmp_path / "head.safetensors")
    loaded = RequestHead.load(tmp_path / "head.safetensors")
    assert torch.equal(loaded.weight, weight) and loaded.bias == 0.25
    embeddings = torch.nn.functional.normalize(torch.randn(3, 4), dim=-1)
    sentences = ["One.", "Two?", "Three."]
    expected = torch.sigmoid(torch.cat([embeddings, layout_features(sentences)], dim=1) @ weight + 0.25)
    assert torch.allclose(loaded.probabilities(embeddings, sentences), expected)
    with pytest.raises(ValueError, match="expects 4-d embeddings"):
        loaded.probabilities(torch.zeros(3, 5), sentences)
    with pytest.raises(ValueError, match="3 sentences"):
        loaded.probabilities(embeddings[:2], sentences)


def test_request_head_load_refuses_other_files(tmp_path):
    from safetensors.torch import save_file

    save_file({"something": torch.zeros(2)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="not a request head"):
        RequestHead.load(tmp_path / "other.safetensors")


def test_request_head_with_a_hidden_layer_round_trips(tmp_path):
    width = 4 + len(FEATURE_NAMES)
    head = RequestHead(torch.randn(3), -0.5, torch.randn(3, width), torch.randn(3))
    head.save(tmp_path / "mlp.safetensors")
    loaded = RequestHead.load(tmp_path / "mlp.safetensors")
    embeddings = torch.nn.functional.normalize(torch.randn(2, 4), dim=-1)
    inputs = torch.cat([embeddings, layout_features(["A?", "B."])], dim=1)
    expected = torch.sigmoid(torch.relu(inputs @ head.hidden_weight.T + head.hidden_bias) @ head.weight - 0.5)
    assert loaded.input_width == width
    assert torch.allclose(loaded.probabilities(embeddings, ["A?", "B."]), expected)


def _prompts(count: int) -> list[SimpleNamespace]:
    """Prompts whose request sentence is the one ending in "?" (a layout feature the head can learn)."""
    generator = torch.Generator().manual_seed(0)
    prompts = []
    for number in range(count):
        sentences = [f"Line {k} of the material." for k in range(6)]
        where = number % 6
        sentences[where] = f"What happened in part {number}?"
        prompts.append(SimpleNamespace(embeddings=torch.randn(6, 4, generator=generator), sentences=sentences,
                                       labels=[k == where for k in range(6)]))
    return prompts


@pytest.mark.parametrize("hidden", [0, 8])
def test_fit_learns_the_request_sentence(hidden):
    prompts = _prompts(24)
    head = fit_request_head(prompts, hidden=hidden, iterations=60, l2=1e-4, seed=0)
    for prompt in prompts:
        probabilities = head.probabilities(prompt.embeddings, prompt.sentences)
        assert int(probabilities.argmax()) == prompt.labels.index(True)
    with pytest.raises(ValueError, match="both request and non-request sentences"):
        fit_request_head([SimpleNamespace(embeddings=torch.randn(2, 4), sentences=["a.", "b."], labels=[False] * 2)],
                         hidden=0, iterations=5, l2=0.0, seed=0)


def test_the_library_refuses_a_per_sentence_head_and_training_reads_either_kind(tmp_path):
    per_sentence, sequence = tmp_path / "mlp.safetensors", tmp_path / "sequence.safetensors"
    RequestHead(torch.zeros(4 + len(FEATURE_NAMES)), 0.0).save(per_sentence)
    torch.manual_seed(0)
    SequenceRequestHead(SentenceTagger(4 + len(FEATURE_NAMES), width=8, layers=1, heads=2), window=8).save(sequence)
    with pytest.raises(ValueError, match="per-sentence request head .* dropped in tpc-langchain 0.1.0"):
        SequenceRequestHead.load(per_sentence)
    assert isinstance(load_any_head(per_sentence), RequestHead)
    assert isinstance(load_any_head(sequence), SequenceRequestHead)
