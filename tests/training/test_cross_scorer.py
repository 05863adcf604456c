"""Question-conditioned scorer (training/scorer/cross.py, issue 23): window packing, labels, one training step,
checkpoint save -> resume. Tiny inline data and a tiny random BERT built here; nothing from ``../shared``."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
import torch

from training.scorer.cross import (
    CrossConfig,
    CrossModel,
    build_windows,
    label_sentences,
    latest_checkpoint,
    load_checkpoint,
    make_optimizer,
    rank_context,
    sample_windows,
    train,
    window_loss,
)


class WordTokenizer:
    """Whitespace words -> ids in [4, 200); 0 pad, 1 cls, 2 sep."""

    pad_token_id, cls_token_id, sep_token_id = 0, 1, 2

    def __call__(self, texts, add_special_tokens=False, truncation=False):
        return {"input_ids": [[4 + zlib.crc32(w.lower().encode()) % 196 for w in t.split()] for t in texts]}


def tiny_model(seed: int = 0) -> CrossModel:
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=200, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    return CrossModel(BertModel(config))


RECORDS = [
    {"question": "who painted the blue door",
     "context": "The blue door was painted by Anna Berg in 1901. It hangs in Oslo. Tourists like it. "
                "Rain fell all week. The market sells fish. Boats leave at noon.",
     "supporting_sentences": ["The blue door was painted by Anna Berg in 1901."]},
    {"question": "when did the bridge open",
     "context": "Cats sleep a lot. The bridge opened in 1932 after four years. Traffic grew fast. "
                "Snow covers the hills. Bread is baked daily.",
     "supporting_sentences": ["The bridge opened in 1932 after four years."]},
]


def test_windows_keep_whole_sentences_and_record_ranges() -> None:
    question = [10, 11, 12]
    sentences = [[20, 21, 22], [30, 31], [40, 41, 42, 43], [50], [60, 61, 62]]
    windows = build_windows(question, sentences, cls_id=1, sep_id=2, max_length=12)
    assert [i for w in windows for i, _, _ in w.ranges] == list(range(len(sentences)))
    for window in windows:
        assert window.input_ids[:5] == [1, 10, 11, 12, 2] and window.input_ids[-1] == 2
        assert len(window.input_ids) <= 12
        for index, start, end in window.ranges:
            assert window.input_ids[start:end] == sentences[index]  # whole sentence, exact range
    assert len(windows) == 3  # 5 + 3 + 2 + sep = 11; then 4 + 1 + sep; then 3 + sep


def test_long_sentence_cut_and_question_capped() -> None:
    windows = build_windows(list(range(100, 180)), [[7] * 50, [8, 8]], cls_id=1, sep_id=2, max_length=32,
                            max_question=8)
    assert windows[0].input_ids[:10] == [1, *range(100, 108), 2]
    index, start, end = windows[0].ranges[0]
    assert index == 0 and end - start == 32 - 10 - 1 and len(windows[0].input_ids) == 32
    assert windows[1].ranges[0][0] == 1


def test_labels_match_supporting_sentences() -> None:
    sentences = ["The  blue door was painted\nby Anna Berg in 1901. ", "It hangs in Oslo.", "Tourists like it."]
    assert label_sentences(sentences, ["The blue door was painted by Anna Berg in 1901."]) == [1, 0, 0]
    assert label_sentences(sentences, []) == [0, 0, 0]


def test_labels_line_up_with_window_scores() -> None:
    tok = WordTokenizer()
    from training.scorer.cross import _split_sentences, tokenize_plain

    record = RECORDS[0]
    sentences = _split_sentences(record["context"])
    labels = label_sentences(sentences, record["supporting_sentences"])
    assert labels[0] == 1 and sum(labels) == 1
    windows = build_windows(tokenize_plain(tok, [record["question"]])[0], tokenize_plain(tok, sentences),
                            cls_id=1, sep_id=2, max_length=24)
    assert len(windows) > 1
    picked = sample_windows(windows, labels, 1, __import__("random").Random(0))
    assert any(labels[i] for i, _, _ in picked[0].ranges)
    scores = tiny_model()(picked)
    assert [s.shape[0] for s in scores] == [len(w.ranges) for w in picked]
    assert rank_context(tiny_model(), tok, record["question"], sentences, max_length=24).shape == (len(sentences),)


def test_one_step_lowers_the_loss() -> None:
    model = tiny_model()
    windows = build_windows([10, 11], [[20, 21], [30, 31, 32], [40]], cls_id=1, sep_id=2, max_length=9)
    labels = [0, 1, 0]
    optimizer = make_optimizer(model, CrossConfig(lr_encoder=1e-3, lr_head=1e-2))
    before = window_loss(model(windows), windows, labels, 4.0, 1.0)
    before.backward()
    optimizer.step()
    with torch.no_grad():
        after = window_loss(model(windows), windows, labels, 4.0, 1.0)
    assert after.item() < before.item()


def _config(out: Path, steps: int) -> CrossConfig:
    return CrossConfig(out=str(out), total_steps=steps, warmup=1, checkpoint_every=2, log_every=1, val_eval=1,
                       questions_per_step=1, neg_windows=1, max_length=24, budget_minutes=60, threads=1, keep=2,
                       lr_encoder=1e-3, lr_head=1e-2)


def test_checkpoint_resume_round_trip(tmp_path: Path) -> None:
    tok, data = WordTokenizer(), (RECORDS, RECORDS[:1])
    straight = tiny_model()
    train(_config(tmp_path / "a", 4), straight, tok, data)

    first = tiny_model()
    train(_config(tmp_path / "b", 2), first, tok, data)
    assert latest_checkpoint(tmp_path / "b").name == "ckpt-000002"
    resumed = tiny_model(seed=1)  # different init: everything must come from the checkpoint
    result = train(_config(tmp_path / "b", 4), resumed, tok, data)
    assert result["step"] == 4
    assert sorted(p.name for p in (tmp_path / "b").glob("ckpt-*")) == ["ckpt-000002", "ckpt-000004"]
    for (name, a), (_, b) in zip(straight.state_dict().items(), resumed.state_dict().items()):
        assert torch.allclose(a, b, atol=1e-6), name

    reloaded = tiny_model(seed=2)
    state = load_checkpoint(tmp_path / "b" / "ckpt-000004", reloaded, make_optimizer(reloaded, CrossConfig()))
    assert state["step"] == 4 and "val_mrr" in state["metrics"]
    for a, b in zip(resumed.state_dict().values(), reloaded.state_dict().values()):
        assert torch.equal(a, b)


def test_budget_stops_before_training(tmp_path: Path) -> None:
    config = _config(tmp_path, 100)
    config.budget_minutes = 0.01
    result = train(config, tiny_model(), WordTokenizer(), (RECORDS, RECORDS[:1]))
    assert result["step"] == 0
    assert latest_checkpoint(tmp_path) is not None


if __name__ == "__main__":
    pytest.main([__file__])
