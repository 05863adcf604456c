"""The curation run: read inputs, convert or generate, validate, write JSONL, resume, count.

Layout of ``output_dir``::

    ctd.jsonl        {"id", "prompt", "task_description", "source"}
    mcqr.jsonl       {"id", "question", "sentences", "positives", "negatives", "source"}
    state.jsonl      one line per finished (task, input): kept / rejected reasons; a rerun skips these
    config.json      the config of the first run; a rerun with different record-shaping settings is refused
    stats.json       totals over all runs (kept, rejected by reason, notes, generator cache use)
    generator_cache.sqlite   LLM answers (unless cache_path points elsewhere)
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from training.common.config import config_to_dict
from training.common.jsonl import JsonlAppender, read_jsonl, repair_jsonl
from training.curation.config import RESUME_INSENSITIVE_KEYS, CurationConfig
from training.curation.converters import qa_row_to_ctd, qa_row_to_mcqr, require_train_split
from training.curation.ctd import Deduplicator, choose_template, clean_query, fill_template, query_problem
from training.curation.generators import (
    CachedGenerator,
    GenerationError,
    Generator,
    LocalHFGenerator,
    OpenAICompatibleGenerator,
)
from training.curation.mcqr import parse_mcqr_answer
from training.curation.prompts import render_prompt_1, render_prompt_2, render_prompt_3
from training.curation.sentences import sentence_spans

__all__ = ["InputDoc", "build_generator", "load_inputs", "run_curation"]

logger = logging.getLogger("training.curation")

_Writers = dict[str, JsonlAppender]  # task -> output file
_Written = dict[str, set[str]]  # task -> record ids already in the output file
_OUTPUT_FILES = ("ctd.jsonl", "mcqr.jsonl", "state.jsonl", "stats.json", "config.json")


@dataclass(frozen=True)
class InputDoc:
    """One input: a QA row (``row`` set) or a plain text."""

    id: str
    text: str
    source: str
    row: dict[str, Any] | None = None


@dataclass
class _Outcome:
    """What one (task, input) produced; becomes one state line."""

    kept: int = 0
    rejected: Counter[str] | None = None
    notes: Counter[str] | None = None
    dedup_keys: tuple[str, ...] = ()

    def reject(self, reason: str) -> _Outcome:
        self.rejected = (self.rejected or Counter()) + Counter({reason: 1})
        return self


class _RunState:
    """Finished (task, input) pairs and the totals of every run so far."""

    def __init__(self, output_dir: Path, tasks: Sequence[str]) -> None:
        self.path = output_dir / "state.jsonl"
        repair_jsonl(self.path)
        self.done: set[str] = set()
        self.dedup = Deduplicator()
        self.totals = {task: {"inputs": 0, "kept": 0, "rejected": Counter(), "notes": Counter()} for task in tasks}
        self.failed: Counter[str] = Counter()
        if self.path.exists():
            for line in read_jsonl(self.path):
                self._count(line)
        self._writer = JsonlAppender(self.path)

    def record(self, task: str, input_id: str, outcome: _Outcome) -> None:
        line = {
            "task": task,
            "input_id": input_id,
            "kept": outcome.kept,
            "rejected": dict(outcome.rejected or {}),
            "notes": dict(outcome.notes or {}),
            "dedup_keys": list(outcome.dedup_keys),
        }
        self._writer.write(line)
        self._count(line)

    def _count(self, line: dict[str, Any]) -> None:
        task = line["task"]
        self.done.add(f"{task}:{line['input_id']}")
        for key in line.get("dedup_keys", []):
            self.dedup.add(key)
        if task not in self.totals:
            self.totals[task] = {"inputs": 0, "kept": 0, "rejected": Counter(), "notes": Counter()}
        totals = self.totals[task]
        totals["inputs"] += 1
        totals["kept"] += line["kept"]
        totals["rejected"].update(line["rejected"])
        totals["notes"].update(line["notes"])

    def close(self) -> None:
        self._writer.close()


def run_curation(config: CurationConfig, *, generator: Generator | None = None) -> dict[str, Any]:
    """Run the stage; returns the stats written to ``stats.json``.

    Args:
        config: A validated :class:`CurationConfig`.
        generator: Use this generator instead of building one from the config (it is still cached).
    """
    config.check_paths()
    output_dir = Path(config.output_dir)
    _prepare_output_dir(config, output_dir)
    docs, skipped = load_inputs(config)
    logger.info("%d inputs from %s (%s)", len(docs), config.input_path, dict(skipped) or "none skipped")

    state = _RunState(output_dir, config.tasks)
    writers = {task: JsonlAppender(output_dir / f"{task}.jsonl") for task in config.tasks}
    written = {task: _existing_ids(output_dir / f"{task}.jsonl") for task in config.tasks}
    cached: CachedGenerator | None = None
    try:
        if config.generator == "none":
            _convert(config, docs, state, writers, written)
        else:
            inner = generator if generator is not None else build_generator(config)
            cached = CachedGenerator(inner, config.resolved_cache_path())
            _generate_all(config, docs, cached, state, writers, written)
    finally:
        for writer in writers.values():
            writer.close()
        state.close()
        if cached is not None:
            cached.close()
    stats = _stats(config, state, skipped, cached)
    (output_dir / "stats.json").write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    _log_summary(stats)
    return stats


def load_inputs(config: CurationConfig) -> tuple[list[InputDoc], Counter[str]]:
    """Inputs after the split filter, the length limits and ``max_records``; plus what was skipped and why."""
    skipped: Counter[str] = Counter()
    docs: list[InputDoc] = []
    seen: set[str] = set()
    held_out: set[str] = set()
    if config.source == "qa_jsonl" and config.exclude_dev_overlap:
        # Only hashes of held-out contexts are kept: to leave out train rows that would leak into evaluation.
        held_out = {_text_hash(r["context"]) for r in read_jsonl(config.input_path) if r.get("split") != "train"}
    for number, row in enumerate(read_jsonl(config.input_path), 1):
        doc = _input_doc(config, number, row, held_out, skipped)
        if doc is None:
            continue
        if doc.id in seen:
            raise ValueError(f"{config.input_path}:{number}: duplicate id {doc.id!r}")
        seen.add(doc.id)
        too = _length_skip(config, doc.text)
        if too is not None:
            skipped[too] += 1
            continue
        docs.append(doc)
        if config.max_records is not None and len(docs) >= config.max_records:
            break
    return docs, skipped


def _input_doc(config: CurationConfig, number: int, row: dict[str, Any], held_out: set[str],
               skipped: Counter[str]) -> InputDoc | None:
    """Row ``number`` of the input as a document, or ``None`` (counted in ``skipped``) for a QA row outside the
    train split or whose context is also held out."""
    if config.source == "qa_jsonl":
        if row.get("split") != "train":
            skipped[f"split_{row.get('split')}"] += 1
            return None
        require_train_split(row)
        if held_out and _text_hash(row["context"]) in held_out:
            skipped["context_also_in_dev"] += 1
            return None
        return InputDoc(str(row["id"]), str(row["context"]), str(row.get("source", "")), row)
    text = row.get(config.text_field)
    if not isinstance(text, str):
        raise ValueError(f"{config.input_path}:{number}: field {config.text_field!r} missing or not a string")
    doc_id = str(row.get(config.id_field) or f"{Path(config.input_path).stem}-{number}")
    return InputDoc(doc_id, text, str(row.get(config.source_field) or Path(config.input_path).name))


def _length_skip(config: CurationConfig, text: str) -> str | None:
    """Why a text is too short or too long to curate, or ``None``."""
    if len(text.strip()) < config.min_context_chars:
        return "context_too_short"
    if config.max_context_chars is not None and len(text) > config.max_context_chars:
        return "context_too_long"
    return None


def build_generator(config: CurationConfig) -> Generator:
    """The generator named by the config (loads the model or opens the HTTP client)."""
    if config.generator == "local_hf":
        return LocalHFGenerator(config.local_hf)
    if config.generator == "openai":
        return OpenAICompatibleGenerator(config.openai)
    raise ValueError(f"generator={config.generator!r} builds no model")


# ------------------------------------------------------------------------------------------ converters


def _convert(
    config: CurationConfig, docs: Sequence[InputDoc], state: _RunState, writers: _Writers, written: _Written
) -> None:
    for number, doc in enumerate(docs, 1):
        assert doc.row is not None
        if "ctd" in config.tasks and f"ctd:{doc.id}" not in state.done:
            record, template = qa_row_to_ctd(doc.row, rng=_rng(config, "ctd", doc.id))
            outcome = _Outcome(notes=Counter({f"template={template}": 1}))
            _keep_new(state, Deduplicator.key(doc.text, record["task_description"]), writers["ctd"], written["ctd"],
                      record, outcome)
            state.record("ctd", doc.id, outcome)
        if "mcqr" in config.tasks and f"mcqr:{doc.id}" not in state.done:
            record, notes = qa_row_to_mcqr(
                doc.row,
                rng=_rng(config, "mcqr", doc.id),
                max_negatives=config.max_negatives,
                min_sentences=config.min_sentences,
                drop_answer_negatives=config.drop_answer_negatives,
                negatives=config.negatives,
            )
            outcome = _Outcome(notes=notes)
            if record is None:
                reasons = {"too_few_sentences", "no_gold_match", "no_negatives"}
                outcome = _Outcome(
                    rejected=Counter({k: v for k, v in notes.items() if k in reasons}),
                    notes=Counter({k: v for k, v in notes.items() if k not in reasons}),
                )
            else:
                _keep_new(state, _mcqr_key(record), writers["mcqr"], written["mcqr"], record, outcome)
            state.record("mcqr", doc.id, outcome)
        _progress(config, number, len(docs), state)


# ------------------------------------------------------------------------------------------ LLM path


def _generate_all(
    config: CurationConfig, docs: Sequence[InputDoc], generator: Generator, state: _RunState, writers: _Writers,
    written: _Written,
) -> None:
    for start in range(0, len(docs), config.batch_size):
        batch = docs[start : start + config.batch_size]
        if "ctd" in config.tasks:
            todo = [d for d in batch if f"ctd:{d.id}" not in state.done]
            _ctd_batch(config, todo, generator, state, writers, written)
        if "mcqr" in config.tasks:
            todo = [d for d in batch if f"mcqr:{d.id}" not in state.done]
            _mcqr_batch(config, todo, generator, state, writers, written)
        done = min(start + config.batch_size, len(docs))
        _progress(config, done, len(docs), state, step=len(batch))


def _ctd_batch(
    config: CurationConfig, docs: list[InputDoc], generator: Generator, state: _RunState, writers: _Writers,
    written: _Written,
) -> None:
    if not docs:
        return
    texts = [_cut_at_sentence(doc.text, config.max_text_chars) for doc in docs]
    queries = _ask(generator, [render_prompt_1(text) for text in texts], state, "ctd_prompt_1")
    stage2: list[tuple[InputDoc, str, str]] = []
    for doc, text, raw in zip(docs, texts, queries):
        if raw is None:
            continue  # generation failed: not marked done, retried by the next run
        query = clean_query(raw)
        problem = query_problem(query, config.ctd_rules)
        if problem:
            state.record("ctd", doc.id, _Outcome().reject(problem))
        else:
            stage2.append((doc, text, query))
    excerpts = [_cut_at_sentence(text, config.prompt2_text_chars) for _, text, _ in stage2]
    prompts = [render_prompt_2(excerpt, query) for excerpt, (_, _, query) in zip(excerpts, stage2)]
    answers = _ask(generator, prompts, state, "ctd_prompt_2")
    for (doc, text, query), raw in zip(stage2, answers):
        if raw is None:
            continue
        template, problem = choose_template(raw, text, config.ctd_rules, _rng(config, "ctd", doc.id))
        if template is None:
            state.record("ctd", doc.id, _Outcome().reject(problem or "template_invalid"))
            continue
        record = {
            "id": f"{doc.id}:ctd",
            "prompt": fill_template(template, text, query),
            "task_description": query,
            "source": doc.source,
        }
        outcome = _Outcome()
        _keep_new(state, Deduplicator.key(text, query), writers["ctd"], written["ctd"], record, outcome)
        state.record("ctd", doc.id, outcome)


def _mcqr_batch(
    config: CurationConfig, docs: list[InputDoc], generator: Generator, state: _RunState, writers: _Writers,
    written: _Written,
) -> None:
    jobs: list[tuple[InputDoc, int, list[str]]] = []
    outcomes: dict[str, _Outcome] = {}
    for doc in docs:
        outcomes[doc.id] = _Outcome(rejected=Counter(), notes=Counter())
        windows = _sentence_windows(doc.text, config)
        picked = _spread(len(windows), config.mcqr_windows_per_text)
        usable = [(number, windows[number]) for number in picked if len(windows[number]) >= config.min_sentences]
        if not usable:
            outcomes[doc.id].reject("too_few_sentences")
        jobs.extend((doc, number, window) for number, window in usable)
    answers = _ask(generator, [render_prompt_3(window) for _, _, window in jobs], state, "mcqr_prompt_3")
    failed: set[str] = {doc.id for (doc, _, _), raw in zip(jobs, answers) if raw is None}
    for (doc, number, window), raw in zip(jobs, answers):
        if raw is None:
            continue
        samples, reasons = parse_mcqr_answer(
            raw,
            window,
            max_negatives=config.max_negatives,
            rng=_rng(config, "mcqr", f"{doc.id}:{number}"),
            min_positives=config.mcqr_min_positives,
        )
        outcome = outcomes[doc.id]
        for reason in reasons:
            outcome.reject(reason)
        for k, sample in enumerate(samples):
            record = {
                "id": f"{doc.id}:mcqr:{number}:{k}",
                "question": sample.question,
                "sentences": list(sample.sentences),
                "positives": list(sample.positives),
                "negatives": list(sample.negatives),
                "source": doc.source,
            }
            _keep_new(state, _mcqr_key(record), writers["mcqr"], written["mcqr"], record, outcome)
    for doc in docs:
        if doc.id not in failed:
            state.record("mcqr", doc.id, outcomes[doc.id])


def _ask(generator: Generator, prompts: list[str], state: _RunState, stage: str) -> list[str | None]:
    if not prompts:
        return []
    try:
        return list(generator.generate(prompts))
    except GenerationError as error:
        logger.warning("%s: %s", stage, error)
        state.failed[stage] += len(prompts) - len(error.partial)
        return [error.partial.get(i) for i in range(len(prompts))]


def _sentence_windows(text: str, config: CurationConfig) -> list[list[str]]:
    """Consecutive sentences, at most ``mcqr_window_sentences`` and ``max_text_chars`` characters per window."""
    windows: list[list[str]] = []
    current: list[str] = []
    size = 0
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        if current and (len(current) >= config.mcqr_window_sentences or size + len(sentence) > config.max_text_chars):
            windows.append(current)
            current = []
            size = 0
        current.append(sentence)
        size += len(sentence) + 1
    if current:
        windows.append(current)
    return windows


def _spread(available: int, wanted: int) -> list[int]:
    """``wanted`` window numbers spread evenly over ``available`` (the start, the end and between)."""
    if available <= wanted:
        return list(range(available))
    if wanted == 1:
        return [0]
    return sorted({round(i * (available - 1) / (wanted - 1)) for i in range(wanted)})


def _cut_at_sentence(text: str, max_chars: int) -> str:
    """``text`` up to the last sentence end within ``max_chars`` (a hard cut if the first sentence is longer)."""
    if len(text) <= max_chars:
        return text
    end = 0
    for _, span_end in sentence_spans(text):
        if span_end > max_chars:
            break
        end = span_end
    return text[: end or max_chars]


# ------------------------------------------------------------------------------------------ bookkeeping


def _mcqr_key(record: dict[str, Any]) -> str:
    return Deduplicator.key("mcqr\n" + "\n".join(record["sentences"]), record["question"])


def _text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _rng(config: CurationConfig, task: str, key: str) -> random.Random:
    return random.Random(f"{config.seed}:{task}:{key}")  # str seeds hash with sha512: stable across runs


def _keep_new(state: _RunState, key: str, writer: JsonlAppender, written: set[str], record: dict[str, Any],
              outcome: _Outcome) -> None:
    """Write ``record`` and count it kept under ``key``, or count a duplicate where an earlier record had ``key``."""
    if not state.dedup.add(key):
        outcome.reject("duplicate")
        return
    _write(writer, written, record)
    outcome.kept += 1
    outcome.dedup_keys += (key,)


def _write(writer: JsonlAppender, written: set[str], record: dict[str, Any]) -> None:
    if record["id"] in written:  # written just before an interruption, state line missing
        return
    writer.write(record)
    written.add(record["id"])


def _existing_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    repair_jsonl(path)
    return {str(record["id"]) for record in read_jsonl(path)}


def _prepare_output_dir(config: CurationConfig, output_dir: Path) -> None:
    output_dir.mkdir(parents=True, exist_ok=True)
    if config.overwrite:
        for name in _OUTPUT_FILES:
            target = output_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    saved = output_dir / "config.json"
    current = config_to_dict(config)
    if saved.exists():
        previous = json.loads(saved.read_text(encoding="utf-8"))
        changed = sorted(k for k in _diff_keys(previous, current) if k not in RESUME_INSENSITIVE_KEYS)
        if changed:
            raise ValueError(
                f"{output_dir} holds a run with different settings ({', '.join(changed)}); "
                "use another output_dir or set overwrite: true"
            )
    else:
        saved.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _diff_keys(old: Any, new: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in set(old) | set(new):
            yield from _diff_keys(old.get(key), new.get(key), f"{prefix}{key}.")
    elif old != new:
        yield prefix.rstrip(".")


def _progress(config: CurationConfig, done: int, total: int, state: _RunState, *, step: int = 1) -> None:
    if (done - step) // config.log_every < done // config.log_every or done == total:
        kept = ", ".join(f"{task} kept {t['kept']}" for task, t in state.totals.items())
        logger.info("%d/%d inputs; %s", done, total, kept)


def _stats(
    config: CurationConfig, state: _RunState, skipped: Counter[str], cached: CachedGenerator | None
) -> dict[str, Any]:
    tasks = {
        task: {
            "inputs": t["inputs"],
            "kept": t["kept"],
            "rejected": dict(sorted(t["rejected"].items())),
            "notes": dict(sorted(t["notes"].items())),
        }
        for task, t in state.totals.items()
    }
    stats: dict[str, Any] = {"tasks": tasks, "inputs_skipped": dict(sorted(skipped.items()))}
    if cached is not None:
        stats["generator"] = {
            "identity": cached.identity,
            "cache_hits": cached.hits,
            "cache_misses": cached.misses,
            "failed_this_run": dict(state.failed),
        }
    return stats


def _log_summary(stats: dict[str, Any]) -> None:
    for task, t in stats["tasks"].items():
        rejected = ", ".join(f"{k}={v}" for k, v in t["rejected"].items()) or "none"
        logger.info("%s: %d inputs -> %d kept; rejected: %s", task, t["inputs"], t["kept"], rejected)
        if t["notes"]:
            logger.info("%s notes: %s", task, ", ".join(f"{k}={v}" for k, v in t["notes"].items()))
    if stats["inputs_skipped"]:
        logger.info("inputs skipped: %s", stats["inputs_skipped"])
    if "generator" in stats:
        logger.info("generator: %s", stats["generator"])
