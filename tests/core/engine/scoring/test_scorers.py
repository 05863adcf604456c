"""The checkpoint's scoring function: ``scorer`` in ``tpc_config.json``, BM25, and the cosine + BM25 fusion."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from tpc_core.config import ScorerConfig, TPCConfig
from tpc_core.engine.scoring.lexical import bm25_scores, words
from tpc_core.engine.scoring.scorers import SCORERS, CosineBM25, PooledCosine, build_scorer, fuse_lexical

VOCABULARY = [f"w{i}" for i in range(12)] + ["Paris", "1889", "x-7"]
sentence_text = st.lists(st.sampled_from(VOCABULARY), max_size=10).map(" ".join)


# ------------------------------------------------------------------ config

def test_checkpoints_without_a_scorer_section_use_the_papers_cosine():
    config = TPCConfig.from_dict({"cse": {"base_model": "m"}})
    assert config.scorer == ScorerConfig(name="pooled_cosine")


def test_scorer_section_round_trips_through_json():
    config = TPCConfig.from_dict({"cse": {"base_model": "m"}, "scorer": {"name": "cosine_bm25", "lexical_weight": 0.5}})
    again = TPCConfig.from_dict(config.to_dict())
    assert again.scorer == ScorerConfig(name="cosine_bm25", lexical_weight=0.5)


@pytest.mark.parametrize(("section", "message"), [
    ({"name": 3}, "scorer.name must be a str"),
    ({"name": " "}, "scorer.name must be a non-empty scorer name"),
    ({"lexical_weight": -0.1}, "scorer.lexical_weight must be a finite number >= 0"),
    ({"lexical_weight": float("nan")}, "scorer.lexical_weight must be a finite number >= 0"),
    ({"lexical_weight": "0.3"}, "scorer.lexical_weight must be a number"),
    ({"lexical_weight": True}, "scorer.lexical_weight must be a number"),
    ({"weight": 0.3}, "Unknown key"),
])
def test_bad_scorer_sections_are_refused_with_the_key_named(section, message):
    with pytest.raises(ValueError, match=message):
        TPCConfig.from_dict({"cse": {"base_model": "m"}, "scorer": section})


def test_the_config_checks_types_only_and_build_scorer_checks_the_name_against_the_table():
    config = TPCConfig.from_dict({"cse": {"base_model": "m"}, "scorer": {"name": "maxsim"}})  # a type-correct name
    assert config.scorer.name == "maxsim"
    with pytest.raises(ValueError, match=r"scorer.name must be one of \['pooled_cosine', 'cosine_bm25'\], "
                                         r"got 'maxsim'"):
        build_scorer(config.scorer, encoder=None)


def test_the_table_is_the_one_place_a_scorer_is_named():
    assert SCORERS == {"pooled_cosine": PooledCosine, "cosine_bm25": CosineBM25}
    bm25 = build_scorer(ScorerConfig("cosine_bm25", lexical_weight=0.7), encoder=None)
    assert type(bm25) is CosineBM25 and bm25.lexical_weight == 0.7
    assert type(build_scorer(ScorerConfig("pooled_cosine"), encoder=None)) is PooledCosine


# ------------------------------------------------------------------ BM25

@settings(max_examples=150, deadline=None)
@given(sentences=st.lists(sentence_text, min_size=1, max_size=12), question=sentence_text)
def test_bm25_equals_rank_bm25_on_the_same_tokens(sentences, question):
    rank_bm25 = pytest.importorskip("rank_bm25")
    expected = rank_bm25.BM25Okapi([words(s) or ["\0"] for s in sentences]).get_scores(words(question))
    assert bm25_scores(sentences, question) == pytest.approx(list(expected), abs=1e-9)


def test_bm25_of_nothing_shared_is_zero_and_no_sentences_is_empty():
    assert bm25_scores(["a b c", "d e"], "zzz") == [0.0, 0.0]
    assert bm25_scores(["a b c", "d e"], "") == [0.0, 0.0]
    assert bm25_scores([], "a") == []


def test_bm25_rewards_the_sentence_with_the_rare_exact_term():
    sentences = ["The tower is tall.", "The tower was finished in 1889.", "The tower is in Paris."]
    scores = bm25_scores(sentences, "When was the tower finished? 1889?")
    assert max(range(3), key=scores.__getitem__) == 1


# ------------------------------------------------------------------ fusion

finite = st.floats(-1, 1, allow_nan=False, width=32)


@settings(max_examples=200, deadline=None)
@given(data=st.lists(st.tuples(finite, st.floats(0, 30, allow_nan=False, width=32)), min_size=2, max_size=30),
       weight=st.floats(0, 2, allow_nan=False))
def test_fusion_orders_sentences_as_the_z_score_sum(data, weight):
    cosine = torch.tensor([c for c, _ in data], dtype=torch.float64)
    lexical = torch.tensor([b for _, b in data], dtype=torch.float64)
    fused = fuse_lexical(cosine, lexical, weight)

    def z(x):
        return (x - x.mean()) / x.std(unbiased=False) if x.std(unbiased=False) > 1e-12 else torch.zeros_like(x)

    reference = z(cosine) + weight * z(lexical) if cosine.std(unbiased=False) > 1e-12 else cosine
    for i in range(len(data)):
        for j in range(len(data)):
            if reference[i] > reference[j] + 1e-9:
                assert fused[i] > fused[j] - 1e-9


def test_fusion_leaves_cosines_alone_when_bm25_says_nothing():
    cosine = torch.tensor([0.1, 0.5, 0.3])
    assert torch.equal(fuse_lexical(cosine, torch.zeros(3), 0.3), cosine)
    assert torch.equal(fuse_lexical(cosine[:1], torch.ones(1), 0.3), cosine[:1])


# ------------------------------------------------------------------ the real model

def test_the_checkpoint_config_chooses_the_scorer_and_from_pretrained_can_override_it(tpc_mini):
    from tpc_core import TPCCompressor

    assert tpc_mini.config.scorer.name in SCORERS
    expected = CosineBM25 if tpc_mini.config.scorer.name == "cosine_bm25" else PooledCosine
    assert type(tpc_mini.engine.scorer) is expected
    cosine = TPCCompressor.from_pretrained("tpc-mini", scorer="pooled_cosine")
    assert type(cosine.engine.scorer) is PooledCosine and cosine.config.scorer.name == "pooled_cosine"
    custom = TPCCompressor.from_pretrained("tpc-mini", scorer=ScorerConfig("cosine_bm25", lexical_weight=1.0))
    assert type(custom.engine.scorer) is CosineBM25 and custom.engine.scorer.lexical_weight == 1.0
    # the name is checked against tpc_core.engine.scoring.scorers.SCORERS at load time, before any weights load
    with pytest.raises(ValueError, match=r"scorer.name must be one of \['pooled_cosine', 'cosine_bm25'\], "
                                         r"got 'colbert'"):
        TPCCompressor.from_pretrained("tpc-mini", scorer="colbert")
    with pytest.raises(TypeError, match="scorer must be a scorer name or a ScorerConfig"):
        TPCCompressor.from_pretrained("tpc-mini", scorer=0.3)


def test_cosine_bm25_scores_are_the_cse_cosines_fused_with_bm25(tpc_mini):
    from tpc_core import TPCCompressor

    cosine = TPCCompressor.from_pretrained("tpc-mini", scorer="pooled_cosine")
    fused = TPCCompressor.from_pretrained("tpc-mini", scorer=ScorerConfig("cosine_bm25", lexical_weight=0.3))
    text = ("The lighthouse keeper logged the storm at dawn. Ships waited outside the harbour. "
            "Inspector Okonkwo-Vale signed the report on 14 March. The harbour reopened a week later.")
    question = "Who signed the report, Okonkwo-Vale?"
    plain = cosine.compress(text, question=question, rate=0.5)
    mixed = fused.compress(text, question=question, rate=0.5)
    cos = torch.tensor([s.score for s in plain.sentences], dtype=torch.float64)
    lexical = torch.tensor(bm25_scores([s.text for s in plain.sentences], question), dtype=torch.float64)
    expected = fuse_lexical(cos, lexical, 0.3)
    assert [s.score for s in mixed.sentences] == pytest.approx(expected.tolist(), abs=1e-5)
    assert lexical.argmax().item() == 2  # the name and "signed"/"report" are written in the third sentence only
    assert mixed.sentences[2].kept


def test_the_scorer_in_use_is_saved_with_the_checkpoint(tmp_path, tpc_mini):
    from tpc_core import TPCCompressor

    cosine = TPCCompressor.from_pretrained("tpc-mini", scorer="pooled_cosine")
    cosine.save_pretrained(tmp_path / "ckpt")
    assert TPCConfig.load(tmp_path / "ckpt").scorer.name == "pooled_cosine"
    assert dataclasses.asdict(TPCConfig.load(tmp_path / "ckpt").scorer) == dataclasses.asdict(cosine.config.scorer)


def test_the_research_hooks_moved_to_training_still_run_with_a_deprecation_warning(tiny):
    """``encode_sentences`` and ``document_token_ids`` served only training/scorer; the old names warn and give the
    same result as what replaces them."""
    from tpc_core.engine.options import CompressionOptions
    from tpc_core.engine.reading import segment
    from tpc_core.engine.scoring import scorers
    from tpc_core.engine.scoring.scorers import sentence_ids

    text = "Alice was born in Paris. She moved to Berlin.\n\nBob ate 42 apples on Tuesday."
    segmented = segment((text, "A second document."), tiny.engine.splitter(), tiny.token_counter,
                        CompressionOptions.build(rate=0.3))
    assert "encode_sentences" not in scorers.__all__ and "document_token_ids" not in scorers.__all__
    with pytest.warns(DeprecationWarning, match="PooledCosine\\(encoder\\).embed\\(prompts\\)"):
        from tpc_core.engine.scoring.scorers import encode_sentences
    assert torch.equal(encode_sentences(tiny.encoder, [segmented])[0],
                       PooledCosine(tiny.encoder).embed([segmented])[0])
    with pytest.warns(DeprecationWarning, match="sentence_ids"):
        document_token_ids = scorers.document_token_ids
    assert document_token_ids(tiny.encoder, [segmented]) == sentence_ids(tiny.encoder, segmented.per_document)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        scorers.nothing  # noqa: B018
