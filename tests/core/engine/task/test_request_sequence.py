"""The structural request finder: windows, the file format, loading through the checkpoint, training."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tpc_core.engine.task.request import FEATURE_NAMES
from tpc_core.engine.task.request_sequence import SentenceTagger, SequenceRequestHead, is_sequence_head, windows

WIDTH = 16 + len(FEATURE_NAMES)


def _sentences(count: int) -> list[str]:
    return [f"Sentence number {k} of the material." if k % 7 else f"What happened in year {k}?" for k in range(count)]


def _head(window: int = 8, seed: int = 0) -> SequenceRequestHead:
    torch.manual_seed(seed)
    return SequenceRequestHead(SentenceTagger(WIDTH, width=16, layers=1, heads=2, dropout=0.0), window=window)


@given(count=st.integers(1, 300), window=st.integers(2, 100))
@settings(max_examples=200, deadline=None)
def test_windows_cover_every_sentence_once_inside_a_window(count, window):
    spans = windows(count, window)
    kept = [i for _, _, keep_start, keep_end in spans for i in range(keep_start, keep_end)]
    assert kept == list(range(count))
    assert all(start <= keep_start <= keep_end <= end and end - start == min(window, count)
               for start, end, keep_start, keep_end in spans)


def test_probabilities_of_a_long_prompt_come_from_its_windows():
    head, count = _head(window=8), 30
    embeddings = torch.nn.functional.normalize(torch.randn(count, 16), dim=1)
    sentences = _sentences(count)
    probabilities = head.probabilities(embeddings, sentences)
    assert probabilities.shape == (count,) and bool(((probabilities > 0) & (probabilities < 1)).all())
    # A sentence's probability is the one its window gives: reading that window alone gives the same number.
    inputs = head.inputs(embeddings, sentences)
    start, end, keep_start, keep_end = windows(count, 8)[1]
    with torch.inference_mode():
        alone = torch.sigmoid(head.model(inputs[start:end].unsqueeze(0))[0])
    assert torch.allclose(probabilities[keep_start:keep_end], alone[keep_start - start:keep_end - start], atol=1e-6)
    assert head.probabilities(torch.zeros(0, 16), []).shape == (0,)


def test_bad_inputs_are_refused_with_the_reason():
    head = _head()
    with pytest.raises(ValueError, match="3 embeddings for 2 sentences"):
        head.probabilities(torch.zeros(3, 16), ["a", "b"])
    with pytest.raises(ValueError, match="expects 16-d embeddings; the encoder gives 8-d"):
        head.probabilities(torch.zeros(2, 8), ["a", "b"])
    with pytest.raises(ValueError, match="window must be >= 2"):
        SequenceRequestHead(head.model, window=1)


def test_save_and_load_round_trip_and_refusals(tmp_path):
    head = _head(window=12)
    path = tmp_path / "head.safetensors"
    head.save(path)
    loaded = SequenceRequestHead.load(path)
    embeddings, sentences = torch.randn(20, 16), _sentences(20)
    assert loaded.window == 12 and is_sequence_head(path)
    assert torch.equal(loaded.probabilities(embeddings, sentences), head.probabilities(embeddings, sentences))

    from safetensors.torch import load_file, save_file

    per_sentence = tmp_path / "mlp.safetensors"  # the per-sentence head's file: weight and bias, no kind
    save_file({"weight": torch.zeros(WIDTH), "bias": torch.zeros(1)}, str(per_sentence),
              metadata={"features": ",".join(FEATURE_NAMES)})
    assert not is_sequence_head(per_sentence)
    with pytest.raises(ValueError, match="holds a per-sentence request head.*dropped in tpc-langchain 0.1.0"):
        SequenceRequestHead.load(per_sentence)
    save_file({"other": torch.zeros(2)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="is not a sequence request head"):
        SequenceRequestHead.load(tmp_path / "other.safetensors")

    tensors = load_file(str(path))
    shape = json.dumps({"input_width": WIDTH, "width": 32, "layers": 1, "heads": 2, "window": 12})
    save_file(tensors, str(tmp_path / "bad.safetensors"),
              metadata={"kind": "sequence", "features": ",".join(FEATURE_NAMES), "shape": shape})
    with pytest.raises(ValueError, match="do not fit its declared shape"):
        SequenceRequestHead.load(tmp_path / "bad.safetensors")
    save_file(tensors, str(tmp_path / "old.safetensors"), metadata={"kind": "sequence", "features": "a,b",
                                                                    "shape": shape})
    with pytest.raises(ValueError, match="other layout features"):
        SequenceRequestHead.load(tmp_path / "old.safetensors")


def test_a_checkpoint_with_a_sequence_head_loads_it_and_finds_with_it(tmp_path):
    """The loader tells the two kinds apart by the file; the task finder runs the sequence head on the real CSE."""
    from tpc_core import REGISTRY, TPCCompressor

    source = REGISTRY["tpc-mini"].local_dir
    target = tmp_path / "tpc-seq"
    shutil.copytree(source, target)
    torch.manual_seed(0)
    SequenceRequestHead(SentenceTagger(384 + len(FEATURE_NAMES), width=16, layers=1, heads=2), window=16) \
        .save(target / "request_head.safetensors")
    compressor = TPCCompressor.from_pretrained(str(target))
    head = compressor.engine.task_finder.head
    assert isinstance(head, SequenceRequestHead) and head.window == 16
    result = compressor.compress("Alpha is a town. It has a river. " * 20 + "Question: what is alpha?", rate=0.3,
                                 describe_bare=False)
    assert result.compressed_tokens <= round(0.3 * result.origin_tokens) + 1


def _encoded(count: int, seed: int) -> list[SimpleNamespace]:
    """Prompts whose request sentence is told by its embedding's first coordinate (a learnable toy task)."""
    generator = torch.Generator().manual_seed(seed)
    prompts = []
    for number in range(count):
        length = 5 + number % 20
        embeddings = torch.randn(length, 16, generator=generator)
        labels = [False] * length
        if number % 4:
            where = number % length
            labels[where] = True
            embeddings[where, 0] = 4.0
        prompts.append(SimpleNamespace(embeddings=embeddings, sentences=_sentences(length), labels=labels))
    return prompts


def test_fitting_learns_a_separable_request_and_resumes_where_it_stopped(tmp_path):
    from training.request_sequence import SequenceFitSettings, fit_sequence_head

    prompts = _encoded(96, seed=1)
    base = dict(width=16, layers=1, heads=2, dropout=0.0, window=12, batch_size=16, learning_rate=5e-3)
    head = fit_sequence_head(prompts, SequenceFitSettings(epochs=6, **base))
    held_out = _encoded(40, seed=2)
    positives = [float(head.probabilities(p.embeddings, p.sentences)[p.labels.index(True)]) for p in held_out
                 if True in p.labels]
    negatives = [float(x) for p in held_out for x, label in zip(head.probabilities(p.embeddings, p.sentences),
                                                                 p.labels) if not label]
    ranked_above = sum(p > n for p in positives for n in negatives) / (len(positives) * len(negatives))
    assert ranked_above > 0.97 and sum(positives) / len(positives) > 0.5 > sum(negatives) / len(negatives)

    checkpoint = tmp_path / "fit.pt"

    def interrupt(epochs_done: int) -> None:
        if epochs_done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit_sequence_head(prompts, SequenceFitSettings(epochs=6, checkpoint=str(checkpoint), **base), interrupt)
    resumed = fit_sequence_head(prompts, SequenceFitSettings(epochs=6, checkpoint=str(checkpoint), **base))
    straight = fit_sequence_head(prompts, SequenceFitSettings(epochs=6, **base))
    for name, value in straight.model.state_dict().items():
        assert torch.allclose(value, resumed.model.state_dict()[name], atol=1e-5), name
    with pytest.raises(ValueError, match="both request and non-request"):
        fit_sequence_head([SimpleNamespace(embeddings=torch.zeros(3, 16), sentences=_sentences(3),
                                           labels=[False] * 3)], SequenceFitSettings(**base))
