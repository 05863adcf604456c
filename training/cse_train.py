"""Stage 4: train the Context-aware Sentence Encoder on MCQR (paper Section 3.4, Appendix A.1).

``python -m training.cse_train --config training/configs/tpc-mini.yaml [--set key=value ...]``

Inputs are built with the inference code itself: ``tpc_core.loading.checkpoint.load_cse_parts`` (special tokens added,
new rows initialised), ``ContextSentenceEncoder.tokenize`` / ``special_token_frame``, and
``tpc_core.engine.scoring.cse.plan_windows`` with the checkpoint's own window size, overlap and pooling. A sentence's
embedding is read from the window inference would read it from. Decoder bases are made bidirectional with
``tpc_core.engine.scoring.cse.bidirectional_mask`` (LLM2Vec); encoders are used as they are.

Loss = InfoNCE(question, positive | hard negatives from the same context + in-batch candidates, temperature)
+ ``mntp_weight`` × MNTP (masked tokens predicted through the tied input embeddings: from the previous
position for decoders, LLM2Vec's masked next-token prediction; from the same position for encoders).
The rows of ``<end_of_sent>`` / ``<end_of_question>`` are trained as a separate small parameter, and the
backbone gets a LoRA adapter (or full fine-tuning).

Output (a TPC checkpoint with a CSE only, loadable by ``TPCCompressor.from_pretrained``)::

    tpc_config.json  cse_adapter/  cse_extra_embeddings.safetensors  cse_train_summary.json
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tpc_core.config import CSEConfig, TPCConfig
from training.common.jsonl import read_jsonl
from training.common.loop import LoraSettings, OptimSettings, apply_lora, stage_main, train_loop, weights_dtype

__all__ = ["CSETrainConfig", "CSEExample", "build_example", "load_mcqr", "source_sample_id", "split_validation",
           "training_pairs", "train_cse", "weighted", "main"]

logger = logging.getLogger(__name__)
ADAPTER_DIR = "cse_adapter"
WEIGHTS_DIR = "cse_weights"
EXTRA_EMBEDDINGS = "cse_extra_embeddings.safetensors"


POSITIVE_MODES = ("all", "sample", "single")


def _cse_defaults() -> OptimSettings:
    return OptimSettings(learning_rate=5e-5, epochs=2.0, batch_size=32, micro_batch_size=8)


@dataclass
class CSETrainConfig:
    """CSE training settings (the ``cse_train:`` section of a recipe).

    Attributes:
        data_path: MCQR JSONL from ``training.curation`` (question, sentences, positives, negatives).
        output_dir: Run directory; it becomes a CSE-only TPC checkpoint.
        cse: The inference settings trained for (base model, pooling, markers, window size, overlap).
        train: Optimiser settings (paper: AdamW, lr 5e-5, 2 epochs, batch 32).
        lora: LoRA settings (paper: r = 16).
        temperature: InfoNCE temperature.
        hard_negatives: Negatives per question drawn from its own context.
        max_windows_per_example: Context windows encoded per example (the positive's window first).
        in_batch_negatives: Other questions' candidates count as negatives too.
        mntp_weight: Weight of the MNTP loss (0 disables it and its extra forward pass).
        mntp_probability: Share of content tokens masked for MNTP.
        mntp_max_windows: Windows per micro-batch given to MNTP (``None``: all; fewer saves a CPU run time).
        train_special_tokens: Train the rows of the two markers (needs ``cse.use_special_tokens``).
        positives: How multi-hop records become training pairs: ``"all"`` one pair per positive sentence
            (every hop is learned; pairs of one question never act as each other's in-batch negatives),
            ``"sample"`` one randomly drawn positive per record and epoch, ``"single"`` only the positive
            sharing most words with the question, the others left out of the negatives too (a CQR-style
            single-hop set: the paper's "w/o multi-hop data" ablation).
        data_mix: More MCQR files mixed into training, each with a weight: the number of times its records
            are used per epoch (``3`` repeats them three times, ``0.5`` keeps a fixed half, picked by a hash of
            the record id). Keeps a large source from drowning the small ones. Never held out for validation.
        data_weight: The same weight for ``data_path``'s training records.
        max_examples: Use only the first N records (smoke runs).
        validation_fraction: Share of records held out of training (0: none), picked by a hash of the
            record's source sample id, so every run with the same fraction holds out the same samples
            whatever its other settings. Their ids go to ``validation_ids.json`` in the run directory, for
            ``python -m training.evaluate --split train --ids RUN/validation_ids.json``: recipe choices
            (markers, MNTP, epochs) are compared there, never on dev.
        local_files_only: Never contact the Hub for base models.
    """

    data_path: str
    output_dir: str
    cse: CSEConfig
    train: OptimSettings = field(default_factory=_cse_defaults)
    lora: LoraSettings = field(default_factory=LoraSettings)
    temperature: float = 0.05
    hard_negatives: int = 7
    max_windows_per_example: int = 2
    in_batch_negatives: bool = True
    mntp_weight: float = 0.1
    mntp_probability: float = 0.2
    mntp_max_windows: int | None = None
    train_special_tokens: bool = True
    positives: str = "all"
    data_mix: dict[str, float] = field(default_factory=dict)
    data_weight: float = 1.0
    max_examples: int | None = None
    validation_fraction: float = 0.0
    local_files_only: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.validation_fraction < 1:
            raise ValueError(f"validation_fraction must be in [0, 1), got {self.validation_fraction}.")
        if self.positives not in POSITIVE_MODES:
            raise ValueError(f"positives must be one of {POSITIVE_MODES}, got {self.positives!r}.")
        if self.data_weight <= 0 or any(weight <= 0 for weight in self.data_mix.values()):
            raise ValueError("data_weight and every data_mix weight must be > 0.")
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}.")
        if self.hard_negatives < 0 or self.max_windows_per_example < 1:
            raise ValueError("hard_negatives must be >= 0 and max_windows_per_example >= 1.")
        if self.mntp_weight < 0 or not 0 < self.mntp_probability < 1:
            raise ValueError("mntp_weight must be >= 0 and mntp_probability in (0, 1).")
        if self.train_special_tokens and not self.cse.use_special_tokens:
            raise ValueError("train_special_tokens needs cse.use_special_tokens: true.")
        if self.cse.adapter_dir or self.cse.weights_dir or self.cse.extra_embeddings:
            raise ValueError("cse.adapter_dir / weights_dir / extra_embeddings describe a trained checkpoint; "
                             "leave them unset in a training config (training writes them).")

    def check_paths(self) -> None:
        """Fail before any model loads when the data is missing."""
        for path in [self.data_path, *self.data_mix]:
            if not Path(path).is_file():
                raise FileNotFoundError(f"MCQR data {path} not found; run training.curation first (python -m "
                                        "training.curation --config training/configs/curation_qa_train.yaml).")


@dataclass
class CSEExample:
    """Encoder inputs for one question: its own windows and the sentences to read from them.

    Attributes:
        question_ids: ``prefix + question + <end_of_question> + suffix`` exactly as inference builds it.
        windows: Context windows (token ids) from ``plan_windows``.
        slots: ``(window, token_start, token_end, marker_pos)`` of the positive first, then hard negatives.
    """

    question_ids: list[int]
    windows: list[list[int]]
    slots: list[tuple[int, int, int, int]]


def load_mcqr(path: str | Path, max_examples: int | None = None) -> list[dict[str, Any]]:
    """MCQR records usable for contrastive training (at least one positive and one negative in range)."""
    records = []
    for position, record in enumerate(read_jsonl(path)):
        count = len(record.get("sentences", []))
        positives = [i for i in record.get("positives", []) if 0 <= i < count]
        negatives = [i for i in record.get("negatives", []) if 0 <= i < count and i not in positives]
        if record.get("question", "").strip() and positives and negatives:
            records.append({**record, "positives": positives, "negatives": negatives,
                            "group": str(record.get("id") or f"record-{position}")})
        if max_examples is not None and len(records) >= max_examples:
            break
    if not records:
        raise ValueError(f"{path} has no MCQR record with a question, a positive and a negative.")
    return records


def source_sample_id(record: dict[str, Any]) -> str:
    """The qa_dev sample an MCQR record was curated from (its id without the ``:mcqr`` suffix)."""
    return str(record["group"]).removesuffix(":mcqr")


def split_validation(records: Sequence[dict[str, Any]],
                     fraction: float) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(training, held_out)``: a record is held out when the hash of its sample id falls below ``fraction``.

    The split depends on the ids only (not on file order, seeds or other settings), so runs that differ in
    anything else are compared on the same held-out samples.
    """
    training: list[dict[str, Any]] = []
    held_out: list[dict[str, Any]] = []
    for record in records:
        digest = hashlib.sha256(source_sample_id(record).encode("utf-8")).hexdigest()
        (held_out if int(digest[:8], 16) / 0x1_0000_0000 < fraction else training).append(record)
    if not training:
        raise ValueError(f"validation_fraction={fraction} leaves no training record.")
    return training, held_out


def weighted(records: Sequence[dict[str, Any]], weight: float) -> list[dict[str, Any]]:
    """``records`` repeated ``floor(weight)`` times, plus the fraction's share picked by a hash of the id.

    Deterministic: the same records are picked whatever the order of the file or the run's seed.
    """
    whole = int(weight)
    fraction = weight - int(weight)
    picked = list(records) * whole
    for record in records:
        digest = hashlib.sha256(("mix:" + str(record["group"])).encode("utf-8")).hexdigest()
        if int(digest[:8], 16) / 0x1_0000_0000 < fraction:
            picked.append(record)
    return picked


def training_pairs(records: Sequence[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """Records as the loss sees them, by ``CSETrainConfig.positives`` mode (see there).

    Every returned record keeps its ``group`` (the source record), so pairs of one question are never
    scored as each other's negatives.
    """
    if mode == "sample":
        return list(records)
    pairs = []
    for record in records:
        if mode == "all":
            pairs.extend({**record, "positives": [p]} for p in record["positives"])
        else:
            question = set(_words(record["question"]))
            best = max(record["positives"], key=lambda i: (len(question & set(_words(record["sentences"][i]))), -i))
            pairs.append({**record, "positives": [best]})
    return pairs


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def build_example(record: dict[str, Any], encoder: Any, config: CSETrainConfig, rng: random.Random) -> CSEExample:
    """Windows and read-out slots for one MCQR record, with one sampled positive and sampled hard negatives.

    Args:
        record: An MCQR record.
        encoder: A ``tpc_core.engine.scoring.cse.ContextSentenceEncoder`` (tokenizer, frame tokens and markers come
            from it).
        config: Training settings.
        rng: Sampling source (the positive, the windows, the negatives).
    """
    from tpc_core.engine.scoring.cse import plan_windows  # lazy: loads torch

    cse = encoder.config
    sentence_ids = encoder.tokenize(record["sentences"])
    windows, owner = plan_windows(sentence_ids, max_window_tokens=cse.max_window_tokens,
                                  overlap_tokens=cse.window_overlap_tokens, prefix=encoder.prefix,
                                  suffix=encoder.suffix, marker_id=encoder.sentence_marker)
    positive = rng.choice(record["positives"])
    other_windows = sorted({owner[i] for i in record["negatives"]} - {owner[positive]})
    rng.shuffle(other_windows)
    chosen = [owner[positive], *other_windows][: config.max_windows_per_example]
    pool = [i for i in record["negatives"] if owner[i] in chosen]
    negatives = rng.sample(pool, min(config.hard_negatives, len(pool)))
    local = {window: position for position, window in enumerate(chosen)}
    slots = []
    for sentence in [positive, *negatives]:
        window = windows[owner[sentence]]
        slot = next(s for s in window.slots if s.sentence == sentence)
        slots.append((local[owner[sentence]], slot.start, slot.end, slot.marker))
    return CSEExample(encoder.question_inputs([record["question"]])[0], [windows[w].input_ids for w in chosen], slots)


def _build_module(backbone: Any, marker_ids: list[int], architecture: str, train_markers: bool) -> Any:
    import torch  # lazy: loads torch

    from tpc_core.engine.scoring.cse import bidirectional_mask  # lazy: loads torch

    class CSETrainingModel(torch.nn.Module):
        """Backbone + trainable marker rows; ``forward`` returns hidden states (and MNTP logits)."""

        def __init__(self) -> None:
            super().__init__()
            self.backbone = backbone
            weight = backbone.get_input_embeddings().weight
            rows = weight[marker_ids].detach().clone() if marker_ids else weight[:0].detach().clone()
            self.marker_rows = torch.nn.Parameter(rows.float(), requires_grad=train_markers and bool(marker_ids))
            self.marker_ids = list(marker_ids)

        def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
            embeddings = self.backbone.get_input_embeddings()(input_ids)
            for row, token_id in enumerate(self.marker_ids):
                hit = (input_ids == token_id).unsqueeze(-1)
                embeddings = torch.where(hit, self.marker_rows[row].to(embeddings.dtype), embeddings)
            return embeddings

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    predict_at: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
            mask = attention_mask if architecture == "encoder" else bidirectional_mask(attention_mask, torch.bool)
            hidden = self.backbone(inputs_embeds=self.embed(input_ids), attention_mask=mask).last_hidden_state
            logits = None
            if predict_at is not None:  # MNTP head: tied input embeddings
                picked = hidden[predict_at[:, 0], predict_at[:, 1]]
                logits = picked @ self.backbone.get_input_embeddings().weight.T
            return hidden, logits

    return CSETrainingModel()


def _pad(batch: Sequence[Sequence[int]], pad_id: int, device: Any) -> tuple[Any, Any]:
    """The engine's padding (``tpc_core.engine.scoring.cse.pad_batch``), moved to the training device."""
    from tpc_core.engine.scoring.cse import pad_batch  # lazy: loads torch

    input_ids, attention = pad_batch(batch, pad_id)
    return input_ids.to(device), attention.to(device)


def _pool_slot(hidden: Any, row: int, slot: tuple[int, int, int, int], pooling: str) -> Any:
    """The engine's sentence pooling (``tpc_core.engine.scoring.cse.pool_sentence``) for a
    ``(window, start, end, marker)`` slot."""
    from tpc_core.engine.scoring.cse import pool_sentence  # lazy: loads torch

    _, start, end, marker = slot
    return pool_sentence(hidden[row], start, end, marker, pooling)


def _pool_question(hidden: Any, row: int, length: int, suffix_len: int, pooling: str) -> Any:
    """The engine's question pooling (``tpc_core.engine.scoring.cse.pool_question``)."""
    from tpc_core.engine.scoring.cse import pool_question  # lazy: loads torch

    return pool_question(hidden[row], length, suffix_len, pooling)


class CSELoss:
    """Contrastive + MNTP loss of one micro-batch of MCQR records (see module docstring)."""

    def __init__(self, encoder: Any, config: CSETrainConfig, architecture: str, device: Any) -> None:
        self.encoder = encoder
        self.config = config
        self.architecture = architecture
        self.device = device
        self.pad_id = encoder.tokenizer.pad_token_id or 0
        tokenizer = encoder.tokenizer
        self.mask_id = tokenizer.mask_token_id if tokenizer.mask_token_id is not None else (
            tokenizer.unk_token_id if tokenizer.unk_token_id is not None else self.pad_id)
        self.calls = 0

    def __call__(self, model: Any, records: list[dict[str, Any]]) -> tuple[Any, dict[str, float]]:
        import torch  # lazy: loads torch
        import torch.nn.functional as F  # lazy: loads torch

        rng = random.Random(self.config.train.seed * 1_000_003 + self.calls)
        self.calls += 1
        examples = [build_example(record, self.encoder, self.config, rng) for record in records]
        pooling = self.config.cse.pooling
        suffix_len = len(self.encoder.suffix)
        questions = [e.question_ids for e in examples]
        windows = [w for e in examples for w in e.windows]
        inputs = questions + windows
        hidden, _ = model(*_pad(inputs, self.pad_id, self.device))
        hidden = hidden.float()
        q = torch.stack([_pool_question(hidden, i, len(ids), suffix_len, pooling) for i, ids in enumerate(questions)])
        candidates = []
        owner = []
        first = len(questions)
        groups = [record.get("group") for record in records]
        positive_index = []
        for index, example in enumerate(examples):
            positive_index.append(len(candidates))
            for slot in example.slots:
                candidates.append(_pool_slot(hidden, first + slot[0], slot, pooling))
                owner.append(index)
            first += len(example.windows)
        q = F.normalize(q, dim=-1)
        c = F.normalize(torch.stack(candidates), dim=-1)
        logits = q @ c.T / self.config.temperature
        own = torch.tensor(owner, device=logits.device)[None, :] == torch.arange(len(examples),
                                                                                  device=logits.device)[:, None]
        if not self.config.in_batch_negatives:
            logits = logits.masked_fill(~own, float("-inf"))
        else:  # another pair of the same question: its candidates may be relevant, never negatives
            ids = {group: index for index, group in enumerate(dict.fromkeys(groups))}
            row_group = torch.tensor([ids[g] if g is not None else -1 - i for i, g in enumerate(groups)],
                                     device=logits.device)
            same_group = row_group[:, None] == row_group[torch.tensor(owner, device=logits.device)][None, :]
            logits = logits.masked_fill(same_group & ~own, float("-inf"))
        target = torch.tensor(positive_index, device=logits.device)
        contrastive = F.cross_entropy(logits, target)
        accuracy = float((logits.argmax(dim=-1) == target).float().mean())
        metrics = {"contrastive": float(contrastive.detach()), "accuracy": accuracy}
        loss = contrastive
        if self.config.mntp_weight > 0:
            mntp = self._mntp(model, windows[: self.config.mntp_max_windows], rng)
            metrics["mntp"] = float(mntp.detach())
            loss = loss + self.config.mntp_weight * mntp
        return loss, metrics

    def _mntp(self, model: Any, windows: list[list[int]], rng: random.Random) -> Any:
        import torch  # lazy: loads torch
        import torch.nn.functional as F  # lazy: loads torch

        special = {*self.encoder.prefix, *self.encoder.suffix, self.pad_id}
        special.update(m for m in (self.encoder.sentence_marker, self.encoder.question_marker) if m is not None)
        shift = 1 if self.architecture == "decoder" else 0
        masked = []
        positions = []
        labels = []
        for ids in windows:
            content = [i for i in range(shift, len(ids)) if ids[i] not in special]
            if not content:
                continue
            picked = [i for i in content if rng.random() < self.config.mntp_probability] or [rng.choice(content)]
            copy = list(ids)
            for i in picked:
                copy[i] = self.mask_id
                positions.append((len(masked), i - shift))
                labels.append(ids[i])
            masked.append(copy)
        input_ids, attention = _pad(masked, self.pad_id, self.device)
        where = torch.tensor(positions, dtype=torch.long, device=self.device)
        _, logits = model(input_ids, attention, where)
        return F.cross_entropy(logits.float(), torch.tensor(labels, device=self.device))


def train_cse(config: CSETrainConfig) -> Path:
    """Run CSE training and write a CSE-only TPC checkpoint into ``config.output_dir``; returns it."""
    import torch  # lazy: loads torch
    from accelerate import Accelerator  # lazy: loads torch

    from tpc_core.engine.scoring.cse import ContextSentenceEncoder  # lazy: loads torch
    from tpc_core.loading.checkpoint import HubOptions, load_cse_parts  # lazy: loads torch

    config.check_paths()
    started = time.perf_counter()
    source_records, held_out = split_validation(load_mcqr(config.data_path, config.max_examples),
                                                config.validation_fraction)
    mixed = weighted(source_records, config.data_weight)
    sources = {config.data_path: len(mixed)}
    for path, weight in config.data_mix.items():
        extra = weighted(load_mcqr(path, config.max_examples), weight)
        sources[path] = len(extra)
        mixed.extend(extra)
    records = training_pairs(mixed, config.positives)
    if held_out:
        output = Path(config.output_dir)
        output.mkdir(parents=True, exist_ok=True)
        (output / "validation_ids.json").write_text(
            json.dumps(sorted(source_sample_id(r) for r in held_out), indent=1) + "\n", encoding="utf-8")
        logger.info("CSE: %d records held out for validation (%s/validation_ids.json)", len(held_out), output)
    accelerator = Accelerator(mixed_precision=config.train.mixed_precision)
    torch.manual_seed(config.train.seed)
    options = HubOptions(local_files_only=config.local_files_only, confine_paths=False)  # the user's own config
    dtype = weights_dtype(config.train) if config.lora.enabled else torch.float32
    backbone, tokenizer, architecture = load_cse_parts(config.cse, Path.cwd(), options, accelerator.device, dtype)
    encoder = ContextSentenceEncoder(backbone, tokenizer, config.cse, architecture, accelerator.device)
    marker_ids = [m for m in (encoder.sentence_marker, encoder.question_marker) if m is not None]
    backbone.requires_grad_(not config.lora.enabled)
    backbone = apply_lora(backbone, config.lora)
    module = _build_module(backbone, marker_ids, architecture, config.train_special_tokens)
    trainable = [p for n, p in module.named_parameters() if p.requires_grad and n != "marker_rows"]
    groups: list[dict[str, Any]] = [{"params": trainable}]
    if module.marker_rows.requires_grad:
        groups.append({"params": [module.marker_rows], "weight_decay": 0.0})
    logger.info("CSE: %s (%s), %d records -> %d training pairs (positives=%s), %d trainable parameters",
                config.cse.base_model, architecture, len(source_records), len(records), config.positives,
                sum(p.numel() for g in groups for p in g["params"]))
    loss_fn = CSELoss(encoder, config, architecture, accelerator.device)
    result = train_loop(module, groups, records, loss_fn, config.train, config.output_dir, accelerator=accelerator)
    if accelerator.is_main_process:
        _save(accelerator.unwrap_model(module), tokenizer, config, Path(config.output_dir), {
            "records": len(source_records), "held_out_records": len(held_out), "pairs": len(records),
            "records_per_epoch_by_file": sources,
            "data_mix": {path: _data_facts(path) for path in config.data_mix},
            "positives": config.positives,
            "steps": result.steps, "resumed_from_step": result.resumed_from,
            "first_loss": result.losses[0] if result.losses else None,
            "last_loss": result.losses[-1] if result.losses else None,
            "train_seconds": round(result.seconds, 1), "total_seconds": round(time.perf_counter() - started, 1),
            "processes": accelerator.num_processes, "architecture": architecture})
    accelerator.wait_for_everyone()
    return Path(config.output_dir)


def _save(module: Any, tokenizer: Any, config: CSETrainConfig, output: Path, facts: dict[str, Any]) -> None:
    from safetensors.torch import save_file  # lazy: loads torch

    cse = replace(config.cse)
    if config.lora.enabled:
        module.backbone.save_pretrained(str(output / ADAPTER_DIR), save_embedding_layers=False)
        cse.adapter_dir = ADAPTER_DIR
    else:  # full fine-tuning: the marker rows go into the saved embedding matrix
        import torch  # lazy: loads torch

        with torch.no_grad():
            weight = module.backbone.get_input_embeddings().weight
            for row, token_id in enumerate(module.marker_ids):
                weight[token_id] = module.marker_rows[row].to(weight.dtype)
        module.backbone.save_pretrained(str(output / WEIGHTS_DIR), safe_serialization=True)
        tokenizer.save_pretrained(str(output / WEIGHTS_DIR))
        cse.weights_dir = WEIGHTS_DIR
    if config.lora.enabled and module.marker_ids:
        tokens = [t for t in (config.cse.end_of_sentence_token, config.cse.end_of_question_token)
                  if tokenizer.convert_tokens_to_ids(t) in module.marker_ids]
        rows = {t: module.marker_rows[module.marker_ids.index(tokenizer.convert_tokens_to_ids(t))].detach().cpu()
                .contiguous() for t in tokens}
        save_file(rows, str(output / EXTRA_EMBEDDINGS))
        cse.extra_embeddings = EXTRA_EMBEDDINGS
    TPCConfig(cse=cse, ctd=None, name=Path(output).name, trained=True).save(output)
    summary = {"stage": "cse_train", "config": json.loads(json.dumps(asdict(config), default=str)),
               "data": {"path": config.data_path, **_data_facts(config.data_path)}, **facts,
               "command": " ".join(["python", "-m", "training.cse_train", *sys.argv[1:]])}
    (output / "cse_train_summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    logger.info("CSE checkpoint written to %s", output)


def _data_facts(path: str) -> dict[str, Any]:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    return {"sha256_16": digest, "records": sum(1 for _ in read_jsonl(path))}


main = stage_main("training.cse_train", "cse_train", CSETrainConfig, train_cse,
                  "Train the context-aware sentence encoder (paper Section 3.4).")


if __name__ == "__main__":
    sys.exit(main())
