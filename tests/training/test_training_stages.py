"""Stages 2-5 (CTD SFT, CTD RL, CSE training, export) end to end on tiny random models, plus the behaviour
checks that need real weights (the RL reward with the shipped SmolLM2 and MiniLM)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from training.common.loop import OptimSettings, train_loop

FACTS = [
    ("The vault code is 4417.", "What is the vault code?"),
    ("Marie Curie won two Nobel prizes.", "How many Nobel prizes did Marie Curie win?"),
    ("The river Thames flows through London.", "Which river flows through London?"),
    ("Mount Everest is 8849 metres tall.", "How tall is Mount Everest?"),
    ("Bananas are rich in potassium.", "Which mineral are bananas rich in?"),
    ("The Danube ends in the Black Sea.", "Where does the Danube end?"),
]
FILLER = ["The weather was mild that spring.", "Several committees met on Tuesday.", "A new bridge opened in 1998.",
          "Prices of wool rose slowly.", "The library closes at six.", "Trains were late all week."]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    """Tiny MCQR and CTD files in the curation stage's format."""
    root = tmp_path_factory.mktemp("data")
    rng = random.Random(0)
    with open(root / "mcqr.jsonl", "w") as mcqr, open(root / "ctd.jsonl", "w") as ctd:
        for index, (fact, question) in enumerate(FACTS):
            sentences = rng.sample(FILLER, 4) + [fact] + rng.sample(FILLER, 2)
            mcqr.write(json.dumps({"id": f"m{index}", "question": question, "sentences": sentences,
                                   "positives": [4], "negatives": [0, 1, 2, 3, 5, 6]}) + "\n")
            prompt = " ".join(sentences) + f"\n\nAnswer the question.\nQuestion: {question}\nAnswer:"
            ctd.write(json.dumps({"id": f"c{index}", "prompt": prompt, "task_description": question}) + "\n")
    return {"mcqr": root / "mcqr.jsonl", "ctd": root / "ctd.jsonl"}


def _write(path: Path, body: dict) -> str:
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    return str(path)


def _cse_section(tiny_checkpoint: Path, data: dict[str, Path], output: Path) -> dict:
    return {"data_path": str(data["mcqr"]), "output_dir": str(output),
            "cse": {"base_model": str(tiny_checkpoint / "cse_base"), "architecture": "encoder", "pooling": "marker",
                    "max_window_tokens": 32, "window_overlap_tokens": 8},
            "train": {"learning_rate": 1e-3, "epochs": 1, "batch_size": 4, "micro_batch_size": 2,
                      "save_every_steps": 1},
            "lora": {"r": 4, "alpha": 8, "target_modules": ["query", "value"]},
            "hard_negatives": 3, "mntp_weight": 0.1}


def _ctd_section(tiny_checkpoint: Path) -> dict:
    return {"base_model": str(tiny_checkpoint / "ctd_base"), "max_input_tokens": 64, "max_new_tokens": 6}


# ------------------------------------------------------------------------------ configs fail early


def test_bad_configs_fail_before_any_model_loads(tmp_path, data, capsys) -> None:
    from training.cse_train import main as cse_main
    from training.ctd_rl import main as rl_main
    from training.export import main as export_main

    cases = [
        (cse_main, {"cse_train": {"data_path": str(data["mcqr"]), "output_dir": "x", "cse": {"base_model": "m"},
                                  "temprature": 0.1}}, "unknown key 'temprature'"),
        (cse_main, {"data_path": str(data["mcqr"]), "output_dir": "x", "cse": {"base_model": "m", "pooling": "max"}},
         "cse.pooling must be"),
        (cse_main, {"data_path": str(tmp_path / "none.jsonl"), "output_dir": "x", "cse": {"base_model": "m"}},
         "run training.curation first"),
        (cse_main, {"data_path": str(data["mcqr"]), "output_dir": "x", "cse": {"base_model": "m"},
                    "train": {"batch_size": 10, "micro_batch_size": 4}}, "multiple of train.micro_batch_size"),
        (rl_main, {"data_path": str(data["ctd"]), "output_dir": "x", "cse_checkpoint": "tpc-mini",
                   "candidates": 1, "ctd": {"base_model": "m"}}, "candidates >= 2"),
        (export_main, {"output_dir": "x", "cse_dir": str(tmp_path)}, "run training.cse_train first"),
    ]
    for index, (main, body, message) in enumerate(cases):
        with pytest.raises(SystemExit) as exit_info:
            main(["--config", _write(tmp_path / f"c{index}.yaml", body)])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


# ------------------------------------------------------------------------------ CSE


def _cse_parts(tiny_checkpoint: Path, data: dict[str, Path], tmp_path: Path):
    import torch

    from tpc_core.engine.scoring.cse import ContextSentenceEncoder
    from tpc_core.loading.checkpoint import HubOptions, load_cse_parts
    from training.common.loop import load_stage_config
    from training.cse_train import CSETrainConfig

    config = load_stage_config(_write(tmp_path / "cse.yaml", _cse_section(tiny_checkpoint, data, tmp_path / "run")),
                               CSETrainConfig, "cse_train")
    backbone, tokenizer, architecture = load_cse_parts(config.cse, Path.cwd(), HubOptions(confine_paths=False),
                                                       torch.device("cpu"), torch.float32)
    encoder = ContextSentenceEncoder(backbone, tokenizer, config.cse, architecture, torch.device("cpu"))
    return config, backbone, encoder, architecture


def test_cse_training_reads_sentences_exactly_as_inference_does(tiny_checkpoint, data, tmp_path) -> None:
    import torch
    import torch.nn.functional as F

    from training.cse_train import _build_module, _pad, _pool_question, _pool_slot, build_example, load_mcqr

    config, backbone, encoder, architecture = _cse_parts(tiny_checkpoint, data, tmp_path)
    module = _build_module(backbone, [encoder.sentence_marker, encoder.question_marker], architecture, True).eval()
    record = load_mcqr(data["mcqr"])[0]
    example = build_example(record, encoder, config, random.Random(0))
    with torch.no_grad():
        hidden, _ = module(*_pad([example.question_ids, *example.windows], 0, torch.device("cpu")))
    trained_view = F.normalize(_pool_slot(hidden, 1 + example.slots[0][0], example.slots[0], "marker"), dim=-1)
    question_view = F.normalize(_pool_question(hidden, 0, len(example.question_ids), len(encoder.suffix), "marker"),
                                dim=-1)
    inference = encoder.encode_contexts([encoder.tokenize(record["sentences"])])[0]
    assert torch.allclose(trained_view, inference[record["positives"][0]], atol=1e-5)
    assert torch.allclose(question_view, encoder.encode_questions([record["question"]])[0], atol=1e-5)


def test_cse_loss_is_finite_and_decreases_on_a_repeated_batch(tiny_checkpoint, data, tmp_path) -> None:
    import torch

    from training.common.loop import LoraSettings, apply_lora
    from training.cse_train import CSELoss, _build_module, load_mcqr

    config, backbone, encoder, architecture = _cse_parts(tiny_checkpoint, data, tmp_path)
    backbone.requires_grad_(False)
    backbone = apply_lora(backbone, LoraSettings(r=4, alpha=8, target_modules=["query", "value"]))
    module = _build_module(backbone, [encoder.sentence_marker, encoder.question_marker], architecture, True).train()
    loss_fn = CSELoss(encoder, config, architecture, torch.device("cpu"))
    batch = load_mcqr(data["mcqr"])[:4]
    optimizer = torch.optim.AdamW([p for p in module.parameters() if p.requires_grad], lr=5e-3)
    losses = []
    for _ in range(8):
        loss_fn.calls = 0  # same sampled positives / negatives every time
        loss, metrics = loss_fn(module, batch)
        assert torch.isfinite(loss) and {"contrastive", "mntp", "accuracy"} <= set(metrics)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0]
    assert module.marker_rows.requires_grad


def test_training_pairs_modes_turn_multi_hop_records_into_pairs() -> None:
    from training.cse_train import training_pairs

    record = {"id": "r1", "group": "r1", "question": "Where was the director of Jaws born?",
              "sentences": ["Jaws was directed by Steven Spielberg.", "Spielberg was born in Cincinnati.",
                            "Sharks live in the sea."], "positives": [0, 1], "negatives": [2]}
    every = training_pairs([record], "all")
    assert [p["positives"] for p in every] == [[0], [1]] and {p["group"] for p in every} == {"r1"}
    assert all(p["negatives"] == [2] for p in every)  # the other hop is never a negative
    single = training_pairs([record], "single")
    assert [p["positives"] for p in single] == [[0]] and single[0]["negatives"] == [2]
    assert training_pairs([record], "sample") == [record]


def test_pairs_of_one_question_are_not_each_others_negatives(tiny_checkpoint, data, tmp_path) -> None:
    import torch

    from training.cse_train import CSELoss, _build_module, load_mcqr, training_pairs

    config, backbone, encoder, architecture = _cse_parts(tiny_checkpoint, data, tmp_path)
    module = _build_module(backbone, [encoder.sentence_marker, encoder.question_marker], architecture, True).eval()
    record = load_mcqr(data["mcqr"])[0]
    two_hops = {**record, "positives": [4, 6], "negatives": [0, 1, 2, 3, 5]}
    pairs = training_pairs([two_hops], "all") + training_pairs(load_mcqr(data["mcqr"])[1:2], "all")
    loss_fn = CSELoss(encoder, config, architecture, torch.device("cpu"))
    captured = {}
    original = torch.nn.functional.cross_entropy

    def spy(logits, target, *args, **kwargs):
        captured.setdefault("logits", logits.detach())  # the contrastive call comes first, MNTP's after
        captured.setdefault("target", target)
        return original(logits, target, *args, **kwargs)

    torch.nn.functional.cross_entropy = spy
    try:
        with torch.no_grad():
            loss_fn(module, pairs)
    finally:
        torch.nn.functional.cross_entropy = original
    logits, target = captured["logits"], captured["target"]
    # pair 0's row: pair 1's candidates (same question) are masked, the third pair's are live negatives
    assert torch.isinf(logits[0, target[1]:target[2]]).all() and torch.isfinite(logits[0, target[2]:]).all()
    assert torch.isinf(logits[1, target[0]:target[1]]).all() and torch.isfinite(logits[2]).all()


# ------------------------------------------------------------------------------ CTD


def test_ctd_example_is_the_inference_input_plus_a_target_with_labels_only_on_it(tiny_checkpoint) -> None:
    import torch

    from tpc_core.config import CTDConfig
    from training.common.loop import LoraSettings
    from training.ctd_sft import encode_example, load_policy

    _, descriptor = load_policy(CTDConfig(**_ctd_section(tiny_checkpoint)), Path.cwd(), LoraSettings(r=2, alpha=4),
                                torch.device("cpu"))
    prompt = "Some context. " * 40 + "Question: Who?"
    example = encode_example(descriptor, prompt, " answer the question: Who?")
    source = descriptor.tokenizer(descriptor.build_chat_inputs(prompt), add_special_tokens=False)["input_ids"]
    assert example.input_ids[: len(source)] == source
    assert example.labels[: len(source)] == [-100] * len(source)
    target = example.labels[len(source):]
    assert target[-1] == descriptor.tokenizer.eos_token_id
    assert descriptor.tokenizer.decode(target[:-1]).strip() == "answer the question : who?"


def test_ctd_loss_is_finite_and_decreases_on_a_repeated_batch(tiny_checkpoint) -> None:
    import torch

    from tpc_core.config import CTDConfig
    from training.common.loop import LoraSettings
    from training.ctd_sft import CausalLMLoss, encode_example, load_policy

    model, descriptor = load_policy(CTDConfig(**_ctd_section(tiny_checkpoint)), Path.cwd(),
                                    LoraSettings(r=4, alpha=8, dropout=0.0), torch.device("cpu"))
    batch = [encode_example(descriptor, f"Text {i}. Question: what is {i}?", f" answer: what is {i}?")
             for i in range(3)]
    loss_fn = CausalLMLoss(descriptor.tokenizer.pad_token_id, torch.device("cpu"))
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    losses = []
    for _ in range(6):
        loss, _ = loss_fn(model, batch)
        assert torch.isfinite(loss)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------------------ resumable loop


def test_train_loop_resumes_from_its_last_state(tmp_path) -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    examples = [torch.randn(3) for _ in range(8)]
    calls = {"n": 0, "fail_at": 3}

    def loss_fn(net, batch):
        calls["n"] += 1
        if calls["n"] == calls["fail_at"]:
            raise KeyboardInterrupt  # the run is killed during step 2
        return net(torch.stack(batch)).pow(2).mean(), {}

    settings = OptimSettings(learning_rate=0.1, epochs=1, batch_size=4, micro_batch_size=2, save_every_steps=1)
    with pytest.raises(KeyboardInterrupt):
        train_loop(model, list(model.parameters()), examples, loss_fn, settings, tmp_path)
    assert (tmp_path / "checkpoints" / "step-1" / "progress.json").is_file()
    calls["fail_at"] = -1
    result = train_loop(model, list(model.parameters()), examples, loss_fn, settings, tmp_path)
    assert result.resumed_from == 1 and result.steps == 2 and len(result.losses) == 2  # the whole run
    steps = [json.loads(line)["step"] for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert steps == [1, 2]


# ------------------------------------------------------------------------------ the whole pipeline


def _request_records(path: Path) -> Path:
    """A few CTD-format records: questions written at the end (with their spans) and bare documents."""
    rows = []
    for number in range(12):
        family = "held_out_family" if number % 3 == 0 else f"family_{number % 2}"
        context = " ".join(FILLER[number % len(FILLER):] + FILLER[: number % len(FILLER)])
        if number % 2:
            question = f"What is the code of vault {number}?"
            prompt = f"{context}\n\nQuestion: {question}"
            spans = [[len(prompt) - len(question), len(prompt)]]
        else:
            prompt, spans = context, []
        rows.append({"id": f"r{number}", "prompt": prompt, "task_description": "x", "family": family,
                     "kind": "qa" if spans else "bare_document", "request_spans": spans,
                     "split": "validation" if family == "held_out_family" else "train"})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_request_head_labels_and_views() -> None:
    from training.request_head import head_and_tail, label_sentences

    assert label_sentences([(0, 5), (6, 10), (11, 20)], [[7, 8]]) == [False, True, False]
    assert label_sentences([(0, 5)], []) == [False]
    assert head_and_tail(5, 4) == [0, 1, 3, 4] and head_and_tail(3, 4) == [0, 1, 2]
    # a request in the middle of a long prompt stays in the view, with its neighbours
    assert head_and_tail(20, 4, keep=[10], around=1) == [0, 1, 9, 10, 11, 18, 19]


def test_request_head_layout_settings_are_checked(tmp_path) -> None:
    from training.request_head import RequestHeadConfig

    data = _request_records(tmp_path / "formats.jsonl")
    with pytest.raises(ValueError, match="layout_records"):
        RequestHeadConfig(str(data), "cse", str(tmp_path), layout_without_request=-1)
    config = RequestHeadConfig(str(data), "cse", str(tmp_path), layout_records=10, nq_path=str(tmp_path / "no.gz"))
    with pytest.raises(FileNotFoundError, match="no.gz"):
        config.check_paths()
    RequestHeadConfig(str(data), "cse", str(tmp_path), nq_path=str(tmp_path / "no.gz")).check_paths()  # unused


def test_every_stage_runs_and_the_export_loads_and_compresses(tiny_checkpoint, data, tmp_path) -> None:
    from tpc_core import TPCCompressor
    from training.cse_train import main as cse_main
    from training.ctd_rl import main as rl_main
    from training.ctd_sft import main as sft_main
    from training.evaluate import evaluate_checkpoints  # noqa: F401 (importable without the benchmark data)
    from training.export import main as export_main
    from training.request_head import main as head_main

    runs = tmp_path / "runs"
    formats = _request_records(tmp_path / "formats.jsonl")
    recipe = {
        "cse_train": _cse_section(tiny_checkpoint, data, runs / "cse"),
        "ctd_sft": {"data_path": str(data["ctd"]), "output_dir": str(runs / "sft"),
                    "ctd": _ctd_section(tiny_checkpoint),
                    "train": {"learning_rate": 1e-3, "epochs": 1, "batch_size": 2, "micro_batch_size": 1},
                    "lora": {"r": 4, "alpha": 8}, "max_examples": 4},
        "ctd_rl": {"data_path": str(formats), "output_dir": str(runs / "rl"), "cse_checkpoint": str(runs / "cse"),
                   "init_dir": str(runs / "sft"), "iterations": 2, "candidates": 2, "prompts_per_iteration": 2,
                   "kinds": ["bare_document"], "validation_prompts": 1,
                   "response_max_new_tokens": 4, "train": {"learning_rate": 1e-3, "batch_size": 2,
                                                           "micro_batch_size": 1}},
        "export": {"output_dir": str(runs / "tpc-tiny"), "cse_dir": str(runs / "cse"), "ctd_dir": str(runs / "rl"),
                   "name": "tpc-tiny", "max_size_mb": 20},
    }
    recipe["request_head"] = {"data_path": str(formats),
                              "cse_checkpoint": str(runs / "cse"), "output_dir": str(runs / "head")}
    recipe["export"]["request_head_dir"] = str(runs / "head")
    path = _write(tmp_path / "recipe.yaml", recipe)
    for main in (cse_main, sft_main, rl_main, head_main, export_main):
        assert main(["--config", path, "--log-level", "WARNING"]) == 0
    head_summary = json.loads((runs / "head" / "request_head_summary.json").read_text())
    assert head_summary["records"]["validation"] == 4 and 0 < head_summary["threshold"] < 1
    cse_summary = json.loads((runs / "cse" / "cse_train_summary.json").read_text())
    assert cse_summary["steps"] == 2 and all(map(lambda v: v == v, [cse_summary["last_loss"]]))
    rl_summary = json.loads((runs / "rl" / "ctd_rl_summary.json").read_text())
    assert len(rl_summary["mean_reward_by_iteration"]) == 2
    assert all(r <= 1e-6 for r in rl_summary["mean_reward_by_iteration"])  # -KL is never positive
    rewards = [json.loads(line) for line in (runs / "rl" / "rewards.jsonl").read_text().splitlines()]
    assert len(rewards) == 4 and all(len(r["candidates"]) == 2 for r in rewards)
    train_ids = {json.loads(line)["id"] for line in formats.read_text().splitlines()
                 if json.loads(line)["split"] == "train" and json.loads(line)["kind"] == "bare_document"}
    assert {r["id"] for r in rewards} <= train_ids  # only the configured kind, never a held-out family
    assert rl_summary["kinds"] == ["bare_document"]
    assert set(rl_summary["validation"]) == {"before", "fallback", "after"}
    validation = json.loads((runs / "rl" / "validation_rewards.json").read_text())
    for phase in ("before", "fallback", "after"):
        summary = rl_summary["validation"][phase]
        assert summary["prompts"] == 1 and summary["mean_reward"] <= 1e-6
        assert [row["id"] for row in validation[phase]["rows"]][0] in {"r0", "r6"}  # a held-out-family prompt

    exported = runs / "tpc-tiny"
    assert {"tpc_config.json", "README.md", "cse_adapter", "cse_extra_embeddings.safetensors",
            "ctd_adapter"} <= {p.name for p in exported.iterdir()}
    card = (exported / "README.md").read_text()
    assert "python -m training.cse_train" in card and "lr 0.001" in card and str(data["mcqr"]) in card
    compressor = TPCCompressor.from_pretrained(str(exported), device="cpu", trust_config_paths=True)  # bases: tmp dirs
    assert compressor.config.trained and compressor.config.ctd.adapter_dir == "ctd_adapter"
    assert compressor.config.agnostic.request_head == "request_head.safetensors"
    assert compressor.config.agnostic.request_threshold == head_summary["threshold"]
    text = " ".join(FILLER) + " The vault code is 4417."
    result = compressor.compress(text, question="What is the vault code?", rate=0.5)
    assert 0 < result.compressed_tokens <= result.budget
    agnostic = compressor.compress(text + "\nQuestion: What is the vault code?", rate=0.5)
    assert agnostic.task_description and agnostic.compressed_tokens <= agnostic.budget


# ------------------------------------------------------------------------------ real weights: the reward


@pytest.mark.slow
def test_rl_reward_prefers_the_description_whose_compression_keeps_the_answer(tpc_mini) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tpc_core.loading.offline import OfflineModelMissing, smollm2_dir
    from training.ctd_rl import ReferenceScorer, kl_reward

    try:
        source = str(smollm2_dir())
    except OfflineModelMissing as error:
        pytest.skip(str(error))
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32).eval()
    reference = ReferenceScorer(model, tokenizer, 1024, torch.device("cpu"))
    context = ("The museum opened in 1911 and has four floors. Its cafe serves soup on weekdays. "
               "The secret code of the old vault is 7391. Visitors often admire the glass roof. "
               "The gift shop sells postcards of the harbour. Guided tours start every hour.")
    prompt = context + "\n\nQuestion: What is the secret code of the old vault?\nAnswer:"
    response = reference.respond(prompt, 12)
    full = reference.response_logits(prompt, response)
    rewards = {}
    for label, description in {"keeps": "The prompt asks the assistant to give the secret code of the old vault.",
                               "misses": "The prompt asks the assistant to describe the gift shop and its postcards."
                               }.items():
        compressed = tpc_mini.compress(context, question=description, rate=0.35).compressed_prompt
        assert ("7391" in compressed) == (label == "keeps")
        rewards[label] = kl_reward(reference.response_logits(compressed + "\n\nQuestion: What is the secret code of "
                                                             "the old vault?\nAnswer:", response), full)
    assert "7391" in tokenizer.decode(response)
    assert rewards["keeps"] > rewards["misses"]


def _write_qa_rows(tmp_path: Path, *, count: int, split: str) -> Path:
    """``count`` qa_dev-schema rows (ids ``d0``/``t0``...): filler, then the one supporting fact last."""
    rows = [{"id": f"{split[0]}{index}", "source": "toy", "context": " ".join(FILLER) + " " + fact,
             "question": question, "answers": [fact.split()[-1].rstrip(".")], "supporting_sentences": [fact],
             "task_type": "single_doc_qa", "split": split} for index, (fact, question) in enumerate(FACTS[:count])]
    path = tmp_path / "qa.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_evaluate_reports_evidence_recall_for_checkpoints_and_baselines(tiny_checkpoint, tmp_path) -> None:
    from training.evaluate import evaluate_checkpoints

    path = _write_qa_rows(tmp_path, count=2, split="dev")
    report = evaluate_checkpoints({"tiny": str(tiny_checkpoint)}, baselines=["lead"], settings=["aware", "agnostic"],
                                  data_path=str(path), max_samples=2, rate=0.3)
    table = {(r["method"], r["setting"]): r for r in report["rows"]}
    assert set(table) == {("lead", "aware"), ("tiny", "aware"), ("tiny", "agnostic")}
    for row in report["rows"]:
        assert row["samples"] == 2 and 0.0 <= row["evidence_recall"] <= 1.0 and row["over_budget"] == 0
    assert table["lead", "aware"]["evidence_recall"] == 0.0  # the fact is the last sentence: lead drops it


def test_spread_subset_keeps_every_source_in_proportion() -> None:
    import pytest

    from training.evaluate import spread_subset

    grouped = ["a"] * 60 + ["b"] * 30 + ["c"] * 10  # the dev file is grouped by source like this
    picked = spread_subset(grouped, 10)
    assert picked.count("a") == 6 and picked.count("b") == 3 and picked.count("c") == 1
    assert spread_subset(grouped, None) == grouped and spread_subset(grouped, 500) == grouped
    with pytest.raises(ValueError, match="max_samples"):
        spread_subset(grouped, 0)


def test_validation_split_depends_on_sample_ids_only() -> None:
    from tpc_core.config import CSEConfig
    from training.cse_train import CSETrainConfig, split_validation

    records = [{"group": f"sample-{i}:mcqr", "question": "q"} for i in range(400)]
    training, held_out = split_validation(records, 0.25)
    assert len(training) + len(held_out) == 400 and 70 < len(held_out) < 130
    held = {r["group"] for r in held_out}
    assert not held & {r["group"] for r in training}
    _, reordered = split_validation(list(reversed(records)), 0.25)  # file order does not move the split
    assert {r["group"] for r in reordered} == held
    _, larger = split_validation(records, 0.5)  # a larger fraction holds out a superset
    assert held <= {r["group"] for r in larger}
    assert split_validation(records, 0.0) == (records, [])
    with pytest.raises(ValueError, match="validation_fraction"):
        CSETrainConfig(data_path="x", output_dir="y", cse=CSEConfig(base_model="m"), validation_fraction=1.0)


def test_evaluate_measures_only_the_requested_ids_of_a_split(tiny_checkpoint, tmp_path) -> None:
    from training.evaluate import evaluate_checkpoints, main

    path = _write_qa_rows(tmp_path, count=3, split="train")
    report = evaluate_checkpoints({}, baselines=["lead"], data_path=str(path), split="train", ids=["t0", "t2"])
    assert report["split"] == "train" and report["samples"] == 2 and report["rows"][0]["samples"] == 2
    with pytest.raises(ValueError, match="not in this split"):
        evaluate_checkpoints({}, baselines=["lead"], data_path=str(path), split="train", ids=["dev-only"])
    bad_ids = tmp_path / "ids.json"
    bad_ids.write_text('{"not": "a list"}')
    with pytest.raises(SystemExit) as exit_info:
        main(["--baseline", "lead", "--data", str(path), "--split", "train", "--ids", str(bad_ids)])
    assert exit_info.value.code == 2
