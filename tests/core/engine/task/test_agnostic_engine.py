"""Prompt-agnostic wiring: the extractive request head, the CTD fallback and coverage-aware selection.

The head here is written by hand (it fires on sentences ending in "?") to test the engine's wiring on the
tiny random checkpoint; the trained head's quality is measured by ``training.request_head`` and the
benchmarks, and the shipped checkpoint's behaviour by ``test_descriptions.py``.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from tpc_core.engine.task.grounding import is_grounded
from tpc_core.engine.task.request import FEATURE_NAMES
from tpc_core.engine.task.request_sequence import SentenceTagger, SequenceRequestHead

PROMPT = ("Paris is the capital of France. Rome is the capital of Italy. The Tiber flows through Rome. "
          "Bread is made from flour. Which river flows through Rome?")
DOCUMENT = ("Passage 1:\nThe council met on Monday. It approved the new budget. Members argued about parks.\n"
            "Passage 2:\nA storm hit the coast. Roads were closed for a day. The council met on Monday.")


def _question_mark_head(embedding_width: int) -> SequenceRequestHead:
    """A sequence head set by hand to read one layout feature: a sentence ending in "?" gets a logit of about
    +25, any other -10. Its attention and convolution are zero (each sentence alone), so its layers add nothing;
    the projection carries the feature to one unit, which the final layer norm and output read."""
    tagger = SentenceTagger(embedding_width + len(FEATURE_NAMES), width=4, layers=1, heads=1, dropout=0.0)
    with torch.no_grad():
        for parameter in tagger.parameters():
            parameter.zero_()
        tagger.project.weight[0, embedding_width + FEATURE_NAMES.index("question_mark")] = 1.0
        tagger.norm.weight.fill_(1.0)
        tagger.out.weight[0, 0] = 20.0
        tagger.out.bias.fill_(-10.0)
    return SequenceRequestHead(tagger, window=64)


def test_the_hand_set_head_fires_on_questions_only():
    sentences = ["Paris is the capital of France.", "Which river flows through Rome?", "Bread is made from flour."]
    probabilities = _question_mark_head(32).probabilities(torch.randn(3, 32), sentences)
    assert probabilities[1] > 0.99 and bool((probabilities[[0, 2]] < 1e-3).all())


def _with_head(tiny_checkpoint, tmp_path, *, ctd: bool = True, **agnostic):
    from tpc_core import TPCCompressor

    directory = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, directory)
    _question_mark_head(32).save(directory / "request_head.safetensors")
    config = json.loads((directory / "tpc_config.json").read_text())
    config["agnostic"] = {"request_head": "request_head.safetensors", **agnostic}
    if not ctd:
        config["ctd"] = None
    (directory / "tpc_config.json").write_text(json.dumps(config))
    return TPCCompressor.from_pretrained(directory, device="cpu")


def _assert_verbatim_in_order(result, text):
    position = 0
    for sentence in result.kept_sentences():
        found = text.find(sentence.text, position)
        assert found >= 0
        position = found + len(sentence.text)
    assert result.compressed_tokens <= result.budget


def test_written_request_is_extracted_without_generation(tiny_checkpoint, tmp_path):
    compressor = _with_head(tiny_checkpoint, tmp_path)
    result = compressor.compress(PROMPT, target_tokens=20, token_counter=lambda t: len(t.split()))
    assert result.task_source == "extracted"
    assert result.task_description == "Which river flows through Rome?"
    assert not compressor._ctd.loaded  # the CTD was never loaded
    assert compressor.describe_task(PROMPT) == "Which river flows through Rome?"
    _assert_verbatim_in_order(result, PROMPT)


def test_no_written_request_falls_back_to_the_ctd_with_coverage(tiny_checkpoint, tmp_path):
    compressor = _with_head(tiny_checkpoint, tmp_path, position_weight=1.0, redundancy=1.0, relevance_weight=0.0)
    result = compressor.compress(DOCUMENT, target_tokens=12, token_counter=lambda t: len(t.split()),
                                 describe_bare=True)
    written = compressor._ctd.get().describe([DOCUMENT])[0]  # what the (random) CTD writes for this prompt
    if is_grounded(written, DOCUMENT):
        assert (result.task_source, result.task_description) == ("generated", written)
    else:  # invented text is never used
        assert (result.task_source, result.task_description) == ("fallback", "Summarise the main points of the text.")
    kept = [s.text for s in result.kept_sentences()]
    # lead of each passage, and the repeated sentence is not taken twice
    assert "The council met on Monday." in kept and "A storm hit the coast." in kept
    assert kept.count("The council met on Monday.") == 1
    _assert_verbatim_in_order(result, DOCUMENT)


def test_without_a_ctd_coverage_alone_selects(tiny_checkpoint, tmp_path):
    compressor = _with_head(tiny_checkpoint, tmp_path, ctd=False, position_weight=1.0)
    result = compressor.compress(DOCUMENT, target_tokens=10, token_counter=lambda t: len(t.split()))
    assert result.task_source == "coverage" and result.task_description is None
    assert [s.text for s in result.kept_sentences()][:2] == ["The council met on Monday.", "A storm hit the coast."]
    with pytest.raises(ValueError, match="no task descriptor"):
        compressor.describe_task(DOCUMENT)


def test_without_a_head_the_finder_hands_every_prompt_to_the_ctd_and_reads_nothing():
    from tpc_core.config import AgnosticConfig
    from tpc_core.engine.task.finder import TaskFinder

    def never_read(texts):
        raise AssertionError("no head: nothing is segmented or embedded")

    written = TaskFinder(AgnosticConfig(), None, lambda texts: [f"asks: {text}" for text in texts], name="ckpt")
    assert written.descriptions(["A?", "B."], never_read, separator="\n\n") == ["asks: A?", "asks: B."]
    assert written.descriptions([], never_read, separator="\n\n") == []
    with pytest.raises(ValueError, match="Checkpoint 'ckpt' has no task descriptor \\(ctd\\); pass a question"):
        TaskFinder(AgnosticConfig(), None, None, name="ckpt").descriptions(["A?"], never_read, separator="\n\n")


def test_request_head_path_must_stay_inside_the_checkpoint(tiny_checkpoint, tmp_path):
    from tpc_core import TPCCompressor

    directory = tmp_path / "escape"
    shutil.copytree(tiny_checkpoint, directory)
    config = json.loads((directory / "tpc_config.json").read_text())
    for bad in ("../outside.safetensors", str(tmp_path / "abs.safetensors")):
        config["agnostic"] = {"request_head": bad}
        (directory / "tpc_config.json").write_text(json.dumps(config))
        with pytest.raises(ValueError, match="inside the checkpoint|outside the checkpoint"):
            TPCCompressor.from_pretrained(directory, device="cpu")


def test_long_question_is_encoded_whole(tiny):
    window = tiny.config.cse.max_window_tokens
    base = " ".join(["word"] * (3 * window))
    windows = tiny.encoder.question_windows([base])[0]
    assert len(windows) >= 3
    assert sum(len(ids) - len(tiny.encoder.prefix) - len(tiny.encoder.suffix) - 1 for ids in windows) == \
        len(tiny.encoder.tokenize([base])[0])
    first, changed = tiny.encoder.encode_questions([base + " alpha", base + " omega"])
    assert not torch.allclose(first, changed)  # the tail past the first window counts


@pytest.mark.parametrize("key", ["adapter_dir", "weights_dir", "extra_embeddings"])
def test_checkpoint_part_paths_must_stay_inside_the_checkpoint(tiny_checkpoint, tmp_path, key):
    from tpc_core import TPCCompressor

    outside = tmp_path / "outside"
    outside.mkdir()
    directory = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, directory)
    config = json.loads((directory / "tpc_config.json").read_text())
    for bad in ("../outside", str(outside)):
        config["cse"][key] = bad
        (directory / "tpc_config.json").write_text(json.dumps(config))
        with pytest.raises(ValueError, match=f"cse.{key}"):
            TPCCompressor.from_pretrained(directory, device="cpu")


NO_MARK = ("Paris is the capital of France. Rome is the capital of Italy. The Tiber flows through Rome. "
           "Bread is made from flour. The question: which river flows through rome")


@pytest.mark.parametrize(("share", "source", "description"), [
    (0.8, "matched", "which river flows through rome"),  # the request as written, its label dropped
    (0.0, "generated", "The prompt asks: Which river flows?"),  # matching off: the paraphrase is used
])
def test_a_description_that_restates_a_sentence_is_replaced_by_it(tiny_checkpoint, tmp_path, monkeypatch, share,
                                                                   source, description):
    # The head fires on "?" only and this prompt has none, so the CTD is asked; its text is fixed here so the
    # wiring is tested, not the random tiny CTD.
    compressor = _with_head(tiny_checkpoint, tmp_path, match_share=share)
    monkeypatch.setattr(compressor.engine.task_finder, "describe",
                        lambda prompts: ["The prompt asks: Which river flows?"] * len(prompts))
    result = compressor.compress(NO_MARK, target_tokens=20, token_counter=lambda t: len(t.split()),
                                 describe_bare=True)
    assert (result.task_source, result.task_description) == (source, description)
    _assert_verbatim_in_order(result, NO_MARK)


@pytest.mark.parametrize("share", [-0.1, 1.5])
def test_match_share_outside_zero_one_is_rejected(share):
    from tpc_core.config import AgnosticConfig

    with pytest.raises(ValueError, match="match_share"):
        AgnosticConfig(match_share=share)


def test_a_written_summary_request_keeps_coverage_selection(tiny_checkpoint, tmp_path, monkeypatch):
    # "Summarise ..." written in the prompt and restated by the CTD is matched, but cosine to "summarise" does
    # not rank sentences: the passages' leads are kept (coverage), and no sentence twice.
    prompt = "Summarise the council report in bullet points.\n\n" + DOCUMENT
    compressor = _with_head(tiny_checkpoint, tmp_path, match_share=0.8, position_weight=1.0, redundancy=1.0,
                            relevance_weight=0.0)
    def never(prompts):  # the request is placed from the prompt's structure: nothing is generated
        raise AssertionError("the CTD ran for a prompt whose request is written")

    monkeypatch.setattr(compressor.engine.task_finder, "describe", never)
    result = compressor.compress(prompt, target_tokens=20, token_counter=lambda t: len(t.split()),
                                 describe_bare=True)
    assert (result.task_source, result.task_description) == ("extracted", "Summarise the council report in bullet "
                                                                          "points.")
    assert result.compressed_prompt.startswith("Summarise the council report in bullet points.")
    kept = [s.text for s in result.kept_sentences()]
    assert "The council met on Monday." in kept and "A storm hit the coast." in kept
    assert kept.count("The council met on Monday.") == 1
    _assert_verbatim_in_order(result, prompt)


TURNED = "The exception is raised when the check is true. The log rotates daily. Nobody reads the log. Errors are rare."


@pytest.mark.parametrize(("description", "source"), [
    ("Which exception is raised when the check is false and the log rotates daily?", "fallback"),  # turned around
    ("Which exception is raised when the check is true and the log rotates daily?", "generated"),
])
def test_a_description_that_turns_the_prompt_around_is_never_used(tiny_checkpoint, tmp_path, monkeypatch,
                                                                  description, source):
    # No request is placed in this bare text, so the CTD describes it; its text is fixed here (the wiring is tested).
    compressor = _with_head(tiny_checkpoint, tmp_path, match_share=0.0)
    monkeypatch.setattr(compressor.engine.task_finder, "describe", lambda prompts: [description] * len(prompts))
    result = compressor.compress(TURNED, target_tokens=12, token_counter=lambda t: len(t.split()),
                                 describe_bare=True)
    assert result.task_source == source
    assert result.request_sentences == 0
    _assert_verbatim_in_order(result, TURNED)
