"""Experimental scorers (training/scorer, issue 23): fusion math, MaxSim, lexical scores, CV, engine wiring.

Tiny inline data only; the wiring tests use the tiny random checkpoint from ``tests/conftest.py``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from training.scorer.compare import cross_validate, folds_by_source
from training.scorer.fusion import fuse, ranks, rrf, zscore, zscore_sum
from training.scorer.late import maxsim
from training.scorer.lexical import bm25_scores, content_terms, rare_match_scores


def test_zscore_and_constant_vector() -> None:
    z = zscore(torch.tensor([1.0, 2.0, 3.0]))
    assert torch.allclose(z, torch.tensor([-1.2247449, 0.0, 1.2247449], dtype=torch.float64), atol=1e-6)
    assert torch.equal(zscore(torch.tensor([5.0, 5.0])), torch.zeros(2, dtype=torch.float64))
    assert zscore(torch.zeros(0)).numel() == 0


def test_zscore_sum_weights() -> None:
    a, b = torch.tensor([0.0, 1.0, 2.0]), torch.tensor([2.0, 0.0, 1.0])
    fused = zscore_sum([a, b], [1.0, 0.5])
    assert torch.allclose(fused, zscore(a) + 0.5 * zscore(b))
    # A weight of zero is the first component alone.
    assert torch.equal(fuse([a, b], [1.0, 0.0]).argsort(), zscore(a).argsort())


def test_ranks_ties_break_by_position() -> None:
    assert ranks(torch.tensor([0.5, 0.9, 0.5, 0.1])).tolist() == [2.0, 1.0, 3.0, 4.0]


def test_rrf_by_hand() -> None:
    a, b = torch.tensor([3.0, 2.0, 1.0]), torch.tensor([1.0, 2.0, 3.0])
    got = rrf([a, b], [1.0, 2.0], k=60)
    want = [1 / 61 + 2 / 63, 1 / 62 + 2 / 62, 1 / 63 + 2 / 61]
    assert got.tolist() == pytest.approx(want)
    with pytest.raises(ValueError):
        fuse([a], [1.0], "max")
    with pytest.raises(ValueError):
        fuse([a, b], [1.0])


def test_maxsim_hand_made() -> None:
    question = torch.tensor([[1.0, 0.0], [0.0, 2.0]])  # two tokens, normalised inside
    sentences = [torch.tensor([[3.0, 0.0]]),               # matches token 1 only: (1 + 0) / 2
                 torch.tensor([[1.0, 0.0], [0.0, 1.0]]),   # matches both: (1 + 1) / 2
                 torch.tensor([[1.0, 1.0]]),               # 45 degrees to both: cos = 1/sqrt2
                 torch.tensor([[-1.0, 0.0], [0.0, -1.0]])]  # opposite: max is 0 for both tokens
    got = maxsim(question, sentences)
    assert got.tolist() == pytest.approx([0.5, 1.0, 1 / math.sqrt(2), 0.0], abs=1e-6)
    assert maxsim(question, []).numel() == 0
    assert maxsim(torch.zeros((0, 2)), sentences).tolist() == [0.0] * 4


def test_maxsim_projection_is_applied_to_both_sides() -> None:
    question, sentences = torch.tensor([[1.0, 0.0]]), [torch.tensor([[0.0, 1.0]])]
    swap = torch.nn.Linear(2, 2, bias=False)
    with torch.no_grad():
        swap.weight.copy_(torch.tensor([[1.0, 1.0], [0.0, 0.0]]))  # both map onto the first axis
    assert maxsim(question, sentences).item() == pytest.approx(0.0)
    assert maxsim(question, sentences, swap).item() == pytest.approx(1.0)


def test_bm25_matches_benchmark_method() -> None:
    from benchmarks.protocol.methods.baselines import BM25Sentences

    sentences = ["The Eiffel Tower is in Paris.", "Berlin is in Germany.", "Paris hosts the Louvre, in Paris."]
    question = "Where is the Eiffel Tower?"
    theirs = BM25Sentences.scores(BM25Sentences.__new__(BM25Sentences), sentences, question, "")
    assert bm25_scores(sentences, question) == pytest.approx(list(theirs))
    assert bm25_scores([], question) == []


def test_rare_match_weights_rare_terms() -> None:
    sentences = ["Alice paid 42 dollars.", "Alice went home.", "Alice slept.", "Bob ate."]
    question = "How many dollars did Alice pay in 42?"
    assert content_terms(question) == ["dollars", "alice", "pay", "42"]
    scores = rare_match_scores(sentences, question)
    assert scores[0] == pytest.approx(1.0)  # has every matched term ("pay" is in no sentence: weightless)
    assert scores[0] > scores[1] == scores[2] > scores[3] == 0.0
    assert rare_match_scores(["x"], "what is it") == [0.0]


def test_folds_and_cross_validation() -> None:
    samples = [SimpleNamespace(id=f"{s}-{i}", source=s) for s in "ab" for i in range(4)]
    folds = folds_by_source(samples, 2)
    assert sorted(folds.values()).count(0) == 4
    for source in "ab":  # each source split evenly between the folds
        assert sorted(folds[f"{source}-{i}"] for i in range(4)) == [0, 0, 1, 1]
    good_on_0 = {i: 1.0 if folds[i] == 0 else 0.0 for i in folds}
    good_on_1 = {i: 1.0 if folds[i] == 1 else 0.0 for i in folds}
    per_sample, chosen = cross_validate({"x": good_on_0, "y": good_on_1}, ["x", "y"], folds, 2)
    # Fold 0 is scored with the config best on fold 1 ("y"), and vice versa: the CV estimate is honest (0).
    assert chosen == ["y", "x"] and set(per_sample.values()) == {0.0}


def test_embed_with_tokens_matches_engine_and_scorers_run(tiny) -> None:
    from tpc_core.engine.scoring.scorers import PooledCosine
    from training.scorer.scorers import (
        COMPONENTS,
        CachedComponents,
        ComponentScorer,
        FusedScorer,
        LateInteraction,
        embed_with_tokens,
    )

    text = ("Alice was born in Paris in 1901. She moved to Berlin. " * 6) + "Bob ate 42 apples on Tuesday."
    from tpc_core.engine.options import CompressionOptions
    from tpc_core.engine.reading import segment

    segmented = segment((text,), tiny.splitter(), tiny.token_counter, CompressionOptions.build(rate=0.3))
    pooled, states = embed_with_tokens(tiny.encoder, [segmented])
    assert torch.allclose(pooled[0], PooledCosine(tiny.encoder).embed([segmented])[0], atol=1e-6)
    assert len(states[0]) == len(segmented.sentences)
    original = tiny.scorer
    try:
        recorder = ComponentScorer(tiny.encoder)
        tiny.scorer = recorder
        baseline = original.relevance([segmented], pooled, ["How many apples did Bob eat?"])[0]
        recorder.embed([segmented])
        got = recorder.relevance([segmented], pooled, ["How many apples did Bob eat?"])[0]
        assert torch.allclose(got, baseline, atol=1e-6)
        record = next(iter(recorder.records.values()))
        assert set(record["components"]) == set(COMPONENTS)
        for scorer in (LateInteraction(tiny.encoder), FusedScorer(tiny.encoder, {"cos": 1.0, "bm25": 0.3}),
                       FusedScorer(tiny.encoder, {"cos": 1.0, "maxsim_content": 1.0, "bm25": 0.3}, "rrf"),
                       CachedComponents(recorder.records, {"cos": 1.0, "rare": 0.5})):
            tiny.scorer = scorer
            result = tiny.compress(text, question="How many apples did Bob eat?", rate=0.3)
            assert result.compressed_tokens <= result.budget
    finally:
        tiny.scorer = original
    with pytest.raises(ValueError):
        FusedScorer(tiny.encoder, {"cosine": 1.0})


def test_research_scorers_are_whole_scorers_and_run_through_a_cache(tiny) -> None:
    """Each has the per-document step and identity of PooledCosine (the engine has no branch for them)."""
    from tpc_core.engine.options import CompressionOptions
    from tpc_core.engine.reading import segment
    from tpc_core.engine.scoring.scorers import PooledCosine
    from training.scorer.scorers import CachedComponents, ComponentScorer, FusedScorer, LateInteraction

    text = ("Alice was born in Paris in 1901. She moved to Berlin. " * 6) + "Bob ate 42 apples on Tuesday."
    segmented = segment((text,), tiny.splitter(), tiny.token_counter, CompressionOptions.build(rate=0.3))
    expected = PooledCosine(tiny.encoder).embed_documents(segmented.per_document)
    for scorer in (LateInteraction(tiny.encoder), FusedScorer(tiny.encoder, {"cos": 1.0}),
                   ComponentScorer(tiny.encoder)):
        assert scorer.identity == PooledCosine.identity
        assert all(torch.allclose(got, want) for got, want in
                   zip(scorer.embed_documents(segmented.per_document), expected, strict=True))
    with pytest.raises(TypeError, match="without cache="):
        CachedComponents({}, {"cos": 1.0}).embed_documents(segmented.per_document)
    original = tiny.scorer
    try:
        tiny.scorer = FusedScorer(tiny.encoder, {"cos": 1.0, "bm25": 0.3})
        uncached = tiny.compress(text, question="How many apples did Bob eat?", rate=0.3)
        first = tiny.compress(text, question="How many apples did Bob eat?", rate=0.3, cache="memory")
        again = tiny.compress(text, question="How many apples did Bob eat?", rate=0.3, cache="memory")
        assert (first.cache_misses, again.cache_hits) == (1, 1)
        assert first.compressed_prompt == again.compressed_prompt == uncached.compressed_prompt
    finally:
        tiny.scorer = original


def test_paired_bootstrap_interval() -> None:
    from training.scorer.compare import paired_bootstrap

    same = paired_bootstrap({"a": 1.0, "b": 0.0}, {"a": 1.0, "b": 0.0})
    assert same == {"mean": 0.0, "low": 0.0, "high": 0.0, "samples": 2}
    up = paired_bootstrap({str(i): 1.0 for i in range(10)}, {str(i): 0.5 for i in range(10)})
    assert up["low"] == up["high"] == up["mean"] == 0.5


def test_projection_pieces() -> None:
    from training.scorer.projection import gold_mask, identity_projection, multi_positive_nce

    assert gold_mask(["Röntgen won it in 1901.", "Other text here.", ""],
                     ["Röntgen  won it in 1901."]) == [True, False, False]
    layer = identity_projection(3)
    x = torch.randn(4, 3)
    assert torch.allclose(layer(x), x)
    scores = torch.tensor([0.9, 0.1, 0.1])
    loss = multi_positive_nce(scores, torch.tensor([True, False, False]), temperature=1.0)
    assert loss.item() == pytest.approx(-math.log(math.exp(0.9) / (math.exp(0.9) + 2 * math.exp(0.1))))
