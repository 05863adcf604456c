"""CTD and MCQR records from human-annotated QA with supporting sentences (no LLM).

Input rows follow the data root's ``README.md`` (``../shared/data``): ``id, source, context, question, answers,
supporting_sentences, task_type, split, meta``. Only the ``train`` split is ever converted: a ``dev`` row
raises, because ``dev`` is where results are reported.

* MCQR: the context is segmented like at inference; positives are the segments that overlap a gold
  supporting sentence by character span (a gold sentence may cover several segments, and every occurrence
  of it counts); negatives are other segments of the same context, sampled up to ``max_negatives``,
  skipping segments that contain a gold answer string (they would be false negatives).
* CTD: ``prompt`` is the context and the question in a LongBench-style template (picked per row, seeded,
  from the templates that fit the row's ``task_type``); ``task_description`` is the question itself on
  one line, multiple-choice options included (for key-value lookups a spelled-out question) -- the same
  kind of target as the raw query ``q`` of Prompt 1. MCQR keeps the bare question (``meta.question_only``).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from training.curation.ctd import fill_template
from training.curation.sentences import Span, sentences_of

__all__ = [
    "QA_TEMPLATES",
    "TEMPLATES_BY_TASK",
    "hard_negatives",
    "locate_gold_spans",
    "qa_row_to_ctd",
    "qa_row_to_mcqr",
    "require_train_split",
    "task_description_from_question",
]

# LongBench (THUDM/LongBench config/dataset2prompt.json) and lost-in-the-middle prompts, with {context} and
# {input} renamed to the {text} / {question} placeholders of Prompt 2; the last one is Prompt 2's example 1.
QA_TEMPLATES: dict[str, str] = {
    "longbench_multifieldqa_en": (
        "Read the following text and answer briefly.\n\n{text}\n\nNow, answer the following question based on "
        "the above text, only give me the answer and do not output any other words.\n\nQuestion: {question}\n"
        "Answer:"
    ),
    "longbench_qasper": (
        "You are given a scientific article and a question. Answer the question as concisely as you can, using a "
        'single phrase or sentence if possible. If the question cannot be answered based on the information in the '
        'article, write "unanswerable". If the question is a yes/no question, answer "yes", "no", or "unanswerable". '
        "Do not provide any explanation.\n\nArticle: {text}\n\n Answer the question based on the above article as "
        "concisely as you can, using a single phrase or sentence if possible. If the question cannot be answered "
        'based on the information in the article, write "unanswerable". If the question is a yes/no question, '
        'answer "yes", "no", or "unanswerable". Do not provide any explanation.\n\nQuestion: {question}\n\nAnswer:'
    ),
    "longbench_hotpotqa": (
        "Answer the question based on the given passages. Only give me the answer and do not output any other "
        "words.\n\nThe following are given passages.\n{text}\n\nAnswer the question based on the given passages. "
        "Only give me the answer and do not output any other words.\n\nQuestion: {question}\nAnswer:"
    ),
    "lost_in_the_middle_qa": (
        "Write a high-quality answer for the given question using only the provided search results (some of which "
        "might be irrelevant).\n\n{text}\n\nQuestion: {question}\nAnswer:"
    ),
    "lost_in_the_middle_kv": (
        "Extract the value corresponding to the specified key in the JSON object below.\n\nJSON data:\n{text}\n\n"
        "{question}"
    ),
    "tpc_prompt2_example": (
        "You are given a text and a question related to it. Answer the question based on the text.\n"
        "Question: {question}\nText: {text}\nNow answer the question:"
    ),
}

TEMPLATES_BY_TASK: dict[str, tuple[str, ...]] = {
    "single_doc_qa": ("longbench_multifieldqa_en", "longbench_qasper", "tpc_prompt2_example"),
    "multi_doc_qa": ("longbench_hotpotqa", "lost_in_the_middle_qa", "tpc_prompt2_example"),
    "synthetic": ("lost_in_the_middle_kv",),
}
_DEFAULT_TASK = "single_doc_qa"
_KV_QUESTION = re.compile(r'^\s*Key:\s*"(?P<key>[^"]+)"\s*\n?\s*Corresponding value:\s*$')


def require_train_split(row: Mapping[str, Any]) -> None:
    """Raise unless ``row`` belongs to the ``train`` split (``dev`` is for reporting, never for training)."""
    split = row.get("split")
    if split != "train":
        raise ValueError(f"row {row.get('id')!r} has split={split!r}; only the 'train' split may be curated")


def task_description_from_question(row: Mapping[str, Any]) -> str:
    """The CTD target for a QA row: the question on one line, key-value lookups spelled out.

    Multiple-choice options stay (``"Which ...? A. ... B. ..."``): they are part of what the prompt asks,
    and in prompt-agnostic mode they are what lets the encoder find the passage the options talk about
    (measured on dev: BAMBOO paperqa recall 0.33 from the bare stem against 1.0 with the options).
    """
    question = str(row["question"]).strip()
    kv = _KV_QUESTION.match(question)
    if kv:
        return f'What is the value associated with the key "{kv.group("key")}" in the JSON data?'
    return re.sub(r"\s+", " ", question)


def qa_row_to_ctd(row: Mapping[str, Any], *, rng: random.Random) -> tuple[dict[str, Any], str]:
    """One CTD record (context and question in a task-appropriate template, target = the question) and the
    name of the template used."""
    require_train_split(row)
    names = list(TEMPLATES_BY_TASK.get(str(row.get("task_type")), TEMPLATES_BY_TASK[_DEFAULT_TASK]))
    templates = {name: QA_TEMPLATES[name] for name in names}
    instruction = str((row.get("meta") or {}).get("instruction") or "").strip()
    if instruction:  # the benchmark's own instruction is one more realistic template
        templates["dataset_instruction"] = f"{instruction.rstrip('.')}.\n\n{{text}}\n\nQuestion: {{question}}\nAnswer:"
    name = rng.choice(sorted(templates))
    record = {
        "id": f"{row['id']}:ctd",
        "prompt": fill_template(templates[name], str(row["context"]), str(row["question"]).strip()),
        "task_description": task_description_from_question(row),
        "source": str(row.get("source")),
    }
    return record, name


def locate_gold_spans(context: str, sentence: str) -> list[Span]:
    """Character spans of every occurrence of ``sentence`` in ``context`` (whitespace-insensitive fallback)."""
    sentence = sentence.strip()
    if not sentence:
        return []
    spans = [(m.start(), m.start() + len(sentence)) for m in re.finditer(re.escape(sentence), context)]
    if spans:
        return spans
    words = sentence.split()
    pattern = r"\s+".join(re.escape(w) for w in words)
    return [(m.start(), m.end()) for m in re.finditer(pattern, context)]


def qa_row_to_mcqr(
    row: Mapping[str, Any],
    *,
    rng: random.Random,
    max_negatives: int,
    min_sentences: int = 3,
    drop_answer_negatives: bool = True,
    negatives: str = "random",
) -> tuple[dict[str, Any] | None, Counter[str]]:
    """One MCQR record from a QA row, or ``None``; the counter holds rejection reasons and notes.

    ``negatives="random"`` samples up to ``max_negatives`` other segments; ``"hard"`` takes them by
    :func:`hard_negatives` (the gold passage's other sentences, then the distractors' sentences that share
    most words with the question, then random ones).

    Reasons: ``too_few_sentences``, ``no_gold_match`` (no supporting sentence found in the context),
    ``no_negatives``. Notes (the record is kept): ``gold_sentence_not_found``,
    ``negatives_dropped_answer``.
    """
    require_train_split(row)
    notes: Counter[str] = Counter()
    context = str(row["context"])
    spans, sentences = sentences_of(context)
    if len(spans) < min_sentences:
        notes["too_few_sentences"] += 1
        return None, notes
    gold: list[Span] = []
    for sentence in row.get("supporting_sentences") or []:
        found = locate_gold_spans(context, str(sentence))
        if not found:
            notes["gold_sentence_not_found"] += 1
        gold.extend(found)
    positives = _overlapping(spans, gold)
    if not positives:
        notes["no_gold_match"] += 1
        return None, notes
    answers = _answer_strings(row)
    pool = []
    for index, sentence in enumerate(sentences):
        if index in positives:
            continue
        if drop_answer_negatives and any(_contains(sentence, answer) for answer in answers):
            notes["negatives_dropped_answer"] += 1
            continue
        pool.append(index)
    if not pool:
        notes["no_negatives"] += 1
        return None, notes
    if negatives == "hard":
        chosen = hard_negatives(context, spans, sentences, positives, pool, str(row["question"]), max_negatives,
                                rng)
    else:
        chosen = rng.sample(pool, min(max_negatives, len(pool)))
    negative_ids = sorted(chosen)
    meta = row.get("meta") or {}
    record = {
        "id": f"{row['id']}:mcqr",
        "question": re.sub(r"\s+", " ", str(meta.get("question_only") or row["question"]).strip()),
        "sentences": sentences,
        "positives": sorted(positives),
        "negatives": negative_ids,
        "source": str(row.get("source")),
    }
    return record, notes


def _overlapping(spans: Sequence[Span], gold: Sequence[Span]) -> set[int]:
    return {
        i for i, (start, end) in enumerate(spans) if any(start < g_end and g_start < end for g_start, g_end in gold)
    }


def _answer_strings(row: Mapping[str, Any]) -> list[str]:
    # Single letters ("C") and yes/no answers would match everywhere; only distinctive strings guard negatives.
    answers = [str(a).strip() for a in row.get("answers") or []]
    return [a for a in answers if len(a) >= 4 and a.lower() not in {"yes", "no", "none", "true", "false"}]


def _contains(sentence: str, answer: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(answer)}(?!\w)", sentence, re.IGNORECASE) is not None


_PASSAGE_BREAK = re.compile(r"\n[ \t]*\n")
_STOPWORDS = frozenset(
    "a an and are as at be by did do does for from had has have how in is it its of on or that the this to was "
    "were what when where which who whom whose why will with".split()
)


def hard_negatives(context: str, spans: Sequence[Span], sentences: Sequence[str], positives: set[int],
                   pool: Sequence[int], question: str, limit: int, rng: random.Random) -> list[int]:
    """Up to ``limit`` negatives from ``pool``, hardest first.

    Half the room goes to the other sentences of the passages holding a positive (passages are the blocks
    between blank lines, e.g. ``Document [k]`` of lost-in-the-middle or a HotpotQA paragraph), three quarters
    in all to the sentences of any passage that share the most question words (weighted by rarity within the
    context, as BM25 would), and the rest is sampled at random so that easy negatives stay represented.
    """
    breaks = [m.end() for m in _PASSAGE_BREAK.finditer(context)]
    passage = [sum(1 for b in breaks if b <= start) for start, _ in spans]
    gold_passages = {passage[i] for i in positives}
    chosen: list[int] = []
    same = [i for i in pool if passage[i] in gold_passages]
    chosen.extend(rng.sample(same, min(len(same), limit // 2)))
    words = [set(_content_words(text)) for text in sentences]
    frequency = Counter(w for sentence_words in words for w in sentence_words)
    query = set(_content_words(question))
    weight = {w: 1.0 / frequency[w] for w in query if frequency[w]}
    taken = set(chosen)
    ranked = sorted((i for i in pool if i not in taken), key=lambda i: (-sum(weight.get(w, 0.0) for w in words[i]), i))
    lexical = [i for i in ranked if any(w in weight for w in words[i])]
    chosen.extend(lexical[: max(0, (3 * limit) // 4 - len(chosen))])
    taken = set(chosen)
    rest = [i for i in pool if i not in taken]
    chosen.extend(rng.sample(rest, min(len(rest), limit - len(chosen))))
    return chosen


def _content_words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if w not in _STOPWORDS and len(w) > 1]
