"""Extra training layouts for the request head: QA prompts whose request stands where no train family puts it.

The CTD set's train families mostly write the request behind an inline label ("Question: ..."). Real prompts
also put it on its own line under a heading, as a quoted key-value, or alone in the middle of prose. These
families add those layouts to the request head's *training* data only. They are not dealt into the CTD set
(its hash, and the CTD trained on it, stay as they are), share no wording with the held-out or probe
families, and are filled only with questions of rows that the CTD set puts in its ``train`` split, so the
held-out families stay unseen in wording and in questions.

``layout_records`` makes the records; ``training.request_head`` uses them when ``layout_records > 0``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from training.curation.format_families import Template
from training.curation.format_tasks import (
    FormatInputs,
    TaskItem,
    TextPools,
    bare_item,
    row_item,
    summarise_one_item,
    synthetic_kv_item,
)
from training.curation.formats import make_record

__all__ = ["LAYOUT_FAMILIES", "layout_records", "records_digest"]

_KINDS = frozenset({"qa", "mcq"})
_Q = ("{question}",)
_ASK = ("Respond using only the sources provided.", "Work from the material in this file.",
        "Reply with what the sources say.", "Base the reply on these notes alone.")
_BRIEF = ("Keep it to one line.", "A few words are enough.", "No explanation needed.", "State just the fact.")
_HEAD_TASK = ("INSTRUCTIONS", "Instructions\n------------", "== Instructions ==", "**Instructions**")
_HEAD_SOURCES = ("SOURCES", "Sources\n-------", "== Sources ==", "**Sources**", "REFERENCE TEXT")
_SUBJECT = ("Quick question", "Need your help", "About the attached notes", "Fact check", "For tomorrow")
_CLOSING = ("Thanks a lot!", "Cheers, Sam", "Best regards,\nAlex")


def _layout(name: str, pattern: str, kinds: frozenset[str] = _KINDS, **choices: tuple[str, ...]) -> Template:
    shared = {slot: options for slot, options in (("ask", _ASK), ("brief", _BRIEF), ("head_task", _HEAD_TASK),
                                                  ("head_sources", _HEAD_SOURCES), ("subject", _SUBJECT),
                                                  ("closing", _CLOSING)) if "{" + slot + "}" in pattern}
    return Template(name, kinds, pattern, {**shared, **choices}, _Q if kinds == _KINDS else ())


_LAYOUTS = (
    # The request alone on the line under a heading; headings in several plain-text styles (no "#" markdown).
    _layout("layout_headings", "{head_task}\n{ask} {brief}\n\n{head_sources}\n{context}\n\n{head_request}\n"
            "{request}\n\n{head_reply}\n",
            head_request=("QUESTION", "Question\n--------", "== Question ==", "**Question**", "QUERY",
                          "The question", "Question to answer"),
            head_reply=("ANSWER", "Answer\n------", "== Answer ==", "**Answer**", "REPLY")),
    # A configuration file: the request as a quoted value, the context as a multi-line string.
    _layout("layout_toml", '[job]\nnote = "{ask} {brief}"\n{key} = "{request}"\n\n[material]\nbody = """\n'
            '{context}\n"""\n', key=("question", "query", "ask", "user_question", "prompt")),
    # An e-mail: the request alone in the middle of prose, the material forwarded below.
    _layout("layout_email", "Subject: {subject}\n\nHi,\n\n{opening}\n\n{request}\n\n{closing}\n\n"
            "---------- Forwarded material ----------\n{context}",
            opening=("Could you look into something for me?", "I was reading the notes below and got stuck.",
                     "A colleague asked me this and I could not find it.")),
    # A form: the field label alone on its line, the request on the next one.
    _layout("layout_form", "Ticket type: research\nPriority: normal\n{field}\n{request}\nNotes: {brief}\n\n"
            "Attached material:\n{context}\n\nResolution:",
            field=("Request:", "Details of the request:", "What is needed:", "Question from the client:")),
    # The request quoted inside a sentence, before the context.
    _layout("layout_quoted", "{who} sent this: \u201c{request}\u201d\n\n{ask}\n\n{context}\n\n{brief}",
            who=("A reader", "The customer", "Our editor", "Someone on the team")),
)
# Key lookups in the same shells (synthetic JSON objects, as the CTD set's own kv_lookup records): the key's
# line alone under a heading or a field label, or as a quoted value.
_KV = frozenset({"kv_lookup"})
_KV_REQUEST = ('Key: "{key}"', 'Look up "{key}".', 'The value stored under "{key}"', 'key = "{key}"')
_KV_LAYOUTS = (
    Template("layout_headings_kv", _KV, "{head_task}\n{lookup}\n\n{head_sources}\n{context}\n\n{head_request}\n"
             "{request}\n\n{head_reply}\n", {"head_task": _HEAD_TASK, "head_sources": _HEAD_SOURCES,
                                                 "lookup": ("Return the value for the key given below.",
                                                            "Find the key in the JSON object.",
                                                            "Give only the matching value."),
                                                 "head_request": ("KEY", "Key\n---", "== Key ==", "**Lookup**",
                                                                  "QUERY"),
                                                 "head_reply": ("VALUE", "Value\n-----", "== Value ==", "**Value**")},
             _KV_REQUEST),
    Template("layout_form_kv", _KV, "Ticket type: data lookup\nPriority: normal\n{field}\n{request}\n\n"
             "Attached material:\n{context}\n\nResolution:", {"field": ("Request:", "What is needed:",
                                                                          "Lookup:")}, _KV_REQUEST),
)

# The same shells with no written request (a summary, a bare document): the lines under a heading or a field
# label are not a request by their place alone. They keep the head from firing on the shells themselves.
_SUMMARY = frozenset({"summarise_one"})
_BARE = frozenset({"bare_document"})
_NO_REQUEST_LAYOUTS = (
    _layout("layout_headings_summary", "{head_task}\n{summarise}\n\n{head_sources}\n{context}\n\n{head_reply}\n",
            _SUMMARY, summarise=("Summarise this {noun} in a few sentences.", "Write a short overview of the {noun}.",
                                 "Give the gist of the {noun} below."),
            head_reply=("SUMMARY", "Summary\n-------", "== Summary ==", "**Summary**")),
    _layout("layout_email_summary", "Subject: {subject}\n\nHi,\n\n{summarise}\n\n{closing}\n\n"
            "---------- Forwarded material ----------\n{context}", _SUMMARY,
            summarise=("Could you give me the gist of the {noun} below?", "Can you boil the {noun} below down to a "
                       "few lines for me?", "I have no time to read the {noun} below; what are its main points?")),
    _layout("layout_form_summary", "Ticket type: research\nPriority: normal\n{field}\n{summarise}\n\n"
            "Attached material:\n{context}\n\nResolution:", _SUMMARY,
            field=("Request:", "Details of the request:", "What is needed:"),
            summarise=("A short overview of the attached {noun}.", "Summary of the {noun}, half a page at most.")),
    _layout("layout_toml_bare", '[material]\nkind = "{kind}"\nbody = """\n{context}\n"""\n', _BARE,
            kind=("notes", "document", "article", "export")),
    _layout("layout_headings_bare", "{head_sources}\n{context}\n", _BARE),
)
LAYOUT_FAMILIES: Mapping[str, Template] = {t.name: t for t in (*_LAYOUTS, *_KV_LAYOUTS, *_NO_REQUEST_LAYOUTS)}
_QA_LAYOUTS = tuple(sorted(t.name for t in _LAYOUTS))
_NO_REQUEST_NAMES = {kind: tuple(sorted(t.name for t in _NO_REQUEST_LAYOUTS if kind in t.kinds))
                     for kind in ("summarise_one", "bare_document")}


def layout_records(inputs: FormatInputs, train_source_ids: Collection[str], count: int, *, seed: int = 13,
                   pools: TextPools | None = None, without_request: int = 0,
                   key_lookups: int = 0) -> list[dict[str, Any]]:
    """``count`` QA / multiple-choice records in the layout families, dealt evenly, one per source row, and
    ``without_request`` summaries and bare documents in the same shells.

    Args:
        inputs: The rows the CTD set was built from (``load_format_inputs``).
        train_source_ids: The ``source_id`` of the CTD set's ``train`` records; only these rows are used.
        count: QA records wanted (fewer when fewer rows qualify).
        seed: Seeds row order, family dealing and phrasing.
        pools: Texts for the records without a request (``text_pools``); needed when ``without_request > 0``.
        without_request: Records with no written request (half summaries, half bare documents).
        key_lookups: Key-value lookups over synthetic JSON objects.

    Returns:
        Records shaped like the CTD set's (``id``, ``prompt``, ``family``, ``kind``, ``split`` = ``"train"``,
        ``request_spans``, ``source_id``, ``task_description``).
    """
    if min(count, without_request, key_lookups) < 0:
        raise ValueError(f"count, without_request and key_lookups must be >= 0, got {count}, {without_request} "
                         f"and {key_lookups}.")
    if without_request and pools is None:
        raise ValueError("without_request > 0 needs the text pools (training.curation.format_tasks.text_pools).")
    rng = random.Random(f"{seed}:layouts")
    rows = [row for row in (*inputs.nq, *inputs.qa) if str(row["id"]) in train_source_ids]
    rng.shuffle(rows)
    placed: list[tuple[TaskItem, str]] = []
    for row in rows:
        if len(placed) >= count:
            break
        item = row_item(row, rng)
        if item.kind in _KINDS:
            placed.append((item, _QA_LAYOUTS[len(placed) % len(_QA_LAYOUTS)]))
    kv_names = sorted(t.name for t in _KV_LAYOUTS)
    placed += [(synthetic_kv_item(rng), kv_names[number % len(kv_names)]) for number in range(key_lookups)]
    for number in range(without_request):
        kind = ("summarise_one", "bare_document")[number % 2]
        make = summarise_one_item if kind == "summarise_one" else bare_item
        names = _NO_REQUEST_NAMES[kind]
        placed.append((make(pools, rng), names[(number // 2) % len(names)]))  # type: ignore[arg-type]
    ids = [f"layout-{item.kind}-{number:05d}" for number, (item, _) in enumerate(placed, 1)]
    return [make_record(record_id, item, LAYOUT_FAMILIES[family], "train", random.Random(f"{seed}:render:{record_id}"))
            for record_id, (item, family) in zip(ids, placed)]


def records_digest(records: Sequence[Mapping[str, Any]]) -> str:
    """First 16 hex digits of the SHA-256 of the records' prompts and spans (recorded in the head's summary)."""
    digest = hashlib.sha256()
    for record in records:
        digest.update(f"{record['id']}\0{record['prompt']}\0{record['request_spans']}\0".encode("utf-8"))
    return digest.hexdigest()[:16]
