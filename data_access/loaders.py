"""Load benchmark samples from local JSONL files in their official schemas.

* qa_dev (``shared/data/qa_dev.jsonl``) and any JSONL with the same fields
  (``id, source, context, question, answers, supporting_sentences, task_type, split``).
* summ_dev (``shared/data/summ_dev.jsonl``): the same schema, LongBench ``multi_news`` rows with
  ``question = null`` and the reference summary in ``answers[0]``. Evaluation only.
* LongBench: ``input, context, answers, length, dataset, language, all_classes, _id``; one file per task,
  ``<dir>/<task>.jsonl`` or ``<dir>/longbench/<task>.jsonl`` or ``<dir>/data/<task>.jsonl``.
* ZeroSCROLLS: ``id, pid, input, output, document_start_index, document_end_index, query_start_index,
  query_end_index, truncation_seperator``; ``<dir>/<task>/validation.jsonl`` (or ``test.jsonl``,
  ``<dir>/<task>.jsonl``, also under ``zeroscrolls/``). Test files carry no outputs: proxies only.

Data is never downloaded by default. ``datasets`` is used for LongBench only when it is installed and the Hub
answers; otherwise :class:`DataNotFoundError` says where to put the files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from data_access.paths import HELDOUT_IDS, data_file
from synthesis.templates import DATASET2MAXLEN, DATASET2METRIC, DATASET2PROMPT, QA_DEV_TEMPLATES

__all__ = [
    "round_robin",
    "Sample",
    "DataNotFoundError",
    "DATA_DIR_ENV",
    "QA_DEV_ENV",
    "SUMM_DEV_ENV",
    "LONGBENCH_TASKS",
    "ZEROSCROLLS_TASKS",
    "default_qa_dev_path",
    "default_summ_dev_path",
    "load_qa_dev",
    "load_summ_dev",
    "load_longbench",
    "load_zeroscrolls",
    "read_jsonl",
    "recall_samples",
]

DATA_DIR_ENV = "TPC_BENCH_DATA"
QA_DEV_ENV = "TPC_QA_DEV"
SUMM_DEV_ENV = "TPC_SUMM_DEV"
SUMM_DEV_TASK = "multi_news"

LONGBENCH_TASKS: tuple[str, ...] = tuple(DATASET2PROMPT)
ZEROSCROLLS_TASKS: tuple[str, ...] = (
    "gov_report", "summ_screen_fd", "qmsum", "squality", "quality", "narrative_qa", "qasper", "musique",
    "space_digest", "book_sum_sort",
)  # fmt: skip
ZEROSCROLLS_METRIC: dict[str, str] = {
    "gov_report": "rouge_geo", "summ_screen_fd": "rouge_geo", "qmsum": "rouge_geo", "squality": "rouge_geo",
    "quality": "mc_accuracy", "narrative_qa": "qa_f1", "qasper": "qa_f1", "musique": "qa_f1",
    # SpaceDigest (exponential similarity) and BookSumSort (concordance index) are not implemented here.
    "space_digest": "unsupported", "book_sum_sort": "unsupported",
}  # fmt: skip
ZEROSCROLLS_MAXLEN: dict[str, int] = {
    "gov_report": 1024, "summ_screen_fd": 512, "qmsum": 512, "squality": 512, "quality": 10,
    "narrative_qa": 64, "qasper": 128, "musique": 32, "space_digest": 10, "book_sum_sort": 256,
}  # fmt: skip


class DataNotFoundError(FileNotFoundError):
    """Benchmark files are missing; the message says where to put them."""


@dataclass(frozen=True)
class Sample:
    """One benchmark item, whatever its source.

    Attributes:
        id: Unique id within its benchmark.
        dataset: Task name (``hotpotqa``, ``qa_dev``...); selects template/metric.
        source: Finer grouping for reports (qa_dev's ``source``; otherwise the task).
        context: The long document(s) a compressor may shorten.
        question: The task input (question, abstract, few-shot query); may be empty.
        answers: Gold answers (any one is correct).
        template: Prompt with ``{context}`` / ``{input}`` placeholders.
        metric: Reader metric name (see :mod:`evaluation.metrics`).
        max_new_tokens: Reader answer length.
        supporting_sentences: Gold evidence sentences (qa_dev), for evidence recall.
        all_classes: Label set (LongBench ``trec``).
        meta: Anything else from the file.
    """

    id: str
    dataset: str
    source: str
    context: str
    question: str
    answers: tuple[str, ...]
    template: str
    metric: str
    max_new_tokens: int
    supporting_sentences: tuple[str, ...] = ()
    all_classes: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a JSONL file; a malformed line raises ``ValueError`` naming the line."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
    return rows


def default_qa_dev_path() -> Path:
    """``$TPC_QA_DEV``, else ``qa_dev.jsonl`` under the data root (:func:`~data_access.paths.data_root`)."""
    return data_file("qa_dev.jsonl", QA_DEV_ENV)


def default_summ_dev_path() -> Path:
    """``$TPC_SUMM_DEV``, else ``summ_dev.jsonl`` under the data root (:func:`~data_access.paths.data_root`)."""
    return data_file("summ_dev.jsonl", SUMM_DEV_ENV)


def _require_fields(row: dict[str, Any], fields: Sequence[str], path: Path) -> None:
    missing = [name for name in fields if name not in row]
    if missing:
        raise ValueError(f"{path}: row {row.get('id', row.get('_id', '?'))!r} lacks fields {missing}")


def _data_file(path: str | os.PathLike[str] | None, default: Any, file_name: str, env: str) -> Path:
    """``path`` (a file, or a directory holding ``file_name``; ``None``: ``default()``), which must exist."""
    resolved = Path(path) if path is not None else default()
    if resolved.is_dir():
        resolved = resolved / file_name
    if not resolved.is_file():
        raise DataNotFoundError(
            f"{file_name.removesuffix('.jsonl')} data not found at {resolved}. Put {file_name} there, or pass "
            f"--data-dir DIR (containing {file_name}) or set {env}=/path/to/{file_name}."
        )
    return resolved


def load_qa_dev(path: str | os.PathLike[str] | None = None, *, split: str | None = "dev") -> list[Sample]:
    """Load qa_dev (or any JSONL in its schema), keeping ``split`` (``None`` keeps all rows)."""
    path = _data_file(path, default_qa_dev_path, "qa_dev.jsonl", QA_DEV_ENV)
    samples = []
    for row in read_jsonl(path):
        _require_fields(row, ("id", "context", "question", "answers"), path)
        if split is not None and row.get("split", split) != split:
            continue
        task_type = row.get("task_type", "single_doc_qa")
        options = row.get("meta", {}).get("options")
        samples.append(
            Sample(
                id=str(row["id"]),
                dataset="qa_dev",
                source=_short_source(row.get("source", "qa_dev")),
                context=row["context"],
                question=row["question"],
                answers=tuple(row["answers"]),
                template=QA_DEV_TEMPLATES.get(task_type, QA_DEV_TEMPLATES["single_doc_qa"]),
                metric="mc_accuracy" if options else "qa_f1",
                max_new_tokens=32,
                supporting_sentences=tuple(row.get("supporting_sentences") or ()),
                meta={"task_type": task_type, **row.get("meta", {})},
            )
        )
    return samples


def recall_samples(qa: str | None, *, dev: bool) -> list[Sample]:
    """The rows a recall benchmark reads: ``qa_dev``'s dev split, or the held-out train rows the CSE never saw
    (:data:`~data_access.paths.HELDOUT_IDS`), each with gold evidence."""
    if dev:
        samples = load_qa_dev(qa, split="dev")
    else:
        held = set(json.loads(HELDOUT_IDS.read_text(encoding="utf-8")))
        samples = [s for s in load_qa_dev(qa, split="train") if s.id in held]
    return [s for s in samples if s.supporting_sentences]


def load_summ_dev(path: str | os.PathLike[str] | None = None) -> list[Sample]:
    """Load summ_dev (LongBench ``multi_news`` rows in the qa_dev schema) for prompt-agnostic evaluation.

    Each sample carries LongBench's ``multi_news`` template, an empty question and the reference summary as
    its only answer. ``path`` may be the file or a directory holding ``summ_dev.jsonl``; ``None`` means
    :func:`default_summ_dev_path`. Evaluation data only: never train on the summaries.

    Raises:
        DataNotFoundError: the file does not exist (the message says where to put it).
        ValueError: a row lacks ``id``, ``context`` or ``answers``, or has no reference summary.
    """
    path = _data_file(path, default_summ_dev_path, "summ_dev.jsonl", SUMM_DEV_ENV)
    samples = []
    for row in read_jsonl(path):
        _require_fields(row, ("id", "context", "answers"), path)
        if not row["answers"] or not str(row["answers"][0]).strip():
            raise ValueError(f"{path}: row {row['id']!r} has no reference summary in answers[0]")
        samples.append(_task_sample(
            SUMM_DEV_TASK, id=str(row["id"]), source=_short_source(row.get("source", SUMM_DEV_TASK)),
            context=row["context"], question=row.get("question") or "", answers=tuple(row["answers"]),
            meta={"task_type": row.get("task_type", "summarization"), "split": row.get("split"),
                  **row.get("meta", {})}))
    return samples


def _task_sample(task: str, **fields: Any) -> Sample:
    """A sample of a LongBench task (or of summ_dev, LongBench's ``multi_news``), with that task's prompt
    template, metric and answer length."""
    return Sample(dataset=task, template=DATASET2PROMPT[task], metric=DATASET2METRIC[task],
                  max_new_tokens=DATASET2MAXLEN[task], **fields)


def _short_source(source: str) -> str:
    """``'BAMBOO/altqa_4k (RUCAIBox/BAMBOO)'`` -> ``'altqa_4k'``; ``'nq_open_oracle (...)'`` -> ``'nq_open_oracle'``."""
    return source.split(" (")[0].split("/")[-1]


def _candidates(data_dir: Path, names: Iterable[str]) -> list[Path]:
    return [data_dir / name for name in names]


def _data_dir(data_dir: str | os.PathLike[str] | None) -> Path | None:
    if data_dir is not None:
        return Path(data_dir)
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    return None


def _not_found(benchmark: str, task: str, root: Path | None, download: str, expected: str) -> DataNotFoundError:
    """What to do when a task's file is missing: where it was looked for, what to download, where to put it."""
    where = root if root is not None else f"${DATA_DIR_ENV} (unset)"
    return DataNotFoundError(f"{benchmark} file for {task!r} not found under {where}. Download {download}, unzip it "
                             f"and pass --data-dir DIR (or set {DATA_DIR_ENV}=DIR) so that DIR/{expected} exists.")


def _find(data_dir: Path | None, names: list[str]) -> Path | None:
    if data_dir is None:
        return None
    for path in _candidates(data_dir, names):
        if path.is_file():
            return path
    return None


def load_longbench(
    tasks: Sequence[str] = LONGBENCH_TASKS, data_dir: str | os.PathLike[str] | None = None
) -> list[Sample]:
    """Load LongBench tasks from ``<data_dir>/<task>.jsonl`` (official schema).

    Raises:
        DataNotFoundError: if a task's file is missing and the Hub cannot supply it.
    """
    root = _data_dir(data_dir)
    samples: list[Sample] = []
    for task in tasks:
        if task not in DATASET2PROMPT:
            raise ValueError(f"unknown LongBench task {task!r}; choose from {', '.join(LONGBENCH_TASKS)}")
        path = _find(root, [f"{task}.jsonl", f"longbench/{task}.jsonl", f"data/{task}.jsonl"])
        rows = read_jsonl(path) if path is not None else _longbench_from_hub(task)
        if rows is None:
            raise _not_found("LongBench", task, root, "LongBench's data.zip (THUDM/LongBench)", f"{task}.jsonl")
        for row in rows:
            _require_fields(row, ("input", "context", "answers", "_id"), path or Path(task))
            samples.append(_task_sample(
                task, id=str(row["_id"]), source=task, context=row["context"], question=row.get("input") or "",
                answers=tuple(row["answers"]), all_classes=tuple(row.get("all_classes") or ()),
                meta={"length": row.get("length"), "language": row.get("language")}))
    return samples


def _longbench_from_hub(task: str) -> list[dict[str, Any]] | None:
    """Rows from the Hub when ``datasets`` is installed and the Hub answers, else ``None``."""
    try:
        import datasets  # optional dependency
    except ImportError:
        return None
    try:
        return list(datasets.load_dataset("THUDM/LongBench", task, split="test"))
    except Exception:  # noqa: BLE001 (offline, gated or renamed: all mean "not available here")
        return None


def load_zeroscrolls(
    tasks: Sequence[str] = ZEROSCROLLS_TASKS, data_dir: str | os.PathLike[str] | None = None
) -> list[Sample]:
    """Load ZeroSCROLLS tasks; the document span of ``input`` becomes the compressible context.

    The rest of ``input`` (instruction, query, answer prefix) becomes the template, so the prompt-aware
    setting compresses the document only and the prompt-agnostic one the whole ``input``.
    """
    root = _data_dir(data_dir)
    samples: list[Sample] = []
    for task in tasks:
        if task not in ZEROSCROLLS_METRIC:
            raise ValueError(f"unknown ZeroSCROLLS task {task!r}; choose from {', '.join(ZEROSCROLLS_TASKS)}")
        names = [f"{task}/validation.jsonl", f"{task}/test.jsonl", f"{task}.jsonl"]
        path = _find(root, names + [f"zeroscrolls/{name}" for name in names])
        if path is None:
            raise _not_found("ZeroSCROLLS", task, root, f"tau/zero_scrolls ({task}.zip)", f"{task}/validation.jsonl")
        for row in read_jsonl(path):
            _require_fields(row, ("id", "input", "document_start_index", "document_end_index"), path)
            text = row["input"]
            doc_start = row["document_start_index"]
            doc_end = row["document_end_index"]
            q_start = row.get("query_start_index", doc_end)
            q_end = row.get("query_end_index", doc_end)
            # Escape literal placeholders in the instruction so only our two placeholders get filled.
            head = text[:doc_start].replace("{context}", "{ context}").replace("{input}", "{ input}")
            tail = text[doc_end:].replace("{context}", "{ context}").replace("{input}", "{ input}")
            output = row.get("output")
            samples.append(
                Sample(
                    id=str(row["id"]),
                    dataset=f"zs_{task}",
                    source=task,
                    context=text[doc_start:doc_end],
                    question=text[q_start:q_end].strip() if q_end > q_start else "",
                    answers=(output,) if isinstance(output, str) else tuple(output or ()),
                    template=head + "{context}" + tail,
                    metric=ZEROSCROLLS_METRIC[task],
                    max_new_tokens=ZEROSCROLLS_MAXLEN[task],
                    meta={"pid": row.get("pid"), "truncation_seperator": row.get("truncation_seperator")},
                )
            )
    return samples


def round_robin(queues: list[list[Sample]], limit: int) -> list[Sample]:
    """Up to ``limit`` samples taken one from each queue in turn (the queues are consumed)."""
    chosen: list[Sample] = []
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return chosen
