"""CSE wiring: window planning (pure), bidirectional decoders, marker embeddings."""

import pytest
import torch

from tpc_core.engine.scoring.cse import bidirectional_mask, plan_windows


def test_every_sentence_is_owned_by_one_window_with_context():
    sentence_ids = [[i] * n for i, n in enumerate([5, 7, 3, 9, 4, 6, 8, 2, 5, 7], start=10)]
    windows, owner = plan_windows(sentence_ids, max_window_tokens=24, overlap_tokens=8, prefix=[1], suffix=[2],
                                  marker_id=3)
    assert len(owner) == len(sentence_ids)
    for index, window_index in enumerate(owner):
        slots = {slot[0]: slot for slot in windows[window_index].slots}
        assert index in slots
        _, start, end, marker = slots[index]
        assert windows[window_index].input_ids[start:end] == sentence_ids[index]
        assert windows[window_index].input_ids[marker] == 3
    for window in windows:
        assert len(window.input_ids) <= 24
        assert window.input_ids[0] == 1 and window.input_ids[-1] == 2
    # consecutive windows share sentences (overlap), so no sentence is read at a cut
    assert any({s[0] for s in a.slots} & {s[0] for s in b.slots} for a, b in zip(windows, windows[1:]))


def test_oversized_sentence_is_clipped_for_encoding_only():
    windows, owner = plan_windows([[5] * 100, [6] * 3], max_window_tokens=16, overlap_tokens=4, prefix=[1],
                                  suffix=[2], marker_id=None)
    assert all(len(w.input_ids) <= 16 for w in windows)
    assert owner == [0, 1]


def test_bidirectional_mask_shape_and_padding():
    attention = torch.tensor([[1, 1, 0]])
    mask = bidirectional_mask(attention, torch.float32)
    assert mask.shape == (1, 1, 3, 3)
    assert mask[0, 0, 0].tolist() == [True, True, False]


def test_decoder_base_is_really_bidirectional(tmp_path):
    """The first token's state must change when the last token changes (LLM2Vec-style attention)."""
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    model = LlamaModel(LlamaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=2, intermediate_size=32)).eval()
    first = torch.tensor([[3, 4, 5, 6]])
    second = torch.tensor([[3, 4, 5, 9]])
    attention = torch.ones_like(first)
    with torch.no_grad():
        causal_a = model(input_ids=first, attention_mask=attention).last_hidden_state[0, 0]
        causal_b = model(input_ids=second, attention_mask=attention).last_hidden_state[0, 0]
        bidirectional = bidirectional_mask(attention, model.dtype)
        bi_a = model(input_ids=first, attention_mask=bidirectional).last_hidden_state[0, 0]
        bi_b = model(input_ids=second, attention_mask=bidirectional).last_hidden_state[0, 0]
    assert torch.allclose(causal_a, causal_b)
    assert not torch.allclose(bi_a, bi_b)


def test_decoder_cse_checkpoint_scores(tiny_checkpoint, tmp_path):
    """A decoder CSE (random tiny Llama) loads as bidirectional and scores every sentence."""
    import shutil

    from transformers import LlamaConfig, LlamaModel

    from tpc_core import CSEConfig, TPCCompressor, TPCConfig

    root = tmp_path / "decoder_cse"
    shutil.copytree(tiny_checkpoint / "ctd_base", root / "dec")
    LlamaModel(LlamaConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           num_key_value_heads=2, intermediate_size=32)).save_pretrained(root / "dec")
    TPCConfig(cse=CSEConfig(base_model="dec", max_window_tokens=32, window_overlap_tokens=8), name="dec").save(root)
    compressor = TPCCompressor.from_pretrained(root, device="cpu")
    assert compressor.encoder.architecture == "decoder"
    text = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(12))
    result = compressor.compress(text, question="topic 3?", rate=0.3)
    assert all(s.score is not None for s in result.sentences)
    assert result.compressed_tokens <= result.budget


def test_markers_are_added_as_special_tokens(tiny):
    tokenizer = tiny.encoder.tokenizer
    for token in ("<end_of_sent>", "<end_of_question>"):
        ids = tokenizer(token, add_special_tokens=False)["input_ids"]
        assert len(ids) == 1 and ids[0] < tiny.encoder.model.get_input_embeddings().weight.shape[0]


def _padded_cost(batches, lengths, call_cost):
    return sum(len(batch) * max(lengths[i] for i in batch) + call_cost for batch in batches)


def _best_cost(sorted_lengths, max_rows, call_cost):
    """Brute force over every cut of the sorted lengths into consecutive groups of at most ``max_rows``."""
    if not sorted_lengths:
        return 0
    return min(len(sorted_lengths[:size]) * sorted_lengths[size - 1] + call_cost
               + _best_cost(sorted_lengths[size:], max_rows, call_cost)
               for size in range(1, min(max_rows, len(sorted_lengths)) + 1))


@pytest.mark.parametrize("seed", range(20))
def test_plan_batches_covers_every_input_once_within_max_rows_at_the_least_padding(seed):
    import random

    from tpc_core.engine.scoring.cse import plan_batches

    generator = random.Random(seed)
    lengths = [generator.choice([12, 40, 41, 90, 128]) for _ in range(generator.randint(0, 9))]
    max_rows, call_cost = generator.randint(1, 4), generator.choice([0, 16, 128])
    batches = plan_batches(lengths, max_rows, call_cost)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(1 <= len(batch) <= max_rows for batch in batches)
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(flat)  # shortest first, each batch a run of similar lengths
    assert _padded_cost(batches, lengths, call_cost) == _best_cost(sorted(lengths), max_rows, call_cost)


def test_plan_batches_keeps_long_windows_apart_from_short_ones():
    from tpc_core.engine.scoring.cse import plan_batches

    lengths = [128, 20, 20, 20, 20, 20, 20, 128]
    assert plan_batches(lengths, 16, 128) == [[1, 2, 3, 4, 5, 6], [0, 7]]
    assert plan_batches(lengths, 16, 10_000) == [[1, 2, 3, 4, 5, 6, 0, 7]]  # calls dearer than any padding
    with pytest.raises(ValueError, match="max_rows must be a positive int"):
        plan_batches(lengths, 0, 128)


@pytest.mark.slow
def test_a_repeated_question_is_encoded_once_and_reads_as_if_alone(tpc_mini):
    rows = []
    hook = tpc_mini.encoder.forward_module.register_forward_pre_hook(  # the slim pass: (input_ids, mask)
        lambda _module, args, kwargs: rows.append((args[0] if args else kwargs["input_ids"]).shape[0]),
        with_kwargs=True)
    try:
        repeated = tpc_mini.encoder.encode_questions(["Who signed it?"] * 5 + ["When?"])
    finally:
        hook.remove()
    assert rows == [2]  # two distinct texts, one forward row each
    alone = tpc_mini.encoder.encode_questions(["Who signed it?", "When?"])
    assert torch.equal(repeated, alone[[0, 0, 0, 0, 0, 1]])
    assert tpc_mini.encoder.encode_questions([]).shape == (0, repeated.shape[1])


def test_pooling_in_groups_gives_the_same_embeddings(tpc_mini, monkeypatch):
    """The passes' states are pooled together, or group by group when they pass POOL_GROUP_BYTES: the same vectors,
    equal to pooling each pass's states on their own (pool_spans over one forward)."""
    import tpc_core.engine.scoring.cse as cse

    encoder = tpc_mini.encoder
    text = " ".join(f"Sentence {k} tells that harbour {k % 5} moved {k * 17} crates." for k in range(300))
    contexts = [encoder.tokenize([s.strip() + "." for s in text.split(".") if s.strip()]), encoder.tokenize(["Hi."])]
    assert len(encoder.context_windows(contexts)) > 2 * encoder.config.batch_size  # several passes
    together = encoder.encode_contexts(contexts)
    monkeypatch.setattr(cse, "POOL_GROUP_BYTES", 1)  # pooled after every pass
    one_by_one = encoder.encode_contexts(contexts)
    assert [t.shape for t in together] == [(len(contexts[0]), 384), (1, 384)]
    assert all(torch.equal(a, b) for a, b in zip(together, one_by_one))
    rows = [[101, *ids[0], 102] for ids in contexts]
    assert torch.equal(encoder.forward(rows, padded=encoder.pad(rows)), encoder.forward(rows))
