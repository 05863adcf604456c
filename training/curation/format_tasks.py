"""Task material for the multi-format CTD set: real rows and texts turned into requests, before any template.

A :class:`TaskItem` holds what one prompt asks and the material it is asked about: the slot values a
template family fills (``context``, ``question``, ``key``, ``fields``, ``labels``, ...), optional few-shot
examples, and the target ``task_description``. :mod:`training.curation.formats` puts items into template
families and writes the data set; nothing here knows about templates.

Material, all real and offline:

* QA rows: ``nq_train.jsonl.gz`` and the ``train`` rows of ``qa_dev.jsonl`` whose context does not also
  occur in a non-train row (as :func:`training.curation.pipeline.load_inputs` does). A non-train row that
  reaches a builder raises (:func:`training.curation.converters.require_train_split`).
* Texts: the unique Wikipedia passages of the NQ contexts, the HotpotQA paragraph sets, the BAMBOO
  papers, meeting transcripts and Wikipedia articles of the train rows, and Python standard-library files.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis.passages import PASSAGE_STYLES, Passage, format_passages, hotpot_paragraphs, nq_passages
from training.common.jsonl import read_jsonl
from training.curation.converters import require_train_split, task_description_from_question

__all__ = [
    "KINDS",
    "KIND_SLOTS",
    "REQUEST_KINDS",
    "SHOT_SLOTS",
    "CodeFile",
    "Document",
    "FormatInputs",
    "PassageSet",
    "TaskItem",
    "TextPools",
    "bare_item",
    "classification_item",
    "code_item",
    "extraction_item",
    "few_shot_classification_item",
    "few_shot_qa_item",
    "load_format_inputs",
    "nq_mcq_item",
    "question_type",
    "row_item",
    "stdlib_code_files",
    "summarise_many_item",
    "summarise_one_item",
    "synthetic_kv_item",
    "text_pools",
]

# Slot values every item of a kind provides; templates may use these plus ``request`` and ``shots``.
KIND_SLOTS: Mapping[str, frozenset[str]] = {
    "qa": frozenset({"context", "question"}),
    "mcq": frozenset({"context", "question"}),
    "kv_lookup": frozenset({"context", "key"}),
    "few_shot_qa": frozenset({"context", "question"}),
    "field_extraction": frozenset({"context", "noun", "fields", "field_lines", "field_keys"}),
    "summarise_one": frozenset({"context", "noun", "Noun"}),
    "summarise_many": frozenset({"context", "unit"}),
    "classification": frozenset({"context", "noun", "labels", "label_lines", "label_quoted"}),
    "few_shot_classification": frozenset({"context", "noun", "Noun", "labels"}),
    "code_completion": frozenset({"context", "path"}),
    "bare_document": frozenset({"context"}),
}
KINDS: tuple[str, ...] = tuple(KIND_SLOTS)
# Kinds whose request names content to search for; their records carry request spans.
REQUEST_KINDS = frozenset({"qa", "mcq", "kv_lookup", "few_shot_qa", "field_extraction"})
SHOT_SLOTS: Mapping[str, frozenset[str]] = {
    "few_shot_qa": frozenset({"shot_question", "shot_answer", "shot_passage"}),
    "few_shot_classification": frozenset({"shot_text", "shot_label"}),
}

_KV_QUESTION = re.compile(r'^\s*Key:\s*"(?P<key>[^"]+)"')
_NOUN_BY_SOURCE = (("paperqa", "paper"), ("meetingqa", "transcript"), ("altqa", "article"))
_QUESTION_TYPES = (
    ("person", re.compile(r"^(who|whom|whose|who's)\b")),
    ("date", re.compile(r"^(when|what year|which year|in what year|what date|what day)\b")),
    ("location", re.compile(r"^(where|what country|which country|what city|which city|what state)\b")),
    ("number", re.compile(r"^(how many|how much|how long|how old|how far|how tall)\b")),
)
_WIKI_TOPICS = ("sports", "politics", "science", "music", "film and television", "history", "geography", "business",
                "religion", "literature", "technology", "health", "military", "law")
_TOPIC_LABELS: Mapping[str, tuple[str, ...]] = {
    "passage": _WIKI_TOPICS,
    "article": _WIKI_TOPICS,
    "paper": ("natural language processing", "computer vision", "speech processing", "robotics",
              "information retrieval", "machine learning theory", "data mining"),
    "transcript": ("health", "transport", "education", "economy", "environment", "housing", "agriculture",
                   "public safety"),
}
_GENRES = ("encyclopedia article", "scientific paper", "meeting transcript", "source code")
_FIELDS: Mapping[str, tuple[str, ...]] = {
    "person": ("full name", "birth date", "birthplace", "nationality", "occupation", "notable works",
               "years active", "death date"),
    "work": ("title", "release date", "creator", "genre", "main cast", "production company", "original language"),
    "organisation": ("name", "founding date", "founder", "headquarters", "industry", "key people"),
    "event": ("event name", "date", "location", "participants", "outcome", "casualties"),
    "place": ("name", "country", "population", "area", "founding date", "notable landmarks"),
    "generic": ("main subject", "dates mentioned", "people mentioned", "places mentioned",
                "organisations mentioned", "numbers mentioned"),
    "paper": ("research problem", "proposed method", "datasets", "evaluation metrics", "baselines", "main result"),
    "transcript": ("speakers", "topics discussed", "decisions made", "questions raised", "action items"),
}
# What a Wikipedia text defines ("X is an American actor", "X is a 1994 film"): the first match, checked in
# this order on the text's opening, picks the field set; "generic" otherwise.
_DEFINES = r"\b(?:is|was|are|were) (?:an?|the) (?:[\w'-]+,? ){0,6}?"
_SUBJECT_CUES = tuple((subject, re.compile(pattern)) for subject, pattern in (
    ("person", r"\((?:born|b\.) |" + _DEFINES + r"(?:actor|actress|singer|songwriter|musician|rapper|politician|"
               r"player|author|writer|director|producer|comedian|painter|scientist|poet|footballer|businessman)\b"),
    ("work", _DEFINES + r"(?:film|television series|TV series|sitcom|song|single|album|novel|book|video game|"
             r"musical|play|episode|comic)\b"),
    ("organisation", _DEFINES + r"(?:company|corporation|university|college|organi[sz]ation|band|team|club|party|"
                     r"agency|league)\b"),
    ("event", _DEFINES + r"(?:war|battle|election|earthquake|hurricane|championship|tournament|festival)\b"),
    ("place", _DEFINES + r"(?:city|town|village|county|state|province|country|island|river|lake|mountain|region|"
              r"capital|park)\b"),
))
_SKIPPED_STDLIB_DIRS = frozenset({"site-packages", "dist-packages", "test", "tests", "idlelib", "encodings",
                                  "lib2to3", "turtledemo", "__pycache__"})


@dataclass(frozen=True)
class TaskItem:
    """One request with its material, ready to be put into a template family.

    Attributes:
        kind: One of :data:`KINDS`.
        values: Slot values; at least :data:`KIND_SLOTS` ``[kind]``.
        task_description: The target: one sentence stating the request.
        source: Where the material comes from (data set or ``python-stdlib``).
        source_id: The row id, passage title or file range the material was taken from.
        shots: Few-shot examples, each with the :data:`SHOT_SLOTS` of its kind.
    """

    kind: str
    values: Mapping[str, str]
    task_description: str
    source: str
    source_id: str
    shots: tuple[Mapping[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KIND_SLOTS:
            raise ValueError(f"unknown kind {self.kind!r}; expected one of {KINDS}")
        missing = KIND_SLOTS[self.kind] - set(self.values)
        if missing:
            raise ValueError(f"{self.kind} item {self.source_id!r} lacks slot values {sorted(missing)}")
        for shot in self.shots:
            if set(shot) != SHOT_SLOTS.get(self.kind, frozenset()):
                raise ValueError(f"{self.kind} item {self.source_id!r} has a shot with slots {sorted(shot)}")


@dataclass(frozen=True)
class PassageSet:
    """The passages of one NQ context or HotpotQA row."""

    passages: tuple[Passage, ...]
    source: str
    source_id: str


@dataclass(frozen=True)
class Document:
    """A long text of a train row, named by what it is (``paper``, ``transcript``, ``article``)."""

    text: str
    noun: str
    source: str
    source_id: str


@dataclass(frozen=True)
class CodeFile:
    """A Python file: its path and the name it is cited by."""

    path: Path
    name: str


@dataclass(frozen=True)
class FormatInputs:
    """The usable rows: NQ train rows, qa_dev train rows without dev overlap, and what was skipped."""

    nq: tuple[dict[str, Any], ...]
    qa: tuple[dict[str, Any], ...]
    skipped: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TextPools:
    """Texts for the kinds that are not built around a row's question."""

    passages: tuple[Passage, ...]
    passage_sets: tuple[PassageSet, ...]
    documents: tuple[Document, ...]
    code_files: tuple[CodeFile, ...]


# ------------------------------------------------------------------------------------------ inputs


def load_format_inputs(nq_path: str | Path, qa_path: str | Path) -> FormatInputs:
    """Train rows of both files; rows whose context also occurs in a non-train ``qa_path`` row are left out.

    Args:
        nq_path: ``nq_train.jsonl.gz`` (all ``train``).
        qa_path: ``qa_dev.jsonl``; only its ``train`` rows are kept.

    Returns:
        The rows in file order, and the skipped counts by file and reason (``qa:split_dev``,
        ``qa:context_also_in_dev``, ...).
    """
    held_out = {_text_hash(row["context"]) for row in read_jsonl(qa_path) if row.get("split") != "train"}
    skipped: Counter[str] = Counter()
    kept: dict[str, tuple[dict[str, Any], ...]] = {}
    for name, path in (("nq", nq_path), ("qa", qa_path)):
        rows = []
        for row in read_jsonl(path):
            if row.get("split") != "train":
                skipped[f"{name}:split_{row.get('split')}"] += 1
            elif _text_hash(row["context"]) in held_out:
                skipped[f"{name}:context_also_in_dev"] += 1
            else:
                rows.append(row)
        kept[name] = tuple(rows)
    return FormatInputs(kept["nq"], kept["qa"], dict(sorted(skipped.items())))


def text_pools(inputs: FormatInputs, stdlib: str | Path, min_passage_words: int = 60) -> TextPools:
    """Unique passages, passage sets, long documents and code files of ``inputs`` and the ``stdlib`` tree.

    Passages shorter than ``min_passage_words`` stay in their sets but are not used alone; sets of fewer
    than three passages are left out.
    """
    passages: dict[Passage, None] = {}
    passage_sets: list[PassageSet] = []
    documents: dict[str, Document] = {}
    for row in (*inputs.nq, *inputs.qa):
        require_train_split(row)
        source = str(row.get("source"))
        source_id = str(row["id"])
        nq = nq_passages(row)
        if nq:
            passages.update(dict.fromkeys(p for p in nq if len(p.text.split()) >= min_passage_words))
            passage_sets.append(PassageSet(tuple(nq), source, source_id))
        elif source.startswith("hotpotqa"):
            paragraphs = hotpot_paragraphs(str(row["context"]))
            if len(paragraphs) >= 3:
                passage_sets.append(PassageSet(tuple(paragraphs), source, source_id))
        else:
            noun = next((n for cue, n in _NOUN_BY_SOURCE if cue in source), None)
            if noun is not None:
                documents.setdefault(_text_hash(row["context"]), Document(row["context"], noun, source, source_id))
    return TextPools(tuple(passages), tuple(passage_sets), tuple(documents.values()), stdlib_code_files(stdlib))


def stdlib_code_files(stdlib: str | Path, min_lines: int = 60) -> tuple[CodeFile, ...]:
    """Python files of the standard library at ``stdlib``, sorted by path, without tests and vendored trees."""
    root = Path(stdlib)
    files = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if _SKIPPED_STDLIB_DIRS.intersection(relative.parts[:-1]):
            continue
        with open(path, encoding="utf-8", errors="replace") as handle:
            if sum(1 for _ in handle) < min_lines:
                continue
        files.append(CodeFile(path, relative.as_posix()))
    if not files:
        raise ValueError(f"no Python files of at least {min_lines} lines under {root}")
    return tuple(files)


def question_type(question: str) -> str | None:
    """``person``, ``date``, ``location`` or ``number`` by the question's opening words, else ``None``."""
    text = question.strip().lower()
    return next((label for label, cue in _QUESTION_TYPES if cue.match(text)), None)


# ------------------------------------------------------------------------------------------ request kinds


def row_item(row: Mapping[str, Any], rng: random.Random) -> TaskItem:
    """A QA row as it is: ``kv_lookup`` for key-value rows, ``mcq`` when it has options, else ``qa``.

    NQ contexts are cut to a random 3-20 of their passages (the gold one always kept, original order) and
    sometimes relabelled; other contexts stay whole. Raises on a non-train row.
    """
    require_train_split(row)
    question = str(row["question"]).strip()
    target = task_description_from_question(row)
    source = str(row.get("source"))
    source_id = str(row["id"])
    kv = _KV_QUESTION.match(question)
    if kv:
        return TaskItem("kv_lookup", {"context": str(row["context"]), "key": kv.group("key")}, target, source,
                        source_id)
    kind = "mcq" if (row.get("meta") or {}).get("options") else "qa"
    context = _nq_context(row, rng, 3, 20) if nq_passages(row) else str(row["context"])
    return TaskItem(kind, {"context": context, "question": question}, target, source, source_id)


def nq_mcq_item(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> TaskItem:
    """An NQ question with four options labelled A-D: its first answer and three answers of ``pool`` rows
    (of the same question type when there are enough), shuffled. The target keeps the options."""
    require_train_split(row)
    gold = str(row["answers"][0]).strip()
    taken = {str(a).strip().casefold() for a in row["answers"]}
    kind = question_type(str(row["question"]))
    candidates = [r for r in pool if r["id"] != row["id"]]
    same_type = [r for r in candidates if question_type(str(r["question"])) == kind]
    distractors: list[str] = []
    for other in rng.sample(same_type, len(same_type)) + rng.sample(candidates, len(candidates)):
        answer = str(other["answers"][0]).strip()
        if answer and answer.casefold() not in taken:
            distractors.append(answer)
            taken.add(answer.casefold())
        if len(distractors) == 3:
            break
    if len(distractors) < 3:
        raise ValueError(f"pool too small for three distractor answers to {row['id']!r}")
    options = [gold, *distractors]
    rng.shuffle(options)
    label = rng.choice(("{}. ", "{}) ", "({}) "))
    question = str(row["question"]).strip() + "\n" + "\n".join(
        label.format(letter) + option for letter, option in zip("ABCD", options))
    target = task_description_from_question({"question": question})
    context = _nq_context(row, rng, 3, 20)
    return TaskItem("mcq", {"context": context, "question": question}, target, str(row.get("source")),
                    f"{row['id']}:options")


def few_shot_qa_item(row: Mapping[str, Any], pool: Sequence[Mapping[str, Any]], rng: random.Random) -> TaskItem:
    """2-6 question/answer pairs of other ``pool`` rows (with their gold passages) as shots, then ``row``'s
    question over 3-8 of its passages; the request is the final question only."""
    require_train_split(row)
    question = str(row["question"]).strip()
    others = [r for r in pool if r["id"] != row["id"] and str(r["question"]).strip() != question]
    if len(others) < 6:
        raise ValueError(f"pool too small for few-shot examples around {row['id']!r}")
    shots = []
    for shot in rng.sample(others, rng.randint(2, 6)):
        require_train_split(shot)
        gold = nq_passages(shot)[int(shot["meta"]["gold_doc_index"])]
        shots.append({"shot_question": str(shot["question"]).strip(), "shot_answer": str(shot["answers"][0]),
                      "shot_passage": f"(Title: {gold.title}) {gold.text}"})
    return TaskItem("few_shot_qa", {"context": _nq_context(row, rng, 3, 8), "question": question},
                    task_description_from_question(row), str(row.get("source")), f"{row['id']}:few_shot",
                    tuple(shots))


def synthetic_kv_item(rng: random.Random) -> TaskItem:
    """A JSON object of 20-80 random uuid keys and values, like lost-in-the-middle's KV retrieval."""
    pairs = {_uuid(rng): _uuid(rng) for _ in range(rng.randint(20, 80))}
    key = rng.choice(list(pairs))
    indent = rng.choice((None, 1, 2))
    context = json.dumps(pairs, indent=indent) if indent else json.dumps(pairs).replace('", "', '",\n "')
    target = f'What is the value associated with the key "{key}" in the JSON data?'
    return TaskItem("kv_lookup", {"context": context, "key": key}, target, "synthetic_kv", f"kv:{key}")


def extraction_item(pools: TextPools, rng: random.Random) -> TaskItem:
    """2-5 fields to extract, chosen by what the text is about (a person, a film, a paper, a meeting...)."""
    text, noun, source, source_id = _pick_text(pools, rng, 2000, 8000)
    subject = noun if noun in ("paper", "transcript") else _subject(text[:400])
    fields = _ordered_sample(_FIELDS[subject], rng.randint(2, 5), rng)
    values = {
        "context": text,
        "noun": noun,
        "fields": ", ".join(fields),
        "field_lines": "\n".join(f"- {f}" for f in fields),
        "field_keys": ", ".join(json.dumps(f.replace(" ", "_")) for f in fields),
    }
    return TaskItem("field_extraction", values, f"Extract the {_and_list(fields)} from the text.", source,
                    source_id)


# ------------------------------------------------------------------------------------------ kinds without request


def summarise_one_item(pools: TextPools, rng: random.Random) -> TaskItem:
    """One passage or one long document (paper, transcript, article) to summarise."""
    text, noun, source, source_id = _pick_text(pools, rng, 3000, 12000)
    values = {"context": text, "noun": noun, "Noun": noun.capitalize()}
    return TaskItem("summarise_one", values, f"Summarise the main points of the {noun}.", source, source_id)


def summarise_many_item(pools: TextPools, rng: random.Random) -> TaskItem:
    """3-10 passages of one NQ context or HotpotQA paragraph set, relabelled ``Passage k:`` or ``Document k``."""
    group = rng.choice(pools.passage_sets)
    chosen = _ordered_sample(group.passages, rng.randint(3, min(10, len(group.passages))), rng)
    style = rng.choice(PASSAGE_STYLES)
    unit = "passage" if style == "passage" else "document"
    return TaskItem("summarise_many", {"context": format_passages(chosen, style), "unit": unit},
                    "Summarise the main points of all the passages.", group.source, group.source_id)


def classification_item(pools: TextPools, rng: random.Random) -> TaskItem:
    """A text and 4-6 topic labels that suit what it is; the target lists the labels."""
    text, noun, source, source_id = _pick_text(pools, rng, 1500, 6000)
    labels = rng.sample(_TOPIC_LABELS[noun], rng.randint(4, 6))
    values = {
        "context": text,
        "noun": noun,
        "labels": ", ".join(labels),
        "label_lines": "\n".join(f"- {label}" for label in labels),
        "label_quoted": ", ".join(json.dumps(label) for label in labels),
    }
    return TaskItem("classification", values, f"Classify the text into one of: {', '.join(labels)}.", source,
                    source_id)


def few_shot_classification_item(pools: TextPools, questions: Sequence[Mapping[str, Any]],
                                 rng: random.Random) -> TaskItem:
    """Labelled examples then one more item: NQ questions by answer type (TREC-like, 8-30 shots), or text
    snippets by genre (4-10 shots)."""
    for row in questions:
        require_train_split(row)
    typed = [(str(r["question"]).strip(), question_type(str(r["question"])), str(r["id"])) for r in questions]
    typed = [(text, label, row_id) for text, label, row_id in typed if label]
    if typed and rng.random() < 0.5:
        picked = rng.sample(typed, min(len(typed), rng.randint(9, 31)))
        labels = tuple(label for label, _ in _QUESTION_TYPES)
        noun = "question"
        source = "nq_question_types"
    else:
        picked = [_genre_snippet(pools, rng) for _ in range(rng.randint(5, 11))]
        labels = _GENRES
        noun = "text"
        source = "genre_snippets"
    final, _, final_id = picked[-1]
    shots = picked[:-1]
    values = {"context": final, "noun": noun, "Noun": noun.capitalize(), "labels": ", ".join(labels)}
    return TaskItem("few_shot_classification", values, f"Classify the {noun} into one of: {', '.join(labels)}.",
                    source, final_id, tuple({"shot_text": text, "shot_label": label} for text, label, _ in shots))


def code_item(pools: TextPools, rng: random.Random) -> TaskItem:
    """40-150 lines of a standard-library file, ending just before a non-blank line (the one to write)."""
    code = rng.choice(pools.code_files)
    lines = _code_lines(code.path)
    size = rng.randint(40, min(150, len(lines) - 1))
    starts = [i for i in range(len(lines) - size) if lines[i + size].strip()]
    top_level = [i for i in starts if lines[i][:1].isalpha()]
    start = rng.choice(top_level or starts)
    chunk = "".join(f"{line}\n" for line in lines[start : start + size])
    target = "Complete the next line of the given code."
    return TaskItem("code_completion", {"context": chunk, "path": code.name}, target, "python-stdlib",
                    f"{code.name}:{start + 1}-{start + size}")


def bare_item(pools: TextPools, rng: random.Random) -> TaskItem:
    """A document with no instruction: 2-4 titled passages or a long document."""
    if rng.random() < 0.4:
        group = rng.choice(pools.passage_sets)
        chosen = _ordered_sample(group.passages, rng.randint(2, 4), rng)
        text = format_passages(chosen, "titled")
        source = group.source
        source_id = group.source_id
    else:
        document = rng.choice(pools.documents)
        text = _clip(document.text, rng.randint(2000, 12000))
        source = document.source
        source_id = document.source_id
    return TaskItem("bare_document", {"context": text}, "Summarise the main points of the text.", source, source_id)


# ------------------------------------------------------------------------------------------ helpers


def _nq_context(row: Mapping[str, Any], rng: random.Random, low: int, high: int) -> str:
    """A random ``low``-``high`` of the row's passages with the gold one, in order; 60 % in the original style."""
    passages = nq_passages(row)
    gold = int(row["meta"]["gold_doc_index"])
    others = [i for i in range(len(passages)) if i != gold]
    keep = sorted([gold, *rng.sample(others, rng.randint(low, min(high, len(passages))) - 1)])
    style = "document" if rng.random() < 0.6 else rng.choice(PASSAGE_STYLES[1:])
    return format_passages([passages[i] for i in keep], style)


def _pick_text(pools: TextPools, rng: random.Random, low: int, high: int) -> tuple[str, str, str, str]:
    """``(text, noun, source, source_id)``: a Wikipedia passage (40 %) or a document clipped to ``low``-``high``
    characters."""
    if rng.random() < 0.4:
        passage = rng.choice(pools.passages)
        return f"{passage.title}\n{passage.text}", "passage", "nq_passages", passage.title
    document = rng.choice(pools.documents)
    return _clip(document.text, rng.randint(low, high)), document.noun, document.source, document.source_id


def _genre_snippet(pools: TextPools, rng: random.Random) -> tuple[str, str, str]:
    """``(snippet, genre, where from)``: a passage, 4-12 code lines, or 250-600 characters of a paper or meeting."""
    genre = rng.choice(_GENRES)
    if genre == "encyclopedia article":
        passage = rng.choice(pools.passages)
        return passage.text, genre, passage.title
    if genre == "source code":
        code = rng.choice(pools.code_files)
        lines = _code_lines(code.path)
        start = rng.choice([i for i in range(len(lines) - 12) if lines[i].strip()])
        end = start + rng.randint(4, 12)
        return "\n".join(lines[start:end]).rstrip(), genre, f"{code.name}:{start + 1}-{end}"
    noun = "paper" if genre == "scientific paper" else "transcript"
    document = rng.choice([d for d in pools.documents if d.noun == noun])
    start = rng.randrange(max(1, len(document.text) - 600))
    return _clip(document.text[start:].lstrip(), rng.randint(250, 600)), genre, document.source_id


def _subject(opening: str) -> str:
    return next((subject for subject, cue in _SUBJECT_CUES if cue.search(opening)), "generic")


def _clip(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters, cut after the last line break or sentence end past half of it."""
    if len(text) <= limit:
        return text.strip()
    head = text[:limit]
    cut = max(head.rfind("\n"), head.rfind(". ") + 1)
    return (head[:cut] if cut > limit // 2 else head).strip()


def _ordered_sample(items: Sequence[Any], count: int, rng: random.Random) -> list[Any]:
    return [items[i] for i in sorted(rng.sample(range(len(items)), min(count, len(items))))]


def _and_list(words: Iterable[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _text_hash(text: str) -> str:
    return hashlib.sha1(str(text).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=256)
def _code_lines(path: Path) -> tuple[str, ...]:
    return tuple(path.read_text(encoding="utf-8", errors="replace").splitlines())
