"""The salience head in the engine: features, prior, file format, the path policy, and selection with it.

Wiring tests use a tiny random checkpoint (its head is random too: they check plumbing, never quality); the
shipped tpc-mini head is checked on real text in ``tests/core/test_readme_demo.py`` and at the end of this file.
"""

from __future__ import annotations

import json
import random
import shutil

import pytest
import torch

from tpc_core.config import AgnosticConfig, TPCConfig
from tpc_core.engine.scoring.salience import (
    HAND_FEATURES,
    SalienceHead,
    passage_lead_scores,
    salience_scores,
    zscore,
)
from tpc_core.loading.heads import load_salience_head


def _random_head(width: int, hidden: int = 0, seed: int = 0) -> SalienceHead:
    generator = torch.Generator().manual_seed(seed)
    inputs = width + len(HAND_FEATURES)
    if hidden:
        return SalienceHead(torch.randn(hidden, generator=generator), 0.1, torch.zeros(len(HAND_FEATURES)),
                            torch.ones(len(HAND_FEATURES)), torch.randn(hidden, inputs, generator=generator),
                            torch.randn(hidden, generator=generator))
    return SalienceHead(torch.randn(inputs, generator=generator), -0.2,
                        torch.rand(len(HAND_FEATURES), generator=generator),
                        torch.rand(len(HAND_FEATURES), generator=generator) + 0.5)


# ------------------------------------------------------------------------------------------- the passage prior


def test_prior_takes_every_passage_lead_first_and_markers_last() -> None:
    document = "Summarise the news.\nPassage 1:\nA one. A two.\nPassage 2:\nB one. B two. B three."
    spans = [(0, 19), (20, 30), (31, 37), (38, 44), (45, 55), (56, 62), (63, 69), (70, 78)]
    assert [document[s:e] for s, e in spans][:3] == ["Summarise the news.", "Passage 1:", "A one."]
    scores = passage_lead_scores([document], [spans]).tolist()
    order = sorted(range(len(spans)), key=lambda k: (-scores[k], k))
    # leads of passages 1 and 2, then the second sentences, then B's third; the template and bare markers last
    assert order[:5] == [2, 5, 3, 6, 7]
    assert {scores[0], scores[1], scores[4]} == {min(scores)}


def test_prior_without_markers_uses_blank_lines_and_numbers_passages_across_documents() -> None:
    first, second = "X one. X two.\n\nY one.", "Z one. Z two."
    scores = passage_lead_scores([first, second], [[(0, 6), (7, 13), (15, 21)], [(0, 6), (7, 13)]]).tolist()
    assert sorted(range(5), key=lambda k: -scores[k]) == [0, 2, 3, 1, 4]


def test_zscore_is_constant_safe() -> None:
    assert zscore([3.0, 3.0]).tolist() == [0.0, 0.0]
    assert zscore([1.0, 2.0, 3.0]).tolist() == pytest.approx([-1.0, 0.0, 1.0])


# ------------------------------------------------------------------------------------------- the head file


@pytest.mark.parametrize("hidden", [0, 4])
def test_head_round_trip(tmp_path, hidden: int) -> None:
    head = _random_head(8, hidden)
    head.save(tmp_path / "salience_head.safetensors", {"trained_on": "qmsum"})
    loaded = SalienceHead.load(tmp_path / "salience_head.safetensors")
    generator = torch.Generator().manual_seed(1)
    embeddings, hand = torch.randn(5, 8, generator=generator), torch.randn(5, len(HAND_FEATURES), generator=generator)
    # the bias is stored as float32: equal to float32 precision
    assert torch.allclose(head.logits(embeddings, hand), loaded.logits(embeddings, hand), atol=1e-6)
    assert loaded.embedding_dim == 8


def test_head_refuses_other_files_and_other_features(tmp_path) -> None:
    from safetensors.torch import save_file

    save_file({"weight": torch.zeros(3)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="not a salience head"):
        SalienceHead.load(tmp_path / "other.safetensors")
    head = _random_head(8)
    save_file({"weight": head.weight, "bias": torch.tensor([0.0]), "hand_mean": head.hand_mean,
               "hand_std": head.hand_std}, str(tmp_path / "old.safetensors"), metadata={"features": "a,b"})
    with pytest.raises(ValueError, match="other layout features"):
        SalienceHead.load(tmp_path / "old.safetensors")


def test_head_refuses_embeddings_of_another_width() -> None:
    with pytest.raises(ValueError, match="train a head for this encoder"):
        _random_head(8).logits(torch.randn(3, 16), torch.randn(3, len(HAND_FEATURES)))


# ------------------------------------------------------------------------------------------- config and paths


def test_config_without_a_head_loads_as_before() -> None:
    settings = AgnosticConfig(centrality_weight=1.0, position_weight=0.5, redundancy=0.6)
    assert settings.salience_head is None and settings.salience_lead_weight == 0.0 and settings.uses_coverage
    assert not AgnosticConfig().uses_coverage
    assert AgnosticConfig(salience_head="h.safetensors").uses_coverage


def test_config_rejects_a_bad_lead_weight() -> None:
    with pytest.raises(ValueError, match="salience_lead_weight"):
        AgnosticConfig(salience_lead_weight=-1.0)
    with pytest.raises(ValueError, match="salience_lead_weight"):
        AgnosticConfig(salience_lead_weight="2")  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["../outside.safetensors", "/etc/passwd", "sub/../../x.safetensors"])
def test_a_head_path_leaving_the_checkpoint_is_refused(tmp_path, path: str) -> None:
    (tmp_path / "ckpt").mkdir()
    _random_head(8).save(tmp_path / "outside.safetensors")
    with pytest.raises(ValueError, match="salience_head"):
        load_salience_head(AgnosticConfig(salience_head=path), tmp_path / "ckpt")


def test_a_link_out_of_the_checkpoint_is_refused(tmp_path) -> None:
    (tmp_path / "ckpt").mkdir()
    _random_head(8).save(tmp_path / "outside.safetensors")
    (tmp_path / "ckpt" / "head.safetensors").symlink_to(tmp_path / "outside.safetensors")
    with pytest.raises(ValueError, match="outside the checkpoint"):
        load_salience_head(AgnosticConfig(salience_head="head.safetensors"), tmp_path / "ckpt")


def test_a_missing_head_file_says_so(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="missing"):
        load_salience_head(AgnosticConfig(salience_head="nope.safetensors"), tmp_path)
    assert load_salience_head(AgnosticConfig(), tmp_path) is None


# ------------------------------------------------------------------------------------------- the engine


@pytest.fixture(scope="module")
def headed_checkpoint(tiny_checkpoint, tmp_path_factory):
    """The tiny checkpoint plus a random salience head for its 32-d encoder (wiring only)."""
    root = tmp_path_factory.mktemp("headed") / "ckpt"
    shutil.copytree(tiny_checkpoint, root)
    _random_head(32, hidden=4, seed=3).save(root / "salience_head.safetensors")
    config = json.loads((root / "tpc_config.json").read_text())
    config["agnostic"].update(salience_head="salience_head.safetensors", salience_lead_weight=1.0)
    (root / "tpc_config.json").write_text(json.dumps(config))
    return root


TEXT = ("Passage 1:\nThe council met on Monday. It approved the new budget after a long debate. Critics said the "
        "plan cut too much.\nPassage 2:\nHeavy rain is expected this weekend. Roads near the river may flood. "
        "Officials urged residents to prepare.\nPassage 3:\nThe local team won the final. Fans celebrated late "
        "into the night. The coach praised the defence.")


def test_a_checkpoint_with_a_head_scores_coverage_tasks_with_it(headed_checkpoint) -> None:
    from tpc_core import TPCCompressor
    from tpc_core.engine.options import CompressionOptions
    from tpc_core.engine.reading import segment
    from tpc_core.engine.scoring.scorers import score_prompts
    from tpc_core.engine.values import Selection, Task, TaskSource
    from tpc_core.segmentation import get_splitter

    compressor = TPCCompressor.from_pretrained(headed_checkpoint, device="cpu")
    head = compressor._salience.head
    assert isinstance(head, SalienceHead)
    prompt = segment((TEXT,), get_splitter("nupunkt"), compressor.token_counter, CompressionOptions(rate=0.3))
    embeddings = compressor.engine.scorer.embed([prompt])
    task = Task(None, TaskSource.COVERAGE, Selection.COVERAGE)
    scored = score_prompts(compressor.engine.scorer, [prompt], embeddings, [task], compressor.config.agnostic,
                           salience=head)
    expected = salience_scores(head, prompt, embeddings[0], lead_weight=1.0)
    assert scored[0].scores == pytest.approx(expected.tolist())
    # a question is still scored by relevance, whatever the head says
    question = score_prompts(compressor.engine.scorer, [prompt], embeddings, [Task.from_question("Who won?")],
                             compressor.config.agnostic, salience=head)[0]
    relevance = compressor.engine.scorer.relevance([prompt], embeddings, ["Who won?"])[0]
    assert question.scores == pytest.approx(relevance.tolist())


def test_a_checkpoint_without_a_head_keeps_the_hand_set_rule(tiny_checkpoint, tmp_path) -> None:
    from tests.checkpoint_helpers import edited_checkpoint
    from tpc_core import TPCCompressor
    from tpc_core.engine.options import CompressionOptions
    from tpc_core.engine.reading import segment
    from tpc_core.engine.scoring.coverage import coverage_scores, section_ranks
    from tpc_core.engine.scoring.scorers import score_prompts
    from tpc_core.engine.values import Selection, Task, TaskSource
    from tpc_core.segmentation import get_splitter

    root = edited_checkpoint(tiny_checkpoint, tmp_path, "agnostic", centrality_weight=1.0, position_weight=0.5)
    compressor = TPCCompressor.from_pretrained(root, device="cpu")
    assert compressor._salience is None
    prompt = segment((TEXT,), get_splitter("nupunkt"), compressor.token_counter, CompressionOptions(rate=0.3))
    embeddings = compressor.engine.scorer.embed([prompt])
    task = Task(None, TaskSource.COVERAGE, Selection.COVERAGE)
    scored = score_prompts(compressor.engine.scorer, [prompt], embeddings, [task], compressor.config.agnostic)
    ranks = section_ranks(TEXT, list(prompt.spans[0]))
    expected = coverage_scores(torch.zeros(len(ranks)), embeddings[0], ranks, relevance_weight=0.0,
                               centrality_weight=1.0, position_weight=0.5)
    assert scored[0].scores == pytest.approx(expected.tolist())


def test_a_config_naming_a_head_outside_the_checkpoint_fails_at_load(tiny_checkpoint, tmp_path) -> None:
    from tests.checkpoint_helpers import edited_checkpoint
    from tpc_core import TPCCompressor

    root = edited_checkpoint(tiny_checkpoint, tmp_path, "agnostic", salience_head="../salience_head.safetensors")
    _random_head(32).save(tmp_path / "salience_head.safetensors")
    with pytest.raises(ValueError, match="agnostic.salience_head"):
        TPCCompressor.from_pretrained(root, device="cpu")


def test_budget_verbatim_and_order_hold_with_the_head(headed_checkpoint) -> None:
    from tpc_core import TPCCompressor

    compressor = TPCCompressor.from_pretrained(headed_checkpoint, device="cpu")
    rng = random.Random(5)
    sentences = [s + "." for s in TEXT.replace("Passage", "\nPassage").split(". ")]
    for _ in range(6):
        rng.shuffle(sentences)
        documents = [" ".join(sentences[:6]), "\n\n".join(sentences[6:])]
        rate = rng.choice([0.15, 0.3, 0.5])
        result = compressor.compress(documents, rate=rate)
        assert result.task_source in ("generated", "fallback", "matched", "coverage")
        assert result.scored and result.compressed_tokens <= result.budget
        kept = [s for s in result.sentences if s.kept]
        assert kept, "a budget this size keeps something"
        for record in kept:
            assert documents[record.doc_index][record.start:record.end] == record.text
        assert [(s.doc_index, s.index) for s in kept] == sorted((s.doc_index, s.index) for s in kept)


@pytest.mark.slow
def test_the_shipped_tpc_mini_scores_bare_prompts_by_a_lead_correction(tpc_mini) -> None:
    from tpc_core.engine.options import CompressionOptions
    from tpc_core.engine.reading import segment
    from tpc_core.engine.scoring.lead import LeadCorrection
    from tpc_core.segmentation import get_splitter

    assert isinstance(tpc_mini._salience.head, SalienceHead)  # written summary requests
    model = tpc_mini._salience.lead  # prompts that write no request
    assert isinstance(model, LeadCorrection) and not model.for_summaries
    config = TPCConfig.load(tpc_mini.checkpoint_dir)
    assert config.agnostic.lead_correction == "lead_correction.safetensors"
    assert {"salience", "lead_correction"} <= set(config.extra["training"])
    prompt = segment((TEXT,), get_splitter("nupunkt"), tpc_mini.token_counter, CompressionOptions(rate=0.3))
    counts = [c for doc in prompt.counts for c in doc]
    scores = model.scores(prompt.documents, prompt.spans, counts)
    assert torch.isfinite(scores).all() and scores.shape == (len(counts),)


def test_save_pretrained_carries_the_head(headed_checkpoint, tmp_path) -> None:
    from tpc_core import TPCCompressor

    compressor = TPCCompressor.from_pretrained(headed_checkpoint, device="cpu")
    compressor.save_pretrained(tmp_path / "copy")
    copy = TPCCompressor.from_pretrained(tmp_path / "copy", device="cpu")
    assert copy.config.agnostic.salience_head == "salience_head.safetensors"
    assert copy.config.agnostic.salience_lead_weight == 1.0
    assert torch.equal(copy._salience.head.weight, compressor._salience.head.weight)
