"""Stage 4b: train the extractive request head on the CSE that ships (``tpc_core.engine.task.request_sequence``).

``python -m training.request_head --config training/configs/tpc-mini.yaml [--set key=value ...]``

Data: the multi-format CTD set (``python -m training.curation.formats``). Every record knows where its
request is written (``request_spans``; empty for a summary, a bare document, code completion ...). Each
prompt is split with the checkpoint's splitter and encoded with the trained CSE through the public
``tpc_core`` API, exactly as compression does; a sentence is a positive when it overlaps a request span.

The structural head (:mod:`training.request_sequence`; ``model: sequence``, the kind a checkpoint ships) over
``[embedding, layout features]`` is fitted on the ``train`` families (class weights balance the rare request
sentences). The threshold is chosen on a slice of the train families held out by record id
(``threshold_fraction``); the held-out template families (``split == "validation"``) are only measured. Output:
``request_head.safetensors`` and ``request_head_summary.json`` in ``output_dir``; ``training.export`` copies the
head into the checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from data_access.paths import data_file
from synthesis.instructions import request_of
from tpc_core.segmentation import get_splitter
from training.common.jsonl import read_jsonl
from training.common.loop import stage_main
from training.curation.format_tasks import load_format_inputs, text_pools
from training.curation.layouts import layout_records, records_digest
from training.request_sequence import SequenceFitSettings, fit_sequence_head

__all__ = ["RequestHeadConfig", "EncodedPrompt", "head_and_tail", "held_for_threshold", "label_sentences",
           "prompt_scores", "train_request_head", "main"]

logger = logging.getLogger(__name__)
HEAD_FILE = "request_head.safetensors"
SUMMARY_FILE = "request_head_summary.json"


@dataclass
class RequestHeadConfig:
    """Request-head settings (the ``request_head:`` section of a recipe).

    Attributes:
        data_path: CTD JSONL with ``request_spans``, ``family``, ``kind`` and ``split``.
        cse_checkpoint: The CSE the head reads (a ``training.cse_train`` run or any TPC checkpoint).
        output_dir: Where the head and its summary go.
        max_train_records: Train records used (spread evenly over the file; ``None``: all).
        max_validation_records: Held-out-family records measured (``None``: all).
        threshold_fraction: Share of the train records (by id hash) kept out of fitting to choose the threshold.
        max_sentences: Sentences an extracted request may have (``agnostic.max_request_sentences``).
        view_sentences: A prompt longer than this many sentences is seen as its first and last halves of it
            (the layout features count positions from either end, capped, so they mean the same there); the
            middle of a long prompt is context like the rest, and encoding it would only cost time.
        seed: Initialisation seed (and the sequence model's shuffling seed).
        local_files_only: Never contact the Hub for base models.
        layout_records: Extra train prompts in the layout families (``training.curation.layouts``: requests
            under a heading, as a quoted value, alone in prose), filled with the questions of the CTD set's
            train rows; 0 for none.
        layout_without_request: Extra train prompts with no written request (summaries, bare documents) in
            the same shells, so a line's place in a shell is not taken for a request by itself.
        layout_key_lookups: Extra train key lookups (synthetic JSON) in the layout shells.
        nq_path: NQ rows the layout records are drawn from (those of the CTD set's train records only).
        qa_path: ``qa_dev.jsonl`` (its train rows, as the CTD set uses them).
        instruction_path: Records of ``training.curation.instruction_set`` (requests written as instructions,
            numbered items, true/false statements, two sentences, multiple-choice stems, in four prompt shapes):
            ``role == "fit"`` ones join the train prompts, ``role == "check"`` ones (held-out families, and the
            train families on other rows) are only measured, per family and shape. ``None``: none.
        layout_set_path: Records of ``training.curation.layout_set`` (the same QA rows written in chat templates,
            markdown / XML / JSON / e-mail / ticket shells, requests before, between and after the material),
            used like ``instruction_path``'s: ``fit`` rows in the seen layouts join the train prompts,
            ``check`` rows (every layout, held-out ones included) are only measured. ``None``: none.
        baseline_head: A head file measured on the same encoded prompts for comparison (e.g. the one that
            ships before retraining), or ``None``.
        baseline_threshold: The threshold the baseline head is measured at (its checkpoint's
            ``agnostic.request_threshold``).
        model: ``"sequence"`` (the structural finder over the prompt's sentences,
            :class:`tpc_core.engine.task.request_sequence.SequenceRequestHead`, fitted by
            :mod:`training.request_sequence` with the ``sequence_*`` settings: the kind a checkpoint ships), the
            one model this stage fits.
        sequence_width: The sequence model's width.
        sequence_layers: Its self-attention layers.
        sequence_window: Sentences it reads at once.
        sequence_epochs: Its training epochs.
        sequence_learning_rate: Its peak learning rate.
        sequence_dropout: Its dropout.
        generated_set_path: Records of ``training.curation.generated_set`` (prompts composed from random parts;
            ``fit`` ones join the train prompts, ``check`` ones are measured per component), or ``None``.
        encoded_dir: Where encoded prompts are cached (``None``: ``output_dir/encoded``); runs that share it
            (another head type, other settings) encode each prompt once.
    """

    data_path: str
    cse_checkpoint: str
    output_dir: str
    max_train_records: int | None = None
    max_validation_records: int | None = None
    threshold_fraction: float = 0.2
    max_sentences: int = 8
    view_sentences: int = 64
    seed: int = 13
    local_files_only: bool = False
    layout_records: int = 0
    layout_without_request: int = 0
    layout_key_lookups: int = 0
    nq_path: str = field(default_factory=lambda: str(data_file("nq_train.jsonl.gz")))
    qa_path: str = field(default_factory=lambda: str(data_file("qa_dev.jsonl")))
    instruction_path: str | None = None
    layout_set_path: str | None = None
    baseline_head: str | None = None
    baseline_threshold: float = 0.7
    model: str = "sequence"
    sequence_width: int = 64
    sequence_layers: int = 2
    sequence_window: int = 64
    sequence_epochs: int = 30
    sequence_learning_rate: float = 2e-3
    sequence_dropout: float = 0.1
    generated_set_path: str | None = None
    encoded_dir: str | None = None

    def __post_init__(self) -> None:
        if not 0 < self.threshold_fraction < 1:
            raise ValueError(f"threshold_fraction must be in (0, 1), got {self.threshold_fraction}.")
        if self.max_sentences < 1 or self.view_sentences < 2:
            raise ValueError("max_sentences must be >= 1 and view_sentences >= 2.")
        if self.model != "sequence":
            raise ValueError(f"model must be 'sequence' (the structural request head), got {self.model!r}.")
        if min(self.layout_records, self.layout_without_request, self.layout_key_lookups) < 0:
            raise ValueError("layout_records, layout_without_request and layout_key_lookups must be >= 0.")

    @property
    def uses_layouts(self) -> bool:
        """Whether any layout-shell prompts are asked for (they need ``nq_path`` and ``qa_path``)."""
        return bool(self.layout_records or self.layout_without_request or self.layout_key_lookups)

    def check_paths(self) -> None:
        """Fail before any model loads when the data is missing."""
        if not Path(self.data_path).is_file():
            raise FileNotFoundError(f"data_path {self.data_path} not found; run python -m training.curation.formats "
                                    "--out runs/curation/ctd_formats first.")
        for path in (self.nq_path, self.qa_path) if self.uses_layouts else ():
            if not Path(path).is_file():
                raise FileNotFoundError(f"{path} not found (needed for the layout_* prompts).")
        for path in (self.instruction_path, self.layout_set_path, self.generated_set_path, self.baseline_head):
            if path is not None and not Path(path).is_file():
                raise FileNotFoundError(f"{path} not found (instruction_path: run python -m "
                                        "training.curation.instruction_set first).")


@dataclass
class EncodedPrompt:
    """One prompt as the head sees it: its sentences, their CSE embeddings and request labels."""

    record_id: str
    family: str
    kind: str
    sentences: list[str]
    embeddings: Any
    labels: list[bool]


def label_sentences(spans: Sequence[tuple[int, int]], request_spans: Sequence[Sequence[int]]) -> list[bool]:
    """Whether each sentence span overlaps any request span (character offsets in the same prompt)."""
    return [any(start < r_end and r_start < end for r_start, r_end in request_spans) for start, end in spans]


def head_and_tail(count: int, view: int, keep: Sequence[int] = (), around: int = 3) -> list[int]:
    """Indices of the sentences a training view keeps: all of them, or the first and last ``view // 2``, and
    every index in ``keep`` with ``around`` sentences either side (a request written in the middle of a long
    prompt stays in its view, with its neighbours, so its label is seen)."""
    if count <= view:
        return list(range(count))
    chosen = {*range(view // 2), *range(count - (view - view // 2), count)}
    for index in keep:
        chosen.update(range(max(0, index - around), min(count, index + around + 1)))
    return sorted(chosen)


def _view(record: dict[str, Any], splitter: Any, view: int) -> list[tuple[int, int]]:
    """The sentence spans of a record's prompt that a training view keeps (its request sentences always)."""
    spans = splitter.spans(record["prompt"])
    labels = label_sentences(spans, record.get("request_spans") or [])
    return [spans[i] for i in head_and_tail(len(spans), view, [i for i, label in enumerate(labels) if label])]


def _encode_one(record: dict[str, Any], spans: list[tuple[int, int]], compressor: Any) -> EncodedPrompt:
    sentences = [record["prompt"][s:e] for s, e in spans]
    matrix = compressor.encoder.encode_contexts([compressor.encoder.tokenize(sentences)])[0]
    return EncodedPrompt(str(record["id"]), str(record["family"]), str(record["kind"]), sentences, matrix,
                         label_sentences(spans, record.get("request_spans") or []))


def _read_caches(stem: Path, meta: Path) -> dict[str, EncodedPrompt]:
    """Every cached prompt of ``stem``, by record id.

    Every cache of this stem is read (``meta``'s last): a record set that grew reuses the prompts encoded for
    the old one; the caller reuses a prompt only where its sentences are still the same.
    """
    from safetensors.torch import load_file  # lazy: loads torch

    cached: dict[str, EncodedPrompt] = {}
    for other in sorted(stem.parent.glob(f"{stem.name}.*.json"), key=lambda path: path == meta):
        if not other.with_suffix(".safetensors").is_file():
            continue
        matrix = load_file(str(other.with_suffix(".safetensors")))["embeddings"]
        start = 0
        for row in json.loads(other.read_text(encoding="utf-8")):
            count = len(row["sentences"])
            cached[row["record_id"]] = EncodedPrompt(row["record_id"], row["family"], row["kind"], row["sentences"],
                                                     matrix[start: start + count], row["labels"])
            start += count
    return cached


def _save_cache(tensors: Path, meta: Path, prompts: list[EncodedPrompt]) -> None:
    """Write ``prompts``: their embeddings, stacked, to ``tensors``, the rest to ``meta``."""
    import torch  # lazy: loads torch
    from safetensors.torch import save_file  # lazy: loads torch

    tensors.parent.mkdir(parents=True, exist_ok=True)
    save_file({"embeddings": torch.cat([p.embeddings for p in prompts]).contiguous()}, str(tensors))
    meta.write_text(json.dumps([{"record_id": p.record_id, "family": p.family, "kind": p.kind,
                                 "sentences": p.sentences, "labels": p.labels} for p in prompts]),
                    encoding="utf-8")


def _cached(stem: Path, records: Sequence[dict[str, Any]], compressor: Any, view: int) -> list[EncodedPrompt]:
    """The records encoded by the CSE, cached in ``stem.<key>.safetensors`` (embeddings) and ``.json`` (the rest).

    The key is the record ids, the CSE checkpoint and the view. A cached prompt is reused only when the
    checkpoint's splitter still gives the same sentences (the splitter may have changed since); the others
    are encoded again and the cache rewritten. Re-running the stage with other head settings (the ``sequence_*`` ones)
    then skips the encoding.
    """
    if not records:
        return []
    splitter = get_splitter(compressor.config.splitter)
    key = hashlib.sha256(json.dumps([[str(r["id"]) for r in records], str(compressor.checkpoint_dir), view])
                         .encode("utf-8")).hexdigest()[:16]
    tensors = stem.with_suffix(f".{key}.safetensors")
    meta = stem.with_suffix(f".{key}.json")
    cached = _read_caches(stem, meta)
    encoded: list[EncodedPrompt] = []
    fresh = 0
    for record in records:
        spans = _view(record, splitter, view)
        if not spans:
            continue
        hit = cached.get(str(record["id"]))
        if hit is None or hit.sentences != [record["prompt"][s:e] for s, e in spans]:  # the splitter changed
            hit = _encode_one(record, spans, compressor)
            fresh += 1
            if fresh % 100 == 0:  # a partial cache: an interrupted run resumes from here
                logger.info("%s: encoded %d prompts", stem.name, fresh)
                _save_cache(tensors, meta, [*encoded, hit])
        encoded.append(hit)
    if fresh or not tensors.is_file():
        logger.info("%s: %d of %d prompts encoded, %d from the cache", stem.name, fresh, len(encoded),
                    len(encoded) - fresh)
        _save_cache(tensors, meta, encoded)
    return encoded


def prompt_scores(prompts: Sequence[EncodedPrompt], head: Any, threshold: float, max_sentences: int,
                  neighbour_threshold: float | None = None) -> dict[str, Any]:
    """Prompt-level quality of the head at ``threshold``.

    ``request_found``: share of prompts with a written request where a request was found; ``exact``: share of
    those whose picked sentences are exactly the labelled ones; ``jaccard``: mean overlap of picked and
    labelled sentences; ``no_request_kept_empty``: share of prompts with no written request where nothing
    was picked (they go to the CTD); ``score``: the mean of jaccard and no_request_kept_empty.
    """
    from tpc_core.engine.task.request.text import pick_request  # lazy: loads torch

    with_request = 0
    without = 0
    found = 0
    exact = 0
    jaccard = 0.0
    kept_empty = 0
    for prompt in prompts:
        picked = set(pick_request(head.probabilities(prompt.embeddings, prompt.sentences), threshold, max_sentences,
                                  neighbour_threshold))
        truth = {i for i, label in enumerate(prompt.labels) if label}
        if truth:
            with_request += 1
            found += bool(picked)
            exact += picked == truth
            jaccard += len(picked & truth) / len(picked | truth)
        else:
            without += 1
            kept_empty += not picked
    result = {"prompts": len(prompts), "with_request": with_request, "without_request": without,
              "request_found": found / max(with_request, 1), "exact": exact / max(with_request, 1),
              "jaccard": jaccard / max(with_request, 1), "no_request_kept_empty": kept_empty / max(without, 1)}
    parts = [result["jaccard"]] * bool(with_request) + [result["no_request_kept_empty"]] * bool(without)
    result["score"] = sum(parts) / max(len(parts), 1)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in result.items()}


def _spread(records: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    if limit is None or limit >= len(records):
        return records
    return [records[(i * len(records)) // limit] for i in range(limit)]


def held_for_threshold(record_id: str, fraction: float) -> bool:
    """Whether a record is kept out of fitting to choose the threshold on (a stable hash of its id, ``fraction``
    of all records)."""
    digest = hashlib.sha256(("threshold:" + record_id).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) / 0x1_0000_0000 < fraction


def _layout_records(config: RequestHeadConfig, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The extra layout-shell train records (``[]`` when none are asked for)."""
    if not config.uses_layouts:
        return []

    train_ids = {str(r.get("source_id")) for r in records if r.get("split") == "train"}
    validation_ids = {str(r.get("source_id")) for r in records if r.get("split") == "validation"}
    inputs = load_format_inputs(config.nq_path, config.qa_path)
    pools = text_pools(inputs, sysconfig.get_paths()["stdlib"]) if config.layout_without_request else None
    return layout_records(inputs, train_ids - validation_ids, config.layout_records, seed=config.seed, pools=pools,
                          without_request=config.layout_without_request, key_lookups=config.layout_key_lookups)


def _instruction_records(config: RequestHeadConfig) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The instruction-style records to fit on and those only measured (``([], [])`` when none are asked for)."""
    sets = (("instructions", config.instruction_path), ("layout_set", config.layout_set_path),
            ("generated_set", config.generated_set_path))
    rows = [{**row, "record_set": name} for name, path in sets if path is not None for row in read_jsonl(path)]
    return [r for r in rows if r.get("role") == "fit"], [r for r in rows if r.get("role") == "check"]


def written_request_outcomes(prompts: Sequence[EncodedPrompt], records: Sequence[dict[str, Any]], head: Any,
                             threshold: float, max_sentences: int, neighbour: float | None = None) -> list[Any]:
    """What the head alone makes of each encoded prompt (``benchmarks.request_found`` outcomes): the extracted
    request, or ``not_extracted`` (compression would then ask the CTD)."""
    from evaluation.request_outcomes import Outcome  # lazy: loads torch
    from tpc_core.engine.task.request.text import pick_request, request_text  # lazy: loads torch

    by_id = {str(r["id"]): r for r in records}
    outcomes = []
    for prompt in prompts:
        record = by_id[prompt.record_id]
        picked = pick_request(head.probabilities(prompt.embeddings, prompt.sentences), threshold, max_sentences,
                              neighbour)
        outcomes.append(Outcome(prompt.record_id, prompt.family, str(record.get("shape", "")), request_of(record),
                                request_text(prompt.sentences, picked) if picked else "",
                                "extracted" if picked else "not_extracted"))
    return outcomes


class _Remembered:
    """A head whose probabilities are computed once per prompt (the threshold search asks many times)."""

    def __init__(self, head: Any) -> None:
        self.head = head
        self.seen = {}

    def probabilities(self, embeddings: Any, sentences: Sequence[str]) -> Any:
        key = id(embeddings)
        if key not in self.seen:
            self.seen[key] = self.head.probabilities(embeddings, sentences)
        return self.seen[key]


def _choose_thresholds(prompts: Sequence[EncodedPrompt], head: Any,
                       max_sentences: int) -> tuple[float, float | None, dict[str, Any]]:
    """The request threshold and the neighbour threshold (``pick_request``) with the best score on ``prompts``
    (the mean of request-sentence overlap and no-request prompts kept empty; ties: nearest 0.5, no neighbours)."""
    remembered = _Remembered(head)
    thresholds = [round(0.05 * step, 2) for step in range(2, 20)] + [0.97, 0.98, 0.99]
    neighbours: list[float | None] = [None, 0.5, 0.4, 0.3, 0.2, 0.1]
    scores = {(t, n): prompt_scores(prompts, remembered, t, max_sentences, n)
              for t in thresholds for n in neighbours if n is None or n < t}
    threshold, neighbour = max(scores, key=lambda k: (scores[k]["score"], -abs(k[0] - 0.5), k[1] is None,
                                                      -(k[1] or 0.0)))
    return threshold, neighbour, {"chosen": scores[(threshold, neighbour)],
                                  "no_neighbours": scores[(threshold, None)]}


def train_request_head(config: RequestHeadConfig) -> Path:
    """Fit, choose the threshold, measure the held-out families, and write the head; returns ``output_dir``."""
    from tpc_core import TPCCompressor  # lazy: loads torch

    config.check_paths()
    started = time.perf_counter()
    records = list(read_jsonl(config.data_path))
    train = _spread([r for r in records if r.get("split") == "train"], config.max_train_records)
    validation = _spread([r for r in records if r.get("split") == "validation"], config.max_validation_records)
    if not train or not validation:
        raise ValueError(f"{config.data_path} needs records of both splits (train and validation families).")
    compressor = TPCCompressor.from_pretrained(config.cse_checkpoint, device="cpu", trust_config_paths=True,
                                               local_files_only=config.local_files_only)
    layouts = _layout_records(config, records)
    instructions_fit, instructions_check = _instruction_records(config)
    cache = Path(config.encoded_dir or Path(config.output_dir) / "encoded")
    encoded_fit = []
    encoded_pick = []
    for name, rows in (("", train), ("layout_", layouts), ("instruction_", instructions_fit)):
        held = [held_for_threshold(str(r["id"]), config.threshold_fraction) for r in rows]
        encoded_fit += _cached(cache / f"{name}fit", [r for r, h in zip(rows, held) if not h], compressor,
                               config.view_sentences)
        encoded_pick += _cached(cache / f"{name}threshold", [r for r, h in zip(rows, held) if h], compressor,
                                config.view_sentences)
    encoded_validation = _cached(cache / "validation", validation, compressor, config.view_sentences)
    encoded_check = _cached(cache / "instruction_check", instructions_check, compressor, config.view_sentences)
    encode_seconds = time.perf_counter() - started
    head = fit_sequence_head(encoded_fit, SequenceFitSettings(
        width=config.sequence_width, layers=config.sequence_layers, window=config.sequence_window,
        epochs=config.sequence_epochs, learning_rate=config.sequence_learning_rate,
        dropout=config.sequence_dropout, seed=config.seed,
        checkpoint=str(Path(config.output_dir) / "sequence_fit.pt")))
    threshold, neighbour, by_threshold = _choose_thresholds(encoded_pick, head, config.max_sentences)
    output = Path(config.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    head.save(output / HEAD_FILE)
    validation_scores = prompt_scores(encoded_validation, head, threshold, config.max_sentences, neighbour)
    by_family = {family: prompt_scores([p for p in encoded_validation if p.family == family], head, threshold,
                                       config.max_sentences, neighbour)
                 for family in sorted({p.family for p in encoded_validation})}
    summary = {
        "stage": "request_head", "config": asdict(config),
        "data": {"path": config.data_path, "sha256_16": hashlib.sha256(Path(config.data_path).read_bytes())
                 .hexdigest()[:16], "records": len(records)},
        "layouts": {"records": len(layouts), "sha256_16": records_digest(layouts),
                    "families": dict(Counter(r["family"] for r in layouts))},
        "records": {"fit": len(encoded_fit), "threshold": len(encoded_pick), "validation": len(encoded_validation)},
        "kinds": dict(Counter(r.get("kind") for r in train)),
        "threshold": threshold, "neighbour_threshold": neighbour, "threshold_choice": by_threshold,
        "train_fit": prompt_scores(encoded_fit, head, threshold, config.max_sentences, neighbour),
        "held_out_families": validation_scores, "held_out_by_family": by_family,
        **_instruction_summary(config, instructions_fit, instructions_check, encoded_validation, encoded_check, head,
                               threshold, neighbour),
        "encode_seconds": round(encode_seconds, 1), "total_seconds": round(time.perf_counter() - started, 1),
        "command": " ".join(["python", "-m", "training.request_head", *sys.argv[1:]]),
    }
    (output / SUMMARY_FILE).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    logger.info("request head: threshold %.2f; held-out families %s", threshold, validation_scores)
    return output


def _by_set(prompts: Sequence[EncodedPrompt], records: Sequence[dict[str, Any]], head: Any, threshold: float,
            max_sentences: int, neighbour: float | None) -> dict[str, Any]:
    """The check records of each record set measured apart (per family and shape; held-out components or layouts
    against seen ones by the records' ``split``)."""
    from evaluation.request_outcomes import summarise  # lazy: loads torch

    by_id = {str(r["id"]): r for r in records}
    result: dict[str, Any] = {}
    for name in sorted({str(r.get("record_set")) for r in records}):
        for split in ("train", "validation"):
            chosen = [p for p in prompts if by_id[p.record_id].get("record_set") == name
                      and by_id[p.record_id].get("split") == split]
            if chosen:
                result[f"{name}:{'seen' if split == 'train' else 'held_out'}"] = summarise(
                    written_request_outcomes(chosen, records, head, threshold, max_sentences, neighbour))
    return result


def _instruction_summary(config: RequestHeadConfig, fit: Sequence[dict[str, Any]], check: Sequence[dict[str, Any]],
                         validation: Sequence[EncodedPrompt], encoded_check: Sequence[EncodedPrompt], head: Any,
                         threshold: float, neighbour: float | None) -> dict[str, Any]:
    """The instruction-style check records measured (per family and shape), and the baseline head on the same
    encoded prompts (the held-out CTD families and the check records) where one is given."""
    from evaluation.request_outcomes import summarise  # lazy: loads torch

    if config.instruction_path is None and config.layout_set_path is None and config.generated_set_path is None:
        return {}
    summary: dict[str, Any] = {"instructions": {
        "paths": {path: hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
                  for path in (config.instruction_path, config.layout_set_path) if path is not None},
        "fit_records": len(fit), "check_records": len(check),
        "check": summarise(written_request_outcomes(encoded_check, check, head, threshold, config.max_sentences,
                                                    neighbour)),
        "check_by_set": _by_set(encoded_check, check, head, threshold, config.max_sentences, neighbour)}}
    if config.baseline_head is not None:
        from tpc_core.engine.task.request_sequence import SequenceRequestHead  # lazy: loads torch

        baseline = SequenceRequestHead.load(config.baseline_head)
        base_threshold = config.baseline_threshold
        summary["baseline"] = {
            "head": config.baseline_head, "threshold": base_threshold,
            "held_out_families": prompt_scores(validation, baseline, base_threshold, config.max_sentences),
            "held_out_by_family": {family: prompt_scores([p for p in validation if p.family == family], baseline,
                                                         base_threshold, config.max_sentences)
                                   for family in sorted({p.family for p in validation})},
            "instruction_check": summarise(written_request_outcomes(encoded_check, check, baseline, base_threshold,
                                                                    config.max_sentences)),
            "check_by_set": _by_set(encoded_check, check, baseline, base_threshold, config.max_sentences, None)}
    return summary


main = stage_main("training.request_head", "request_head", RequestHeadConfig, train_request_head,
                  "Train the extractive request head (no-generation task descriptions).")


if __name__ == "__main__":
    sys.exit(main())
