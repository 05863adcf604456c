"""Lead-per-passage and the learned correction to it (``tpc_core.engine.scoring.lead``)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.methods.baselines import LeadPerPassage
from tpc_core.engine.scoring.lead import (
    LAYOUT_FEATURES,
    LeadCorrection,
    layout_features,
    lead_order,
    passage_layout,
)
from tpc_core.engine.selection.budget import top_k_within_budget
from tpc_core.segmentation import split_sentences

_WORDS = st.sampled_from(["river", "Rome", "flows", "the", "1901", "prize", "was", "awarded", "city", "north"])
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=12).map(lambda words: " ".join(words).capitalize() + ".")
_PASSAGE = st.lists(_SENTENCE, min_size=1, max_size=6).map(" ".join)


@st.composite
def _documents(draw: st.DrawFn) -> str:
    passages = draw(st.lists(_PASSAGE, min_size=1, max_size=6))
    if draw(st.booleans()):
        return "\n\n".join(f"Document [{k + 1}] (Title: T{k}) {text}" for k, text in enumerate(passages))
    return "\n\n".join(passages)


def _trained(seed: int, hidden: int = 0) -> LeadCorrection:
    generator = torch.Generator().manual_seed(seed)
    width = len(LAYOUT_FEATURES)
    if not hidden:
        return LeadCorrection(torch.randn(width, generator=generator), 0.3, torch.zeros(width), torch.ones(width))
    return LeadCorrection(torch.randn(hidden, generator=generator), 0.3, torch.zeros(width), torch.ones(width),
                          torch.randn(hidden, width, generator=generator), torch.randn(hidden, generator=generator))


def test_lead_order_takes_every_passage_first_sentence_first():
    text = "A one. A two. A three.\n\nB one. B two.\n\nC one."
    spans = split_sentences(text, "nupunkt")
    order = lead_order([text], [spans]).tolist()
    ranked = [text[s:e] for _, (s, e) in sorted(zip(order, spans), key=lambda pair: -pair[0])]
    assert ranked == ["A one.", "B one.", "C one.", "A two.", "B two.", "A three."]


def test_marker_lines_and_template_text_come_last_and_the_benchmark_never_keeps_them():
    text = "Summarise the news.\n\nPassage 1:\nFirst news. More.\n\nPassage 2:\nSecond news."
    spans = split_sentences(text, "nupunkt")
    layout = passage_layout([text], [spans])
    outside = [text[s:e] for (s, e), p in zip(spans, layout.passage) if p is None]
    assert outside == ["Summarise the news.", "Passage 1:", "Passage 2:"]
    order = lead_order([text], [spans]).tolist()
    assert all(order[k] < min(order[j] for j, p in enumerate(layout.passage) if p is not None)
               for k, p in enumerate(layout.passage) if p is None)
    scores = LeadPerPassage(None).span_scores(text, list(spans), [text[s:e] for s, e in spans], None, "x")
    assert [text[s:e] for (s, e), v in zip(spans, scores) if v is None] == outside


@settings(max_examples=60, deadline=None)
@given(_documents(), st.integers(0, 2**16), st.floats(0.1, 0.9))
def test_with_the_correction_off_selection_is_exactly_lead_per_passage(text, seed, rate):
    spans = split_sentences(text, "nupunkt")
    counts = [len(text[s:e].split()) for s, e in spans]
    budget = int(rate * sum(counts))
    lead = top_k_within_budget(lead_order([text], [spans]).tolist(), counts, budget)
    for correction in (LeadCorrection.zero(), _trained(seed), _trained(seed, hidden=4)):
        off = correction.scores([text], [spans], counts, enabled=False).tolist()
        assert top_k_within_budget(off, counts, budget) == lead
    zero = LeadCorrection.zero().scores([text], [spans], counts).tolist()
    assert top_k_within_budget(zero, counts, budget) == lead
    # the benchmark's baseline is the same rule: sentences outside passages aside, the same order
    benchmark = LeadPerPassage(None).span_scores(text, list(spans), [text[s:e] for s, e in spans], None, "x")
    inside = [k for k, v in enumerate(benchmark) if v is not None]
    assert sorted(inside, key=lambda k: -benchmark[k]) == sorted(inside, key=lambda k: -zero[k])


def test_a_correction_moves_a_sentence_across_rounds():
    text = "Short lead. A much longer second sentence about the prize.\n\nOther lead. Other second."
    spans = [(0, 11), (12, 58), (60, 71), (72, 85)]
    assert [text[s:e] for s, e in spans][1].endswith("prize.")
    counts = [len(text[s:e].split()) for s, e in spans]
    width = len(LAYOUT_FEATURES)
    weight = torch.zeros(width)
    weight[LAYOUT_FEATURES.index("log_tokens")] = 5.0  # longer sentences first, by several rounds
    longer = LeadCorrection(weight, 0.0, torch.zeros(width), torch.ones(width)).scores([text], [spans], counts)
    assert int(torch.argmax(longer)) == 1


def test_layout_features_shape_and_bad_counts():
    text = "One. Two.\n\nThree."
    spans = split_sentences(text, "nupunkt")
    features = layout_features([text], [spans], [1, 1, 1])
    assert features.shape == (3, len(LAYOUT_FEATURES))
    assert features[:, LAYOUT_FEATURES.index("round_0")].tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="3 sentences"):
        layout_features([text], [spans], [1, 1])
    assert layout_features([""], [[]], []).shape == (0, len(LAYOUT_FEATURES))


def test_save_and_load_round_trip_and_refuse_other_files(tmp_path):
    correction = _trained(3, hidden=4)
    path = tmp_path / "lead.safetensors"
    correction.save(path, {"note": "test"})
    loaded = LeadCorrection.load(path)
    features = torch.randn(5, len(LAYOUT_FEATURES))
    assert torch.allclose(loaded.correction(features), correction.correction(features))
    from safetensors.torch import save_file

    other = tmp_path / "other.safetensors"
    save_file({"weight": torch.zeros(3)}, str(other), metadata={"kind": "something"})
    with pytest.raises(ValueError, match="not a lead correction"):
        LeadCorrection.load(other)
    wrong = tmp_path / "wrong.safetensors"
    save_file({"weight": torch.zeros(3), "bias": torch.zeros(1), "mean": torch.zeros(3), "std": torch.ones(3)},
              str(wrong), metadata={"kind": "lead_correction", "features": ",".join(LAYOUT_FEATURES)})
    with pytest.raises(ValueError, match="inconsistent"):
        LeadCorrection.load(wrong)
    with pytest.raises(ValueError, match="layout features"):
        correction.correction(torch.zeros(2, 3))


# ------------------------------------------------------------------------------------------- the engine

BARE = ("The council met on Monday. It approved the new budget after a long debate. Critics said the plan cut too "
        "much.\n\nHeavy rain is expected this weekend. Roads near the river may flood. Officials urged residents to "
        "prepare.\n\nThe local team won the final. Fans celebrated late into the night. The coach praised the "
        "defence.")


def _checkpoint_with(tiny_checkpoint, tmp_path, correction: LeadCorrection):
    import json
    import shutil

    root = tmp_path / "ckpt"
    shutil.copytree(tiny_checkpoint, root)
    correction.save(root / "lead_correction.safetensors")
    config = json.loads((root / "tpc_config.json").read_text())
    config["agnostic"].update(salience_head="lead_correction.safetensors")
    (root / "tpc_config.json").write_text(json.dumps(config))
    return root


@pytest.mark.parametrize("correction", [LeadCorrection.zero(), _trained(5), _trained(6, hidden=4)],
                         ids=["zero", "linear", "hidden"])
def test_a_bare_document_is_compressed_by_the_checkpoint_correction(tiny_checkpoint, tmp_path, correction):
    from tpc_core import TPCCompressor

    compressor = TPCCompressor.from_pretrained(_checkpoint_with(tiny_checkpoint, tmp_path, correction), device="cpu")
    assert compressor._salience.head is None and isinstance(compressor._salience.lead, LeadCorrection)
    counter = compressor.token_counter
    result = compressor.compress(BARE, rate=0.4, describe_bare=False)
    spans = split_sentences(BARE, "nupunkt")
    counts = [counter(BARE[s:e]) for s, e in spans]
    scores = correction.scores([BARE], [spans], counts).tolist()
    assert [s.kept for s in result.sentences] == [k in set(top_k_within_budget(scores, counts, result.budget))
                                                  for k in range(len(spans))]
    assert result.task_source == "fallback" and result.compressed_tokens <= result.budget
    if correction.hidden_weight is None and not correction.weight.any():  # the correction off: lead-per-passage
        lead = top_k_within_budget(lead_order([BARE], [spans]).tolist(), counts, result.budget)
        assert [k for k, s in enumerate(result.sentences) if s.kept] == sorted(lead)


@pytest.mark.parametrize("for_summaries", [False, True])
def test_a_written_summary_request_uses_the_correction_only_where_it_was_trained_for_summaries(
        tiny_checkpoint, tmp_path, for_summaries):
    from dataclasses import replace

    from tpc_core import TPCCompressor

    correction = replace(_trained(7), for_summaries=for_summaries)
    compressor = TPCCompressor.from_pretrained(_checkpoint_with(tiny_checkpoint, tmp_path, correction), device="cpu")
    prompt = "Summarise the news below in three sentences.\n\n" + BARE
    result = compressor.compress(prompt, rate=0.5)
    assert result.task_source == "extracted"
    spans = split_sentences(prompt, "nupunkt")
    counts = [compressor.token_counter(prompt[s:e]) for s, e in spans]
    expected = correction.scores([prompt], [spans], counts, enabled=for_summaries).tolist()
    assert [s.score for s in result.sentences] == pytest.approx(expected)


def test_with_both_models_a_bare_document_gets_the_correction_and_a_summary_request_the_head(tiny_checkpoint,
                                                                                             tmp_path):
    import json

    from test_salience import _random_head

    from tpc_core import TPCCompressor
    from tpc_core.engine.scoring.salience import salience_scores

    root = _checkpoint_with(tiny_checkpoint, tmp_path, _trained(8))
    _random_head(32, hidden=4, seed=3).save(root / "salience_head.safetensors")
    config = json.loads((root / "tpc_config.json").read_text())
    config["agnostic"].update(salience_head="salience_head.safetensors", lead_correction="lead_correction.safetensors",
                              salience_lead_weight=1.0)
    (root / "tpc_config.json").write_text(json.dumps(config))
    compressor = TPCCompressor.from_pretrained(root, device="cpu")
    bare = compressor.compress(BARE, rate=0.4, describe_bare=False)
    spans = split_sentences(BARE, "nupunkt")
    counts = [compressor.token_counter(BARE[s:e]) for s, e in spans]
    assert [s.score for s in bare.sentences] == pytest.approx(_trained(8).scores([BARE], [spans], counts).tolist())
    from tpc_core.engine.options import CompressionOptions
    from tpc_core.engine.reading import segment
    from tpc_core.segmentation import get_splitter

    prompt = "Summarise the news below in three sentences.\n\n" + BARE
    asked = compressor.compress(prompt, rate=0.5)
    segmented = segment((prompt,), get_splitter("nupunkt"), compressor.token_counter, CompressionOptions(rate=0.5))
    expected = salience_scores(compressor._salience.head, segmented, compressor.engine.scorer.embed([segmented])[0],
                               lead_weight=1.0)
    assert asked.task_source == "extracted"
    assert [s.score for s in asked.sentences] == pytest.approx(expected.tolist(), abs=1e-5)


def test_a_config_naming_a_lead_correction_outside_the_checkpoint_is_refused(tmp_path):
    from tpc_core.config import AgnosticConfig
    from tpc_core.loading.heads import load_lead_correction

    with pytest.raises(ValueError, match="agnostic.lead_correction"):
        load_lead_correction(AgnosticConfig(lead_correction="../x.safetensors"), tmp_path / "ckpt")
    with pytest.raises(ValueError, match="lead_correction"):
        AgnosticConfig(lead_correction=" ")
    assert load_lead_correction(AgnosticConfig(), tmp_path) is None
