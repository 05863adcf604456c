"""Build the request head's layout records (:mod:`synthesis.layouts`) from train data.

``python -m training.curation.layout_set [--out runs/curation/layout_set] [--seed 13]``

Rows: the NQ and ``qa_dev`` train rows that the CTD set puts in its ``train`` split, in the order
``training.curation.instruction_set`` shuffles them, after the rows that set uses (``--skip``), and never a row
the layout-recall check holds out (``--exclude``, the CSE's held-out train rows). ``fit`` rows are written in the
seen layouts only; ``check`` rows in every layout (held-out layouts have ``split == "validation"``). Each
request is the row's question as written, or the same question in one of the instruction families the head
already trains on; prompts with no request (a ``summ_train`` document with a summary or label line, or bare)
are written in the same layouts. Writes ``records.jsonl`` (``role`` = ``fit`` / ``check``) and ``stats.json``;
deterministic for a seed.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from data_access.paths import HELDOUT_IDS
from synthesis.instructions import INSTRUCTION_FAMILIES, sample_context
from synthesis.layouts import HELD_OUT_LAYOUTS, LAYOUTS, SEEN_LAYOUTS, Rendered, render, written_question
from training.common.jsonl import read_jsonl
from training.curation.format_tasks import load_format_inputs
from training.curation.instruction_set import TRAIN_FAMILIES, record_set_parser, summ_documents, write_record_set

__all__ = ["build_layout_set", "main"]

# Lines that ask for something about the whole text but name nothing to look for in it (a summary, a label from a
# fixed set, a conversion or a rewrite of all of it): the head must not take them for a request. Written here.
_SUMMARY_LINES = ("Summarise the material in three sentences.", "Give me a short overview of the documents.",
                  "What are the main points here? Keep it brief.", "Please write a digest a busy reader can skim.",
                  "Which area does this belong to: politics, health, technology or culture? Reply with one word.",
                  "Rate how formal the writing is, from 1 (casual) to 5 (very formal). Output the number only.",
                  'Return a JSON object with the keys "topic" and "audience" for the text above.',
                  "Put every person named in the material into a list, one per line.",
                  "Convert the material into a table with the columns date, event and place.",
                  "Translate the text into French.", "Rewrite the material in plain English for a ten-year-old.",
                  "Which option fits the text best? A) a report B) a story C) an advert D) a letter. Give the letter.",
                  "List the three most important points as bullets.", "Fix the grammar of the text and return it.")


def _request(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> tuple[str, str]:
    """``(family, text)``: the question as written (half the time) or in a train instruction family."""
    if rng.random() < 0.5:
        return "plain_question", written_question(str(row["question"]))
    family = rng.choice(TRAIN_FAMILIES)
    return family, INSTRUCTION_FAMILIES[family](row, pool, rng).text


# Lines around a prompt that are not its request: metadata a tool or a form puts first, and notes after the
# request (some of them instructions). Fit records get them at random, so neither a request's distance from the
# start or the end nor an instruction-like note decides by itself. Written here.
_HEADERS = ("Ref: AB-{n}", "Date: {n} May", "Channel: web", "Owner: team {c}", "Tags: research, follow-up",
            "Version: {n}", "Language: en", "Source: internal wiki", "Category: general", "ID: {n}{c}")
_NOTES = ("Please reply by Friday.", "Note: keep this internal.", "Check the attachments before replying.",
          "Sent from my phone", "Thanks in advance.", "Reminder: the office is closed on Monday.",
          "Do not share this outside the team.", "Let me know if anything is unclear.")


def _augment(prompt: str, span: tuple[int, int] | None, rng: random.Random) -> tuple[str, tuple[int, int] | None]:
    """The prompt with metadata lines before it (one time in three) and a note after it (one time in three)."""
    head = ""
    if rng.random() < 1 / 3:
        lines = rng.sample(_HEADERS, rng.randint(1, 5))
        head = "\n".join(line.format(n=rng.randint(2, 999), c=rng.choice("ABCDEFG")) for line in lines) + "\n\n"
    tail = f"\n\n{rng.choice(_NOTES)}" if rng.random() < 1 / 3 else ""
    moved = (span[0] + len(head), span[1] + len(head)) if span is not None else None
    return head + prompt + tail, moved


def _label_chats(rows: Sequence[Mapping[str, Any]], documents: Sequence[tuple[str, str]], count: int, *, seed: int,
                 prefix: str, role: str) -> list[dict[str, Any]]:
    """Few-shot labelling chats: a system line naming the labels, worked user / assistant pairs, then one more
    item to label. The last user turn is an item, not a request (no span)."""
    label_sets = (("easy", "hard"), ("yes", "no"), ("sport", "film", "science", "history", "other"),
                  ("positive", "neutral", "negative"), ("fact", "opinion"))
    sentences = [s.strip() for _, text in documents for s in text.split(". ")[:6] if 6 <= len(s.split()) <= 30]
    records = []
    for number in range(count):
        rng = random.Random(f"{seed}:{prefix}:{number}")
        labels = rng.choice(label_sets)
        items = [str(r["question"]) for r in rng.sample(list(rows), 5)] if number % 2 else rng.sample(sentences, 5)
        user, bot = rng.choice((("User", "Assistant"), ("Human", "AI")))
        turns = "".join(f"{user}: {item}\n{bot}: {rng.choice(labels)}\n\n" for item in items[:-1])
        prompt = (f"System: {rng.choice(('Label', 'Tag', 'Sort'))} every message with one of: {', '.join(labels)}."
                  f"\n\n{turns}{user}: {items[-1]}\n{bot}:")
        records.append({"id": f"{prefix}-{number:05d}", "prompt": prompt, "family": "no_request_label_chat",
                        "shape": "few_shot_labels", "kind": "no_request_label_chat", "role": role, "split": "train",
                        "request_spans": [], "source_id": f"label-chat-{number}", "task_description": ""})
    return records


def _records(rows: Sequence[Mapping[str, Any]], layouts: Sequence[str], *, seed: int, prefix: str,
             role: str) -> list[dict[str, Any]]:
    """One record per row, the rows dealt evenly over ``layouts`` (fit records augmented, :func:`_augment`)."""
    records = []
    for number, row in enumerate(rows):
        rng = random.Random(f"{seed}:{prefix}:{row['id']}")
        layout = layouts[number % len(layouts)]
        family, request = _request(row, rows, rng)
        rendered = render(layout, request, sample_context(row, rng, ("document", "titled", "numbered")), rng)
        if role == "fit":
            rendered = Rendered(*_augment(rendered.prompt, rendered.span, rng))
        records.append({"id": f"{prefix}-{number:05d}", "prompt": rendered.prompt, "family": family,
                        "shape": layout, "kind": "instruction", "role": role,
                        "split": "validation" if layout in HELD_OUT_LAYOUTS else "train",
                        "request_spans": [list(rendered.span)] if rendered.span else [],
                        "source_id": str(row["id"]), "task_description": request})
    return records


def _without_request(documents: Sequence[tuple[str, str]], layouts: Sequence[str], *, seed: int, prefix: str,
                     role: str) -> list[dict[str, Any]]:
    """Documents with a summary or label line (or, one in three, none) in the layouts: no written request."""
    records = []
    for number, (document_id, text) in enumerate(documents):
        rng = random.Random(f"{seed}:{prefix}:{document_id}")
        layout = layouts[number % len(layouts)]
        line = "" if number % 3 == 2 else rng.choice(_SUMMARY_LINES)
        rendered = render(layout, line or "Thanks.", text.strip(), rng)
        if role == "fit":
            rendered = Rendered(*_augment(rendered.prompt, rendered.span, rng))
        family = "no_request_bare" if not line else ("no_request_summary" if line in _SUMMARY_LINES[:4]
                                                     else "no_request_whole_text")
        records.append({"id": f"{prefix}-{number:05d}", "prompt": rendered.prompt, "family": family,
                        "shape": layout, "kind": family, "role": role,
                        "split": "validation" if layout in HELD_OUT_LAYOUTS else "train", "request_spans": [],
                        "source_id": document_id, "task_description": ""})
    return records


def build_layout_set(ctd_path: str, nq_path: str, qa_path: str, summ_path: str, *, seed: int, skip: int,
                     fit_rows: int, check_rows: int, fit_without: int, check_without: int,
                     exclude: Sequence[str] = (), document_offset: int = 340,
                     label_chats: int = 0) -> list[dict[str, Any]]:
    """The fit and check records (see the module docstring)."""
    train_ids = {str(r.get("source_id")) for r in read_jsonl(ctd_path) if r.get("split") == "train"}
    held_ids = {str(r.get("source_id")) for r in read_jsonl(ctd_path) if r.get("split") == "validation"}
    inputs = load_format_inputs(nq_path, qa_path)
    rows = [row for row in (*inputs.nq, *inputs.qa) if str(row["id"]) in train_ids - held_ids]
    random.Random(f"{seed}:instruction-rows").shuffle(rows)  # the instruction set's order: its rows come first
    rows = [row for row in rows[skip:] if str(row["id"]) not in set(exclude)
            and not str(row["question"]).lstrip().startswith("Key:")]
    if len(rows) < fit_rows + check_rows:
        raise ValueError(f"only {len(rows)} rows after the first {skip}; asked for {fit_rows + check_rows}.")
    documents = summ_documents(summ_path, document_offset + fit_without + check_without, seed, 1500)[document_offset:]
    return [*_records(rows[:fit_rows], SEEN_LAYOUTS, seed=seed, prefix="layout-fit", role="fit"),
            *_records(rows[fit_rows: fit_rows + check_rows], tuple(LAYOUTS), seed=seed, prefix="layout-check",
                      role="check"),
            *_without_request(documents[:fit_without], SEEN_LAYOUTS, seed=seed, prefix="layout-none-fit", role="fit"),
            *_without_request(documents[fit_without:], tuple(LAYOUTS), seed=seed, prefix="layout-none-check",
                              role="check"),
            *_label_chats(rows[:fit_rows], documents[:fit_without], label_chats, seed=seed, prefix="layout-labels-fit",
                          role="fit")]


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = record_set_parser("python -m training.curation.layout_set", __doc__, "runs/curation/layout_set")
    parser.add_argument("--skip", type=int, default=1108, help="rows the instruction set uses (600+260+200+48)")
    parser.add_argument("--exclude", default=str(HELDOUT_IDS),
                        help="JSON list of row ids never used (the layout-recall check's held-out train rows)")
    parser.add_argument("--fit-rows", type=int, default=520)
    parser.add_argument("--check-rows", type=int, default=238)
    parser.add_argument("--fit-without", type=int, default=300)
    parser.add_argument("--check-without", type=int, default=51)
    parser.add_argument("--label-chats", type=int, default=60, help="few-shot labelling chats (fit, no request)")
    args = parser.parse_args(argv)
    exclude = json.loads(Path(args.exclude).read_text(encoding="utf-8")) if args.exclude else []
    records = build_layout_set(args.ctd, args.nq, args.qa, args.summ, seed=args.seed, skip=args.skip,
                               fit_rows=args.fit_rows, check_rows=args.check_rows, fit_without=args.fit_without,
                               check_without=args.check_without, exclude=exclude, label_chats=args.label_chats)
    write_record_set(args.out, records, held_out_layouts=sorted(HELD_OUT_LAYOUTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
