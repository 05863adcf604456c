"""Salience head: feature shapes, deterministic training, save/load, and selection that keeps budget and order."""

from __future__ import annotations

import random

import pytest
import torch

from training.salience.evaluate import lead_per_passage_scores, select_by_score, summary_table
from training.salience.features import (
    HAND_FEATURES,
    balanced_order,
    capped_documents,
    encode_prompt,
    hand_features,
    paragraph_ranks,
)
from training.salience.train import HEAD_KINDS, TrainingSet, load_head, save_head, train_head


def _unit(n: int, d: int, seed: int = 0) -> torch.Tensor:
    return torch.nn.functional.normalize(torch.randn(n, d, generator=torch.Generator().manual_seed(seed)), dim=1)


def test_hand_features_shape_and_positions() -> None:
    hand = hand_features(_unit(5, 8), [3, 4, 5, 6, 7], [0, 0, 0, 1, 1], [0, 1, -1, 0, 1], [0, 1, 0, 0, 1])
    assert hand.shape == (5, len(HAND_FEATURES))
    column = {name: hand[:, k].tolist() for k, name in enumerate(HAND_FEATURES)}
    assert column["first_of_document"] == [1.0, 0.0, 0.0, 1.0, 0.0]
    assert column["is_header"] == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert column["section_lead"][2] == 0.0 and column["section_lead"][0] == 1.0
    assert column["first_of_paragraph"] == [1.0, 0.0, 1.0, 1.0, 0.0]
    assert column["document_index"] == pytest.approx([0.0, 0.0, 0.0, 0.1, 0.1])
    assert column["from_end_of_document"] == pytest.approx([0.2, 0.1, 0.0, 0.1, 0.0])
    assert all(-1.0001 <= value <= 1.0001 for value in column["centrality"])


def test_hand_features_reject_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="one embedding"):
        hand_features(_unit(3, 4), [1, 2], [0, 0, 0], [0, 1, 2])


def test_paragraph_ranks_restart_after_blank_lines() -> None:
    text = "Title\nOne. Two.\n\nOther\nThree."
    spans = [(0, 5), (6, 10), (11, 15), (17, 22), (23, 29)]
    assert paragraph_ranks(text, spans) == [0, 1, 2, 0, 1]


def test_capped_documents_cut_at_the_last_kept_sentence() -> None:
    documents = ("A b. C d.", "E f. G h.")
    spans = [[0, 0, 4], [0, 5, 9], [1, 0, 4], [1, 5, 9]]
    assert capped_documents(documents, spans, 3) == (("A b. C d.", "E f."), 3)
    assert capped_documents(documents, spans, 10) == (documents, 4)


def test_balanced_order_is_round_robin_and_capped() -> None:
    records = [{"id": f"a{k}", "subset": "a"} for k in range(4)] + [{"id": "b0", "subset": "b"}]
    assert [r["id"] for r in balanced_order(records, {"a": 2})] == ["a0", "b0", "a2"]


def test_encode_prompt_matches_the_engine_split(tpc_mini) -> None:
    from training.salience.data import sentence_spans

    documents = ("Passage 1:\nThe council met on Monday. It approved the budget.", "Rain is expected. Roads may flood.")
    encoded = encode_prompt(tpc_mini, documents)
    n = sum(len(spans) for spans in encoded.segmented.spans)
    assert [(s.document, s.start, s.end) for s in sentence_spans(documents)] == [
        (d, s, e) for d, spans in enumerate(encoded.segmented.spans) for s, e in spans]
    assert encoded.embeddings.shape[0] == n and encoded.embeddings.shape[1] > 0
    assert encoded.hand.shape == (n, len(HAND_FEATURES))
    # the engine's passage prior: each passage's lead first (document 0 has a marker, document 1 none)
    assert encoded.prior.shape == (n,) and int(torch.argmax(encoded.prior)) == 1


def _toy_set(documents: int = 30, n: int = 6, d: int = 8) -> TrainingSet:
    """The first sentence of every document is the oracle; its embedding carries a signal along axis 0."""
    embeddings, hands, oracle, owner = [], [], [], []
    for k in range(documents):
        vectors = _unit(n, d, seed=k)
        vectors[0, 0] += 2.0
        embeddings.append(vectors)
        hands.append(hand_features(vectors, [5] * n, [0] * n, list(range(n))))
        chosen = torch.zeros(n)
        chosen[0] = 1.0
        oracle.append(chosen)
        owner.append(torch.full((n,), k, dtype=torch.long))
    labels = torch.cat(oracle)
    return TrainingSet(torch.cat(embeddings), torch.cat(hands), labels, labels * 2.0, torch.cat(owner), ("toy",))


@pytest.mark.parametrize("kind", HEAD_KINDS)
def test_training_is_deterministic_and_learns_the_lead(kind: str) -> None:
    data = _toy_set()
    first, second = (train_head(data, kind, seed=3, epochs=40, lr=0.03) for _ in range(2))
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items()):
        assert torch.equal(a, b), name
    with torch.inference_mode():
        scores = first(data.embeddings[:6], data.hand[:6])
    assert int(torch.argmax(scores)) == 0


def test_save_load_round_trip(tmp_path) -> None:
    data = _toy_set()
    head = train_head(data, "emb-mlp", seed=1, epochs=2, hidden=8)
    loaded = load_head(save_head(head, tmp_path / "head"))
    assert loaded.config == head.config
    with torch.inference_mode():
        assert torch.equal(head(data.embeddings, data.hand), loaded(data.embeddings, data.hand))


def test_load_head_says_what_is_missing(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="save_head"):
        load_head(tmp_path)


@pytest.mark.parametrize("redundancy", [0.0, 0.5])
def test_selection_never_exceeds_the_budget_and_keeps_order(redundancy: float) -> None:
    rng = random.Random(7)
    for trial in range(200):
        n = rng.randint(1, 30)
        counts = [rng.randint(1, 40) for _ in range(n)]
        scores = [rng.random() for _ in range(n)]
        budget = rng.randint(1, sum(counts))
        kept = select_by_score(scores, counts, budget, embeddings=_unit(n, 4, seed=trial), redundancy=redundancy)
        assert sum(counts[k] for k in kept) <= budget
        assert kept == sorted(set(kept))


def test_selection_takes_the_best_scores_that_fit() -> None:
    assert select_by_score([0.1, 0.9, 0.5, 0.8], [5, 5, 5, 20], 10) == [1, 2]


def test_lead_per_passage_takes_each_document_lead_first() -> None:
    scores = lead_per_passage_scores([0, 0, 0, 1, 2, 2])
    assert sorted(range(6), key=lambda k: -scores[k]) == [0, 3, 4, 1, 5, 2]


def test_summary_table_macro_averages_subsets() -> None:
    results = [{"subset": "a", "method": "m", "rate": 0.2, "r1": 0.2, "r2": 0.1},
               {"subset": "a", "method": "m", "rate": 0.2, "r1": 0.4, "r2": 0.1},
               {"subset": "b", "method": "m", "rate": 0.2, "r1": 0.5, "r2": 0.3}]
    table = summary_table(results)
    assert table["a"]["m"]["r1@0.2"] == pytest.approx(0.3)
    assert table["macro"]["m"]["r1@0.2"] == pytest.approx(0.4)


def test_lead_blend_follows_lead_when_the_head_is_flat() -> None:
    from training.salience.evaluate import lead_blend, zscore

    assert zscore([2.0, 2.0]) == [0.0, 0.0]
    blended = lead_blend([0.0, 0.0, 0.0, 0.0], [0, 0, 1, 1], 2.0)
    assert sorted(range(4), key=lambda k: -blended[k]) == [0, 2, 1, 3]


def test_nested_choice_never_looks_at_the_held_out_dataset() -> None:
    from training.salience.evaluate import nested_choice

    def row(method: str, dataset: str, r1: float) -> dict:
        return {"id": dataset, "subset": dataset, "held_out": dataset, "method": method, "rate": 0.2, "r1": r1,
                "r2": 0.0}

    # "h +lead1.0" wins on b and c, loses on a: a's choice must still be the blend (chosen on b and c).
    results = [row("h", "a", 0.9), row("h +lead1.0", "a", 0.1), row("h", "b", 0.1), row("h +lead1.0", "b", 0.5),
               row("h", "c", 0.1), row("h +lead1.0", "c", 0.5), row("lead", "a", 0.3)]
    chosen = {r["held_out"]: (r["variant"], r["r1"]) for r in nested_choice(results)}
    assert chosen["a"] == ("h +lead1.0", 0.1)


@pytest.mark.parametrize("kind", ["emb-logreg", "emb-mlp"])
def test_export_gives_the_engine_the_same_scores(kind: str, tmp_path) -> None:
    from tpc_core.engine.scoring.salience import SalienceHead as EngineHead
    from training.salience.export import to_engine_head

    data = _toy_set()
    trained = train_head(data, kind, seed=2, epochs=3, hidden=8)
    engine = to_engine_head(trained)
    engine.save(tmp_path / "salience_head.safetensors")
    loaded = EngineHead.load(tmp_path / "salience_head.safetensors")
    with torch.inference_mode():
        expected = trained(data.embeddings, data.hand)
    assert torch.allclose(loaded.logits(data.embeddings, data.hand), expected, atol=1e-5)


def test_export_refuses_a_head_without_embeddings() -> None:
    from training.salience.export import to_engine_head

    with pytest.raises(ValueError, match="emb-"):
        to_engine_head(train_head(_toy_set(), "hand-logreg", epochs=1))
