"""Build request-finder records from the open-ended prompt generator (:mod:`synthesis`).

``python -m training.curation.generated_set --out runs/curation/generated_set --fit N --check M --seed 13``

Rows: the NQ and ``qa_dev`` train rows that the CTD set puts in its ``train`` split, in the order
``training.curation.instruction_set`` shuffles them (the layout set's rule), never a row of ``--exclude`` (the
layout-recall check's held-out train rows) and no key-value lookup row. The rows after the layout set's fit rows
(its check rows and the rows after them, cut by the layout set's own rule: ``--layout-skip``,
``--layout-fit-rows``) are **check** rows; all others are **fit** rows, so no check prompt shares a row with a fit
prompt of this set, the instruction set or the layout set. Fit records are drawn from seen components only; check
records half from seen and half with a held-out component (``split == "validation"`` when a held-out part is shown). A
row is drawn again (another ``index``) once every row has been used.

Prompts that ask nothing (``--without-share``, default 25 % of each role) are built from ``summ_train`` documents
after the ones the instruction and layout sets use (``--document-offset``), fit and check documents disjoint.

Writes ``records.jsonl`` (the layout set's schema plus ``components`` and ``request``) and ``stats.json``
(counts by role / family / shape / component, held-out parts, MiniLM token length distribution); deterministic
for a seed.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from data_access.paths import HELDOUT_IDS
from data_access.tokens import minilm_token_counter
from synthesis import AXES, HELD_OUT_PARTS, Generated, generate, generate_without
from training.common.jsonl import read_jsonl
from training.curation.format_tasks import load_format_inputs
from training.curation.instruction_set import record_set_parser, summ_documents, write_record_set

__all__ = ["build_generated_set", "length_stats", "main", "record_of", "train_rows"]


def train_rows(ctd_path: str, nq_path: str, qa_path: str, *, seed: int) -> list[dict[str, Any]]:
    """The train rows in the instruction set's shuffled order (the order the instruction and layout sets cut)."""
    train_ids = {str(r.get("source_id")) for r in read_jsonl(ctd_path) if r.get("split") == "train"}
    held_ids = {str(r.get("source_id")) for r in read_jsonl(ctd_path) if r.get("split") == "validation"}
    inputs = load_format_inputs(nq_path, qa_path)
    rows = [dict(row) for row in (*inputs.nq, *inputs.qa) if str(row["id"]) in train_ids - held_ids]
    random.Random(f"{seed}:instruction-rows").shuffle(rows)
    return rows


def record_of(generated: Generated, *, number: int, prefix: str, role: str) -> dict[str, Any]:
    """A generated prompt as a request-finder record."""
    family = generated.components.get("request_style", "") if generated.kind == "request" else generated.kind
    return {"id": f"{prefix}-{number:05d}", "prompt": generated.prompt, "family": family,
            "shape": generated.components["shell"], "kind": "instruction" if generated.kind == "request"
            else generated.kind, "role": role, "split": "validation" if generated.components["held_out"] else "train",
            "request_spans": [list(span) for span in generated.request_spans], "source_id": generated.source_id,
            "task_description": generated.request, "request": generated.request,
            "components": dict(generated.components)}


def _with_request(rows: Sequence[Mapping[str, Any]], count: int, *, seed: int, prefix: str, role: str,
                  modes: Sequence[str]) -> list[dict[str, Any]]:
    records = []
    for number in range(count):
        row = rows[number % len(rows)]
        mode = modes[number % len(modes)]
        generated = generate(row, seed=seed, index=number // len(rows), components=mode, pool=rows)  # type: ignore[arg-type]
        records.append(record_of(generated, number=number, prefix=prefix, role=role))
    return records


def _without_request(documents: Sequence[tuple[str, str]], *, seed: int, prefix: str, role: str,
                     modes: Sequence[str]) -> list[dict[str, Any]]:
    return [record_of(generate_without(document_id, text, seed=seed, components=modes[number % len(modes)]),  # type: ignore[arg-type]
                      number=number, prefix=prefix, role=role)
            for number, (document_id, text) in enumerate(documents)]


def build_generated_set(ctd_path: str, nq_path: str, qa_path: str, summ_path: str, *, seed: int, fit: int, check: int,
                        without_share: float = 0.25, layout_skip: int = 1108, layout_fit_rows: int = 520,
                        document_offset: int = 700, exclude: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The fit and check records (see the module docstring).

    Raises:
        ValueError: A share outside [0, 1), or no rows on either side.
    """
    if not 0 <= without_share < 1:
        raise ValueError(f"without_share must be in [0, 1), got {without_share}")
    excluded = set(exclude)

    def usable(row: Mapping[str, Any]) -> bool:
        return str(row["id"]) not in excluded and not str(row["question"]).lstrip().startswith("Key:")

    ordered = train_rows(ctd_path, nq_path, qa_path, seed=seed)
    check_rows = [row for row in ordered[layout_skip:] if usable(row)][layout_fit_rows:]  # the layout set's rule
    check_ids = {str(row["id"]) for row in check_rows}
    fit_rows = [row for row in ordered if usable(row) and str(row["id"]) not in check_ids]
    if not fit_rows or (check and not check_rows):
        raise ValueError(f"{len(fit_rows)} fit rows and {len(check_rows)} check rows; lower --layout-fit-rows")
    fit_without = round(fit * without_share)
    check_without = round(check * without_share)
    documents = summ_documents(summ_path, document_offset + fit_without + check_without, seed, 1500)[document_offset:]
    if len(documents) < fit_without + check_without:
        raise ValueError(f"only {len(documents)} summ_train documents after offset {document_offset}")
    return [*_with_request(fit_rows, fit - fit_without, seed=seed, prefix="gen-fit", role="fit", modes=("seen",)),
            *_with_request(check_rows, check - check_without, seed=seed, prefix="gen-check", role="check",
                           modes=("seen", "held_out")),
            *_without_request(documents[:fit_without], seed=seed, prefix="gen-none-fit", role="fit", modes=("seen",)),
            *_without_request(documents[fit_without:], seed=seed, prefix="gen-none-check", role="check",
                              modes=("seen", "held_out"))]


def length_stats(records: Sequence[Mapping[str, Any]], counter: Any) -> dict[str, Any]:
    """Prompt lengths in MiniLM tokens (``counter.many``): quantiles and the share in 150-900 tokens."""
    counts = sorted(counter.many([r["prompt"] for r in records]))
    if not counts:
        return {}

    def at(share: float) -> int:
        return counts[min(len(counts) - 1, int(share * len(counts)))]

    return {"prompts": len(counts), "min": counts[0], "p10": at(0.1), "p25": at(0.25), "median": at(0.5),
            "p75": at(0.75), "p90": at(0.9), "max": counts[-1],
            "share_150_900": round(sum(150 <= c <= 900 for c in counts) / len(counts), 4),
            "share_over_1500": round(sum(c > 1500 for c in counts) / len(counts), 4)}


def _component_counts(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    axes = ("shell_family", "shell", "vocabulary", "position", "request_style", "instructions", "material_questions",
            "distractor_place", "no_request", "length", "passage_style", "held_out")
    return {axis: dict(Counter(str(r["components"].get(axis, "")) for r in records if axis in r["components"])
                       .most_common()) for axis in axes}


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = record_set_parser("python -m training.curation.generated_set", __doc__, "runs/curation/generated_set")
    parser.add_argument("--fit", type=int, default=4000, help="fit records (seen components only)")
    parser.add_argument("--check", type=int, default=800, help="check records (half with a held-out component)")
    parser.add_argument("--without-share", type=float, default=0.25, help="share of prompts that ask nothing")
    parser.add_argument("--layout-skip", type=int, default=1108, help="the layout set's --skip")
    parser.add_argument("--layout-fit-rows", type=int, default=520,
                        help="the layout set's --fit-rows: rows after them are this set's check rows")
    parser.add_argument("--document-offset", type=int, default=700,
                        help="summ_train documents the instruction and layout sets use come first")
    parser.add_argument("--exclude", default=str(HELDOUT_IDS),
                        help="JSON list of row ids never used (the layout-recall check's held-out train rows)")
    parser.add_argument("--no-lengths", action="store_true", help="skip the MiniLM length statistics")
    args = parser.parse_args(argv)
    exclude = json.loads(Path(args.exclude).read_text(encoding="utf-8")) if args.exclude else []
    records = build_generated_set(args.ctd, args.nq, args.qa, args.summ, seed=args.seed, fit=args.fit,
                                  check=args.check, without_share=args.without_share, layout_skip=args.layout_skip,
                                  layout_fit_rows=args.layout_fit_rows,
                                  document_offset=args.document_offset, exclude=exclude)
    lengths: dict[str, Any] = {}
    if not args.no_lengths:
        counter = minilm_token_counter()
        lengths = {role: length_stats([r for r in records if r["role"] == role], counter) for role in ("fit", "check")}
    write_record_set(args.out, records, held_out_parts={axis: sorted(parts) for axis, parts in HELD_OUT_PARTS.items()},
                     parts_per_axis={axis: len(parts) for axis, parts in AXES.items()},
                     by_split=dict(Counter(f"{r['role']}:{r['split']}" for r in records)),
                     without_request_share=args.without_share, minilm_tokens=lengths,
                     components={role: _component_counts([r for r in records if r["role"] == role])
                                 for role in ("fit", "check")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
