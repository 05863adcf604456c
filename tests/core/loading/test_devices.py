"""Tensors stay on the model's device until one copy to the host, checked without a GPU.

The shipped tpc-mini runs for real on the CPU; :mod:`tests.core.loading.fake_device` only keeps the books of where
each tensor lives, as if the model sat on an accelerator. Every path that runs the model is covered: prompt-aware,
prompt-agnostic through the request head and through the salience head, a batch mixing them, and the CTD's
generation. Each must give exactly what the CPU gives, mix no host tensor into the device's, and copy to the
host once per encoder call.
"""

from __future__ import annotations

import contextlib

import pytest
import torch

from tests.core.loading.fake_device import (
    FAKE_DEVICE,
    DeviceMixError,
    DeviceTensor,
    FakeDevice,
    ModelOnFakeDevice,
    on_device,
)
from tests.golden_cases import EXAMPLE, TEXT
from tests.notice_helpers import oversized


def test_the_fake_device_refuses_what_cuda_refuses():
    with FakeDevice() as mode:
        on = torch.ones(3, device=FAKE_DEVICE)
        assert isinstance(on, DeviceTensor) and on.device == FAKE_DEVICE
        assert isinstance(on * torch.tensor(2.0), DeviceTensor)  # a 0-d host tensor is a scalar: allowed
        assert isinstance(on[torch.tensor([0, 2])], DeviceTensor)  # host indices: allowed
        with pytest.raises(DeviceMixError, match="same device"):
            _ = on * torch.ones(3)
        with pytest.raises(DeviceMixError, match="same device"):
            torch.stack([on, torch.ones(3)])
        moved = torch.arange(3).to(FAKE_DEVICE)
        assert isinstance(moved, DeviceTensor) and moved.tolist() == [0, 1, 2]
        host = (on * 2).cpu()
        assert type(host) is torch.Tensor and host.tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(DeviceMixError, match="names a device"):
            on.cuda()
    assert len(mode.host_copies) == 2  # moved.tolist() and .cpu()


def test_the_fake_model_wants_its_inputs_on_the_device(tpc_mini):
    model = ModelOnFakeDevice(tpc_mini.encoder.model)
    ids = torch.tensor([[101, 7592, 102]])
    with FakeDevice():
        with pytest.raises(DeviceMixError, match="move its inputs"):
            model(input_ids=ids, attention_mask=torch.ones_like(ids))
        output = model(input_ids=on_device(ids), attention_mask=on_device(torch.ones_like(ids)))
    assert isinstance(output.last_hidden_state, DeviceTensor)
    assert model.config is tpc_mini.encoder.model.config and model.device == FAKE_DEVICE


@pytest.fixture(scope="module")
def on_accelerator(tpc_mini):
    """tpc-mini with its CSE on the fake device (the same weights, checkpoint and heads)."""
    from tpc_core import TPCCompressor
    from tpc_core.engine.scoring.cse import ContextSentenceEncoder

    encoder = ContextSentenceEncoder(ModelOnFakeDevice(tpc_mini.encoder.model), tpc_mini.encoder.tokenizer,
                                     tpc_mini.config.cse, tpc_mini.encoder.architecture, FAKE_DEVICE)
    return TPCCompressor(tpc_mini.config, encoder, checkpoint_dir=tpc_mini.checkpoint_dir,
                         hub_options=tpc_mini.hub_options, device=FAKE_DEVICE, dtype=tpc_mini.dtype)


def facts(result):
    """What must not depend on the device: the kept sentences, the text, the task."""
    return (result.compressed_prompt, [(s.doc_index, s.index) for s in result.sentences if s.kept],
            result.compressed_tokens, result.task_description, result.task_source)


def scores(result):
    return [s.score for s in result.sentences]


LONG_QUESTION = " ".join(["Which grievances against the King concern trade, taxes, courts or soldiers kept in times "
                          "of peace without the consent of the legislatures?"] * 12)  # several question windows
CASES = {
    "aware": (TEXT, {"question": "When was the Eiffel Tower finished?", "rate": 0.3}, "question"),
    "aware_long_question": (EXAMPLE, {"question": LONG_QUESTION, "rate": 0.1}, "question"),
    "agnostic_request_head": (TEXT + "\n\nWhen was the Eiffel Tower finished?", {"rate": 0.3}, "extracted"),
    "agnostic_salience_head": (EXAMPLE, {"rate": 0.1, "describe_bare": False}, "fallback"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_compress_on_the_device_matches_the_cpu(tpc_mini, on_accelerator, case):
    context, options, source = CASES[case]
    context = context.read_text(encoding="utf-8") if hasattr(context, "read_text") else context
    # the Declaration at rate 0.1 has sentences larger than the whole budget: skipped, and said so
    with oversized() if context == EXAMPLE.read_text(encoding="utf-8") else contextlib.nullcontext():
        expected = tpc_mini.compress(context, **options)
        with FakeDevice() as mode:
            actual = on_accelerator.compress(context, **options)
    assert actual.task_source == source
    assert facts(actual) == facts(expected)
    assert scores(actual) == pytest.approx(scores(expected), abs=1e-6)
    # One copy for the sentences' embeddings, one for the description's: never one per sentence.
    assert len(mode.host_copies) <= 2, mode.host_copies


@pytest.mark.slow
def test_compress_batch_on_the_device_matches_the_cpu(tpc_mini, on_accelerator):
    declaration = EXAMPLE.read_text(encoding="utf-8")
    contexts = [TEXT, TEXT + "\n\nWhen was the Eiffel Tower finished?", declaration, [TEXT, declaration[:3000]],
                "Too short to cut."]
    questions = ["When was the Eiffel Tower finished?", None, None, "Who designed the tower?", None]
    options = {"rate": 0.3, "batch_size": 2, "describe_bare": False}
    with oversized():  # the Declaration's longest sentences are larger than its budget at rate 0.3
        expected = tpc_mini.compress_batch(contexts, question=questions, **options)
    with FakeDevice() as mode, oversized():
        actual = on_accelerator.compress_batch(contexts, question=questions, **options)
    assert [facts(result) for result in actual] == [facts(result) for result in expected]
    assert [result.task_source for result in actual][:4] == ["question", "extracted", "fallback", "question"]
    for got, want in zip(actual, expected):
        assert scores(got) == pytest.approx(scores(want), abs=1e-6)
    assert len(mode.host_copies) <= 2 * 3, mode.host_copies  # 3 batches of 2, 2 encoder calls each


def test_ctd_generation_on_the_device(tiny):
    from tpc_core.engine.task.ctd import TaskDescriptor

    descriptor = tiny._ctd.get()
    on_device_descriptor = TaskDescriptor(ModelOnFakeDevice(descriptor.model), descriptor.tokenizer,
                                          descriptor.config, FAKE_DEVICE)
    prompts = ["Alice went to Paris. What did she see?", "Summarise this short text about the weather."]
    expected = descriptor.describe(prompts)
    with FakeDevice() as mode:
        assert on_device_descriptor.describe(prompts) == expected
    assert len(mode.host_copies) == 1, mode.host_copies  # the generated ids, once


# ---------------------------------------------------------------- bad input: devices and dtypes this machine lacks
needs_no_gpu = pytest.mark.skipif(torch.cuda.is_available() or torch.backends.mps.is_available(),
                                  reason="checks the messages of a machine without CUDA and MPS")


@needs_no_gpu
@pytest.mark.parametrize(("device", "name"), [("cuda", "CUDA"), ("cuda:1", "CUDA"), ("mps", "MPS")])
def test_an_absent_device_gets_the_same_clear_error(device, name):
    from tpc_core.loading.devices import resolve_device

    with pytest.raises(ValueError) as raised:
        resolve_device(device)
    assert str(raised.value).startswith(f"device={device!r} was requested but {name}")
    assert "not available on this machine (it has cpu); use device='cpu', or None" in str(raised.value)


@needs_no_gpu
def test_from_pretrained_on_an_absent_device_fails_before_loading_a_model():
    from tpc_core import TPCCompressor

    for device in ("mps", "cuda"):
        with pytest.raises(ValueError, match="was requested but .* is not available on this machine"):
            TPCCompressor.from_pretrained("tpc-mini", device=device)


@pytest.mark.parametrize("device", ["gpu", "cuda0", "apple", "meta"])
def test_an_unknown_device_names_the_accepted_ones(device):
    from tpc_core.loading.devices import resolve_device

    with pytest.raises(ValueError, match=rf"device={device!r} is not a device (name|TPC runs on); use one of auto, "
                                         r"cpu, cuda, cuda:N, mps \(auto: the best available\); "
                                         r"this machine has .*cpu"):
        resolve_device(device)
    with pytest.raises(TypeError, match="device must be"):
        resolve_device(0)


def test_fp16_on_the_cpu_is_warned_about_at_the_callers_line():
    from tpc_core.loading.devices import resolve_dtype

    with pytest.warns(UserWarning, match="fp16 on the CPU") as caught:
        assert resolve_dtype("fp16", torch.device("cpu")) is torch.float16
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match="fp16 on the CPU"):
        assert resolve_dtype(torch.float16, torch.device("cpu")) is torch.float16
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_dtype(None, torch.device("cpu")) is torch.float32
        assert resolve_dtype("bf16", torch.device("cpu")) is torch.bfloat16
    with pytest.raises(ValueError, match="Unknown dtype 'half'; use one of"):
        resolve_dtype("half", torch.device("cpu"))
