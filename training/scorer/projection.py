"""Experiment 4: a trained late-interaction projection (a linear map on the CSE's token states).

The CSE stays frozen and question-free; only ``W`` (d x d, initialised to the identity, so step 0 is the
zero-shot MaxSim) is trained, contrastively: for an NQ question, its gold supporting sentences against
hard negatives from the same prompt (the 15 sentences the zero-shot MaxSim ranks highest that are not gold:
other sentences of the gold passage and of the BM25-hard distractor passages) plus 8 random ones.

``python -m training.scorer.projection encode --questions 300``  (token states cached per chunk, resumable)
``python -m training.scorer.projection train --steps 300``       (checkpoints every 50 steps, resumable)
``python -m training.scorer.projection record --ids IDS.json``   (adds the ``maxsim_proj`` component to the
compare cache, so ``python -m training.scorer.compare`` reports it)

Note: tpc-mini's CSE was trained on all 2,323 nq_train questions, so the states here are of questions the
encoder has seen; choices are still made on the held-out qa_dev train records only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.protocol.budget import budget_for
from data_access.loaders import load_qa_dev
from data_access.paths import data_file
from data_access.tokens import minilm_token_counter
from synthesis.templates import instruction_query
from tpc_core import TPCCompressor
from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.reading import segment
from tpc_core.engine.tokens import resolve_token_counter
from training.common.cli import start_cli
from training.evaluate import select_samples
from training.scorer.late import content_token_mask, maxsim, question_token_states
from training.scorer.scorers import ComponentScorer, embed_with_tokens, record_key

__all__ = ["gold_mask", "identity_projection", "multi_positive_nce", "main"]

logger = logging.getLogger(__name__)
NQ = data_file("nq_train.jsonl.gz")


def identity_projection(dim: int) -> torch.nn.Linear:
    """``Linear(dim, dim, bias=False)`` starting at the identity (zero-shot MaxSim at step 0)."""
    layer = torch.nn.Linear(dim, dim, bias=False)
    with torch.no_grad():
        layer.weight.copy_(torch.eye(dim))
    return layer


def gold_mask(sentences: Sequence[str], supporting: Sequence[str]) -> list[bool]:
    """True for a sentence that is, contains, or is contained in a gold supporting sentence (whitespace-normalised)."""
    gold = [" ".join(s.split()) for s in supporting if s.strip()]
    out = []
    for sentence in sentences:
        text = " ".join(sentence.split())
        out.append(bool(text) and any(text == g or g in text or (len(text) > 20 and text in g) for g in gold))
    return out


def multi_positive_nce(scores: torch.Tensor, positive: torch.Tensor, temperature: float = 0.05) -> torch.Tensor:
    """``-log(sum_pos exp(s/t) / sum_all exp(s/t))`` for one question's candidate scores."""
    logits = scores / temperature
    return torch.logsumexp(logits, 0) - torch.logsumexp(logits[positive], 0)


def _compressor() -> Any:
    return TPCCompressor.from_pretrained("tpc-mini", device="cpu")


def encode(questions: int, out: Path, chunk: int = 25, seed: int = 7) -> None:
    """Cache question / candidate-sentence token states (float16) for the first ``questions`` NQ rows."""
    compressor = _compressor()
    encoder = compressor.encoder
    counter = resolve_token_counter(minilm_token_counter())
    rows = []
    with gzip.open(NQ, "rt", encoding="utf-8") as handle:
        for line in handle:
            rows.append(json.loads(line))
            if len(rows) >= questions:
                break
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for first in range(0, len(rows), chunk):
        path = out / f"chunk_{first:05d}.pt"
        if path.exists():
            continue
        items = []
        for row in rows[first: first + chunk]:
            prompt = segment((row["context"],), compressor.splitter(), counter, CompressionOptions.build(rate=0.2))
            gold = gold_mask(prompt.sentences, row["supporting_sentences"])
            if not any(gold):
                continue
            _, states = embed_with_tokens(encoder, [prompt])
            q_states, q_ids = question_token_states(encoder, [row["question"]])[0]
            q_states = q_states[content_token_mask(encoder.tokenizer, q_ids)]
            zero_shot = maxsim(q_states, states[0])
            negatives = [i for i in zero_shot.argsort(descending=True).tolist() if not gold[i]]
            rest = negatives[15:]
            chosen = negatives[:15] + rng.sample(rest, min(8, len(rest)))
            positives = [i for i, g in enumerate(gold) if g]
            items.append({"id": row["id"], "question": q_states.half(),
                          "sentences": [states[0][i].half() for i in positives + chosen],
                          "positive": torch.tensor([True] * len(positives) + [False] * len(chosen))})
        torch.save(items, path)
        logger.info("encoded %d/%d", min(first + chunk, len(rows)), len(rows))


def _load(directory: Path) -> list[dict[str, Any]]:
    return [item for path in sorted(directory.glob("chunk_*.pt")) for item in torch.load(path)]


def _rank_metrics(projection: torch.nn.Module | None, items: Sequence[dict[str, Any]]) -> dict[str, float]:
    top1 = []
    mrr = []
    with torch.no_grad():
        for item in items:
            scores = maxsim(item["question"].float(), [s.float() for s in item["sentences"]], projection)
            order = scores.argsort(descending=True).tolist()
            first = next(rank for rank, i in enumerate(order, 1) if item["positive"][i])
            top1.append(float(first == 1))
            mrr.append(1.0 / first)
    return {"top1": round(sum(top1) / len(top1), 4), "mrr": round(sum(mrr) / len(mrr), 4), "questions": len(items)}


def train(states: Path, out: Path, *, steps: int = 300, batch: int = 8, lr: float = 5e-4,
          temperature: float = 0.05, validation: float = 0.15, seed: int = 13) -> dict[str, Any]:
    """Train the projection; the last ``validation`` share of the encoded questions is held out (rank metrics)."""
    items = _load(states)
    cut = int(len(items) * (1 - validation))
    fit = items[:cut]
    held = items[cut:]
    torch.manual_seed(seed)
    projection = identity_projection(fit[0]["question"].shape[-1])
    optimiser = torch.optim.Adam(projection.parameters(), lr=lr)
    out.mkdir(parents=True, exist_ok=True)
    start = 0
    log = []
    checkpoints = sorted(out.glob("step_*.pt"))
    if checkpoints:
        state = torch.load(checkpoints[-1])
        projection.load_state_dict(state["projection"])
        optimiser.load_state_dict(state["optimiser"])
        start = state["step"]
        log = state["log"]
    before = _rank_metrics(None, held)
    rng = random.Random(seed + start)
    for step in range(start + 1, steps + 1):
        losses = [multi_positive_nce(maxsim(item["question"].float(), [s.float() for s in item["sentences"]],
                                            projection), item["positive"], temperature)
                  for item in rng.sample(fit, min(batch, len(fit)))]
        loss = torch.stack(losses).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        log.append(round(float(loss), 4))
        if step % 50 == 0 or step == steps:
            torch.save({"projection": projection.state_dict(), "optimiser": optimiser.state_dict(), "step": step,
                        "log": log}, out / f"step_{step:05d}.pt")
            logger.info("step %d loss %.4f (mean of last 50 %.4f)", step, float(loss), sum(log[-50:]) / len(log[-50:]))
    torch.save(projection.state_dict(), out / "projection.pt")
    summary = {"fit_questions": len(fit), "held_questions": len(held), "steps": steps, "batch": batch, "lr": lr,
               "temperature": temperature, "first_loss": log[0] if log else None, "last50_loss":
               round(sum(log[-50:]) / max(len(log[-50:]), 1), 4), "held_zero_shot": before,
               "held_trained": _rank_metrics(projection, held)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    logger.info("%s", summary)
    return summary


def record(ids_path: str, projection_path: Path, cache: Path) -> None:
    """Add ``maxsim_proj`` to every recorded prompt of the compare cache (one CSE pass over the samples)."""
    compressor = _compressor()
    encoder = compressor.encoder
    counter = minilm_token_counter()
    projection = identity_projection(encoder.model.config.hidden_size)
    projection.load_state_dict(torch.load(projection_path))
    records = torch.load(cache / "components.pt")
    ids = json.loads(Path(ids_path).read_text(encoding="utf-8"))

    class Recorder(ComponentScorer):
        def relevance(self, prompts, embeddings, descriptions):
            out = []
            for prompt, pooled, description in zip(prompts, embeddings, descriptions):
                q_states, q_ids = question_token_states(encoder, [description])[0]
                with torch.no_grad():
                    score = maxsim(q_states[content_token_mask(encoder.tokenizer, q_ids)], self.token_states_of(prompt),
                                   projection)
                records[record_key(prompt, description)]["components"]["maxsim_proj"] = score
                out.append(pooled @ encoder.encode_questions([description])[0])
            return out

    compressor.scorer = Recorder(encoder)
    for sample in select_samples(load_qa_dev(None, split="train"), ids):
        budget = budget_for(counter(sample.context), rate=0.2)
        compressor.compress(sample.context, question=instruction_query(sample.template, sample.question),
                            target_tokens=max(budget, 1), token_counter=counter)
    torch.save(records, cache / "components.pt")


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point (``python -m training.scorer.projection {encode,train,record}``)."""
    parser = argparse.ArgumentParser(prog="python -m training.scorer.projection", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("encode")
    p.add_argument("--questions", type=int, default=300)
    p.add_argument("--out", default="runs/scorer/nq_states")
    p = sub.add_parser("train")
    p.add_argument("--states", default="runs/scorer/nq_states")
    p.add_argument("--out", default="runs/scorer/projection")
    p.add_argument("--steps", type=int, default=300)
    p = sub.add_parser("record")
    p.add_argument("--ids", required=True)
    p.add_argument("--projection", default="runs/scorer/projection/projection.pt")
    p.add_argument("--cache", default="runs/scorer")
    args = parser.parse_args(argv)
    start_cli(threads=1)
    started = time.perf_counter()
    if args.command == "encode":
        encode(args.questions, Path(args.out))
    elif args.command == "train":
        train(Path(args.states), Path(args.out), steps=args.steps)
    else:
        record(args.ids, Path(args.projection), Path(args.cache))
    logger.info("%s took %.0fs", args.command, time.perf_counter() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
