"""Stage 3: reward-guided refinement of the task descriptor (paper Section 3.3, Algorithm 3).

``python -m training.ctd_rl --config training/configs/tpc-mini.yaml [--set key=value ...]``

For each prompt ``p``: the reference LLM answers it once, ``r = f_LLM(p)`` (greedy, cached across
iterations); the current CTD samples ``candidates`` task descriptions; each compresses ``p`` through the
real ``TPCCompressor`` (CSE scores + ``tpc_core.engine.selection.budget`` under the budget) into ``S_i``; the reward is
``-KL(P(r|S_i) || P(r|p))``, the mean over the tokens of ``r`` of the KL between the reference LLM's next-token
distributions given ``S_i`` and given ``p``. The best candidate of each prompt becomes a cross-entropy
target (the SFT loss on the CTD input), and one pass over those targets closes the iteration.

Output: like ``training.ctd_sft`` (``ctd_adapter/``, ``ctd_config.json``) plus ``ctd_rl_summary.json`` and
``rewards.jsonl`` (every candidate, its reward and compressed size, per iteration).
"""

from __future__ import annotations

import json
import logging
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tpc_core.config import AgnosticConfig, CTDConfig
from training.common.jsonl import JsonlAppender, read_jsonl
from training.common.loop import LoraSettings, OptimSettings, stage_main, train_loop, weights_dtype
from training.ctd_sft import (
    CTD_CONFIG,
    CausalLMLoss,
    data_facts,
    encode_example,
    load_ctd_records,
    load_policy,
    save_ctd,
)

__all__ = ["CTDRLConfig", "ReferenceScorer", "kl_reward", "train_ctd_rl", "main"]

logger = logging.getLogger(__name__)


def _rl_defaults() -> OptimSettings:
    return OptimSettings(learning_rate=1.5e-4, epochs=1.0, batch_size=16, micro_batch_size=1, save_every_steps=0)


@dataclass
class CTDRLConfig:
    """RL refinement settings (the ``ctd_rl:`` section of a recipe).

    Attributes:
        data_path: Prompts (CTD JSONL: ``prompt``; the paper uses real instruction data such as Tulu SFT).
        output_dir: Run directory.
        cse_checkpoint: TPC checkpoint whose CSE compresses the candidates (name, directory or Hub id).
        init_dir: A ``training.ctd_sft`` run to start from (its adapter is trained further).
        ctd: CTD settings when ``init_dir`` is ``None`` (a fresh LoRA on the base model).
        reference_model: The LLM of the reward (paper: Llama-3.1-8B); ``None``: the CTD's base model with the
            adapter switched off.
        reference_max_input_tokens: Prompts longer than this are bounded (head + tail) for the reference LLM.
        iterations: RL iterations (paper: 3).
        candidates: Task descriptions sampled per prompt (N).
        prompts_per_iteration: Prompts per iteration (``None``: all).
        rate: Compression rate used for the candidates' ``S_i``.
        response_max_new_tokens: Length of the reference response ``r``.
        temperature: Sampling temperature of the candidates.
        top_p: Nucleus sampling of the candidates.
        train: Optimiser settings of the cross-entropy update (one epoch over the best candidates).
        lora: LoRA settings when starting without ``init_dir``.
        max_examples: Use a seeded random subset of N records.
        kinds: Only records of these kinds (``None``: all). The shipped descriptor writes descriptions only
            where the request head finds no written request, so RL there is about those kinds.
        validation_prompts: Held-out-family records (``split == "validation"``, same kinds) on which the
            greedy description's reward is measured before RL (the ``init_dir`` adapter) and after it, beside
            the fixed fallback description's; ``0`` skips the measurement.
        local_files_only: Never contact the Hub.
    """

    data_path: str
    output_dir: str
    cse_checkpoint: str
    init_dir: str | None = None
    ctd: CTDConfig | None = None
    reference_model: str | None = None
    reference_max_input_tokens: int = 4096
    iterations: int = 3
    candidates: int = 4
    prompts_per_iteration: int | None = None
    rate: float = 0.2
    response_max_new_tokens: int = 32
    temperature: float = 1.0
    top_p: float = 0.95
    train: OptimSettings = field(default_factory=_rl_defaults)
    lora: LoraSettings = field(default_factory=LoraSettings)
    max_examples: int | None = None
    kinds: list[str] | None = None
    validation_prompts: int = 0
    local_files_only: bool = False

    def __post_init__(self) -> None:
        if self.validation_prompts < 0:
            raise ValueError(f"validation_prompts must be >= 0, got {self.validation_prompts}.")
        if self.init_dir is None and self.ctd is None:
            raise ValueError("give init_dir (a training.ctd_sft run) or a ctd section.")
        if self.iterations < 1 or self.candidates < 2:
            raise ValueError("iterations must be >= 1 and candidates >= 2 (a best one must be chosen).")
        if not 0 < self.rate <= 1 or self.temperature <= 0 or not 0 < self.top_p <= 1:
            raise ValueError("rate must be in (0, 1], temperature > 0, top_p in (0, 1].")

    def check_paths(self) -> None:
        """Fail before any model loads when an input is missing."""
        if not Path(self.data_path).is_file():
            raise FileNotFoundError(f"data_path {self.data_path} not found; run training.curation first.")
        if self.init_dir is not None and not (Path(self.init_dir) / CTD_CONFIG).is_file():
            raise FileNotFoundError(f"init_dir {self.init_dir} has no {CTD_CONFIG}; run training.ctd_sft first.")
        if Path(self.cse_checkpoint).expanduser().exists() and \
                not (Path(self.cse_checkpoint) / "tpc_config.json").is_file():
            raise FileNotFoundError(f"cse_checkpoint {self.cse_checkpoint} is not a TPC checkpoint.")


def kl_reward(logits_compressed: Any, logits_full: Any) -> float:
    """``-KL(P(r|S) || P(r|p))``: mean over response tokens of the KL between next-token distributions.

    Args:
        logits_compressed: (T, V) reference-LLM logits predicting each token of ``r`` given ``S``.
        logits_full: (T, V) the same given the whole prompt ``p``.
    """
    import torch.nn.functional as F  # lazy: loads torch

    log_s = F.log_softmax(logits_compressed.float(), dim=-1)
    log_p = F.log_softmax(logits_full.float(), dim=-1)
    return -float((log_s.exp() * (log_s - log_p)).sum(dim=-1).mean())


class ReferenceScorer:
    """The reward's LLM: answers prompts and gives its next-token logits over a fixed response."""

    def __init__(self, model: Any, tokenizer: Any, max_input_tokens: int, device: Any) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_input_tokens = max_input_tokens
        self.device = device

    def _chat(self, prompt: str) -> list[int]:
        from tpc_core.engine.task.ctd import DEFAULT_HEAD_FRACTION, bound_prompt  # lazy: loads torch

        bounded = bound_prompt(prompt, self.tokenizer, self.max_input_tokens, DEFAULT_HEAD_FRACTION)
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template([{"role": "user", "content": bounded}], tokenize=False,
                                                      add_generation_prompt=True)
        else:
            text = bounded + "\n"
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def respond(self, prompt: str, max_new_tokens: int) -> list[int]:
        """Greedy response token ids (end-of-turn excluded)."""
        import torch  # lazy: loads torch

        ids = torch.tensor([self._chat(prompt)], device=self.device)
        with torch.inference_mode():
            output = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                         max_new_tokens=max_new_tokens, pad_token_id=self.tokenizer.pad_token_id,
                                         temperature=None, top_p=None, top_k=None)
        response = output[0, ids.shape[1]:].tolist()
        stop = {self.tokenizer.eos_token_id, self.tokenizer.pad_token_id}
        cut = next((i for i, t in enumerate(response) if t in stop), len(response))
        return response[:cut] or response[:1]

    def response_logits(self, prompt: str, response: list[int]) -> Any:
        """(len(response), V) logits predicting each response token after ``prompt``."""
        import torch  # lazy: loads torch

        context = self._chat(prompt)
        ids = torch.tensor([context + response], device=self.device)
        with torch.inference_mode():
            logits = self.model(input_ids=ids).logits[0]
        return logits[len(context) - 1: len(context) - 1 + len(response)].float().cpu()


def _sample_candidates(model: Any, descriptor: Any, prompt: str, config: CTDRLConfig) -> list[str]:
    import torch  # lazy: loads torch

    from tpc_core.engine.task.ctd import REPETITION_PENALTY, finish_description  # lazy: loads torch

    tokenizer = descriptor.tokenizer
    inputs = tokenizer([descriptor.build_chat_inputs(prompt)], return_tensors="pt", add_special_tokens=False)
    inputs = inputs.to(descriptor.device)
    with torch.inference_mode():
        output = model.generate(**inputs, do_sample=True, temperature=config.temperature, top_p=config.top_p,
                                num_return_sequences=config.candidates, pad_token_id=tokenizer.pad_token_id,
                                max_new_tokens=descriptor.config.max_new_tokens,
                                repetition_penalty=REPETITION_PENALTY)
    texts = tokenizer.batch_decode(output[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    return [finish_description(descriptor.config.response_prefix, text) for text in texts]


def train_ctd_rl(config: CTDRLConfig) -> Path:
    """Run Algorithm 3 for ``config.iterations`` iterations; returns the run directory."""
    import torch  # lazy: loads torch
    from accelerate import Accelerator  # lazy: loads torch

    from tpc_core import TPCCompressor  # lazy: loads torch

    config.check_paths()
    started = time.perf_counter()
    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    records = _train_records(config)
    held_out = _validation_records(config)
    accelerator = Accelerator(mixed_precision=config.train.mixed_precision)
    torch.manual_seed(config.train.seed)
    ctd, model, descriptor = _starting_policy(config, accelerator.device)
    reference = _reference(config, model, descriptor, accelerator.device)
    compressor = TPCCompressor.from_pretrained(config.cse_checkpoint, device=str(accelerator.device),
                                               local_files_only=config.local_files_only, trust_config_paths=True)
    rng = random.Random(config.train.seed)
    responses: dict[str, list[int]] = {}
    validation: dict[str, Any] = {}
    answers = {r["id"]: _reference_answer(r, model, reference, config, responses) for r in held_out}
    if held_out:
        validation["before"] = _greedy_rewards(held_out, model, descriptor, reference, compressor, config, answers)
        validation["fallback"] = _fixed_rewards(held_out, model, reference, compressor, config, answers)
        logger.info("held-out prompts before RL: %s; fallback description: %s", validation["before"]["summary"],
                    validation["fallback"]["summary"])
    rewards = _RewardLog([], [])
    losses: list[float] = []
    log = JsonlAppender(output / "rewards.jsonl")
    for iteration in range(1, config.iterations + 1):
        chosen = rng.sample(records, min(len(records), config.prompts_per_iteration or len(records)))
        rollout = _Rollout(model, descriptor, reference, compressor, config, responses, ctd.response_prefix)
        targets = _best_targets(rollout, chosen, iteration, log, rewards)
        settings = replace(config.train, seed=config.train.seed + iteration, save_every_steps=0)
        trainable = [p for p in model.parameters() if p.requires_grad]
        loss_fn = CausalLMLoss(descriptor.tokenizer.pad_token_id or 0, accelerator.device)
        result = train_loop(model, trainable, targets, loss_fn, settings, output / f"iteration-{iteration}",
                            accelerator=accelerator)
        model = accelerator.unwrap_model(model)
        descriptor.model = model
        losses.extend(result.losses)
    log.close()
    if held_out:
        validation["after"] = _greedy_rewards(held_out, model, descriptor, reference, compressor, config, answers)
        logger.info("held-out prompts after RL: %s", validation["after"]["summary"])
        (output / "validation_rewards.json").write_text(json.dumps(validation, indent=2) + "\n", encoding="utf-8")
    if accelerator.is_main_process:
        save_ctd(model, descriptor.tokenizer, ctd, True, output)
        summary = _summary(config, len(records), rewards, losses, validation, accelerator.num_processes, started)
        (output / "ctd_rl_summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    accelerator.wait_for_everyone()
    return output


def _train_records(config: CTDRLConfig) -> list[dict[str, Any]]:
    """The train records of the configured kinds, at most ``max_examples`` of them (a seeded sample)."""
    records = _of_kinds(load_ctd_records(config.data_path, None, config.train.seed), config.kinds)
    if not records:
        raise ValueError(f"{config.data_path} has no train record of kinds {config.kinds}.")
    if config.max_examples is not None and config.max_examples < len(records):
        records = random.Random(config.train.seed).sample(records, config.max_examples)
    return records


def _starting_policy(config: CTDRLConfig, device: Any) -> tuple[CTDConfig, Any, Any]:
    """The CTD config, the policy model and its descriptor RL starts from: ``init_dir``'s SFT run, else ``ctd``'s
    base model."""
    if config.init_dir is not None:
        init = Path(config.init_dir)
        ctd = CTDConfig(**json.loads((init / CTD_CONFIG).read_text(encoding="utf-8")))
        model, descriptor = load_policy(ctd, init, config.lora, device, dtype=weights_dtype(config.train),
                                        local_files_only=config.local_files_only)
        return ctd, model, descriptor
    assert config.ctd is not None
    ctd = config.ctd
    model, descriptor = load_policy(ctd, Path.cwd(), config.lora, device,
                                    dtype=weights_dtype(config.train), local_files_only=config.local_files_only)
    return ctd, model, descriptor


@dataclass
class _Rollout:
    """What one iteration samples and rewards candidate descriptions with."""

    model: Any
    descriptor: Any
    reference: ReferenceScorer
    compressor: Any
    config: CTDRLConfig
    responses: dict[str, list[int]]
    response_prefix: str


@dataclass
class _RewardLog:
    """Mean reward and mean best reward of each iteration so far."""

    mean: list[float]
    best: list[float]


def _best_targets(rollout: _Rollout, chosen: Sequence[dict[str, Any]], iteration: int, log: JsonlAppender,
                  rewards: _RewardLog) -> list[Any]:
    """Sample candidates for each chosen prompt, reward them, and encode each prompt's best one as an SFT target;
    each prompt's candidates are logged and the iteration's rewards appended to ``rewards``."""
    model = rollout.model
    config = rollout.config
    targets: list[Any] = []
    rewards_all: list[float] = []
    rewards_best: list[float] = []
    for record in chosen:
        prompt = record["prompt"]
        response, full = _reference_answer(record, model, rollout.reference, config, rollout.responses)
        model.eval()
        candidates = _sample_candidates(model, rollout.descriptor, prompt, config)
        scored = []
        for candidate in candidates:
            compressed = rollout.compressor.compress(prompt, question=candidate, rate=config.rate).compressed_prompt
            with _adapter_off(model, config.reference_model is None):
                reward = kl_reward(rollout.reference.response_logits(compressed, response), full)
            scored.append((reward, candidate, len(compressed)))
        best = max(scored, key=lambda item: item[0])
        targets.append(encode_example(rollout.descriptor, prompt, best[1][len(rollout.response_prefix):]))
        rewards_all.extend(r for r, _, _ in scored)
        rewards_best.append(best[0])
        log.write({"iteration": iteration, "id": record["id"],
                   "response": rollout.reference.tokenizer.decode(response),
                   "candidates": [{"description": c, "reward": round(r, 5), "compressed_chars": n}
                                  for r, c, n in scored], "best": best[1]})
    rewards.mean.append(round(sum(rewards_all) / len(rewards_all), 5))
    rewards.best.append(round(sum(rewards_best) / len(rewards_best), 5))
    logger.info("iteration %d: mean reward %.4f, mean best reward %.4f", iteration, rewards.mean[-1],
                rewards.best[-1])
    return targets


def _summary(config: CTDRLConfig, records: int, rewards: _RewardLog, losses: list[float],
             validation: dict[str, Any], processes: int, started: float) -> dict[str, Any]:
    """``ctd_rl_summary.json``: the run's config, data, rewards by iteration, losses and the SFT run's summary."""
    previous = []
    if config.init_dir is not None and (Path(config.init_dir) / "ctd_sft_summary.json").is_file():
        previous.append(json.loads((Path(config.init_dir) / "ctd_sft_summary.json").read_text(encoding="utf-8")))
    return {"stage": "ctd_rl", "config": json.loads(json.dumps(asdict(config), default=str)),
            "data": data_facts(config.data_path), "prompts": config.prompts_per_iteration or records,
            "iterations": config.iterations, "candidates": config.candidates,
            "mean_reward_by_iteration": rewards.mean, "mean_best_reward_by_iteration": rewards.best,
            "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None,
            "total_seconds": round(time.perf_counter() - started, 1), "processes": processes,
            "previous_summaries": previous, "kinds": config.kinds,
            "validation": {k: v["summary"] for k, v in validation.items()},
            "command": " ".join(["python", "-m", "training.ctd_rl", *sys.argv[1:]])}


def _of_kinds(records: list[dict[str, Any]], kinds: Sequence[str] | None) -> list[dict[str, Any]]:
    return records if kinds is None else [r for r in records if r.get("kind") in set(kinds)]


def _validation_records(config: CTDRLConfig) -> list[dict[str, Any]]:
    """``validation_prompts`` held-out-family records of the configured kinds (seeded, spread over kinds)."""
    if not config.validation_prompts:
        return []

    pool = _of_kinds([r for r in read_jsonl(config.data_path) if r.get("split") == "validation"
                      and str(r.get("prompt", "")).strip()], config.kinds)
    if not pool:
        raise ValueError(f"{config.data_path} has no validation record of kinds {config.kinds}.")
    return random.Random(config.train.seed + 1).sample(pool, min(config.validation_prompts, len(pool)))


def _reference_answer(record: dict[str, Any], model: Any, reference: ReferenceScorer, config: CTDRLConfig,
                      responses: dict[str, list[int]]) -> tuple[list[int], Any]:
    """The reference LLM's response ``r`` to the whole prompt (cached by record id) and its logits given it."""
    with _adapter_off(model, config.reference_model is None):
        if record["id"] not in responses:
            responses[record["id"]] = reference.respond(record["prompt"], config.response_max_new_tokens)
        response = responses[record["id"]]
        return response, reference.response_logits(record["prompt"], response)


def _reward_of(record: dict[str, Any], description: str, answer: tuple[list[int], Any], model: Any,
               reference: ReferenceScorer, compressor: Any, config: CTDRLConfig) -> float:
    """``-KL`` of the reference answer given the prompt compressed for ``description`` vs given the whole prompt."""
    response, full = answer
    compressed = compressor.compress(record["prompt"], question=description, rate=config.rate).compressed_prompt
    with _adapter_off(model, config.reference_model is None):
        return kl_reward(reference.response_logits(compressed, response), full)


def _summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    rewards = [row["reward"] for row in rows]
    grounded = [row["grounded"] for row in rows if "grounded" in row]
    summary = {"prompts": len(rows), "mean_reward": round(sum(rewards) / max(len(rewards), 1), 5)}
    if grounded:
        summary["grounded_share"] = round(sum(grounded) / len(grounded), 4)
    return summary


def _greedy_rewards(records: list[dict[str, Any]], model: Any, descriptor: Any, reference: ReferenceScorer,
                    compressor: Any, config: CTDRLConfig, answers: dict[str, tuple[list[int], Any]]) -> dict[str, Any]:
    """Reward of the policy's greedy description (what inference writes) on each held-out prompt."""
    from tpc_core.engine.task.grounding import is_grounded

    model.eval()
    descriptor.model = model
    rows = []
    for record in records:
        description = descriptor.describe([record["prompt"]])[0]
        rows.append({"id": record["id"], "kind": record.get("kind"), "description": description,
                     "grounded": is_grounded(description, record["prompt"]),
                     "reward": round(_reward_of(record, description, answers[record["id"]], model, reference,
                                                compressor, config), 5)})
    return {"summary": _summarise(rows), "rows": rows}


def _fixed_rewards(records: list[dict[str, Any]], model: Any, reference: ReferenceScorer, compressor: Any,
                   config: CTDRLConfig, answers: dict[str, tuple[list[int], Any]]) -> dict[str, Any]:
    """Reward of the checkpoint's fixed fallback description (what an ungrounded description becomes)."""
    description = AgnosticConfig().fallback_description
    rows = [{"id": r["id"], "kind": r.get("kind"), "description": description,
             "reward": round(_reward_of(r, description, answers[r["id"]], model, reference, compressor, config), 5)}
            for r in records]
    return {"summary": _summarise(rows), "rows": rows}


class _adapter_off:  # used as a context manager
    """Switch the policy's LoRA off while it serves as the reference LLM (no second model in memory)."""

    def __init__(self, model: Any, active: bool) -> None:
        self.model = model
        self.active = active
        self.context = None

    def __enter__(self) -> None:
        self.model.eval()
        if self.active and hasattr(self.model, "disable_adapter"):
            self.context = self.model.disable_adapter()
            self.context.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self.context is not None:
            self.context.__exit__(*exc)


def _reference(config: CTDRLConfig, policy: Any, descriptor: Any, device: Any) -> ReferenceScorer:
    if config.reference_model is None:
        return ReferenceScorer(policy, descriptor.tokenizer, config.reference_max_input_tokens, device)
    import torch  # lazy: loads torch
    from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: loads torch

    from tpc_core.loading.checkpoint import resolve_base  # lazy: loads torch

    # A training config is the user's own: a local directory anywhere is fine here (checkpoints stay confined).
    local = Path(config.reference_model).expanduser()
    source = str(local) if local.is_dir() else resolve_base(config.reference_model, Path.cwd(),
                                                            "ctd_rl.reference_model")
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=config.local_files_only)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, use_safetensors=True,
                                                 local_files_only=config.local_files_only).to(device).eval()
    return ReferenceScorer(model, tokenizer, config.reference_max_input_tokens, device)


main = stage_main("training.ctd_rl", "ctd_rl", CTDRLConfig, train_ctd_rl,
                  "Reward-guided refinement of the task descriptor (paper Algorithm 3).")


if __name__ == "__main__":
    sys.exit(main())
