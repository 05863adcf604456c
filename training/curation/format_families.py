"""The CTD set's prompt template families: :class:`Template`, the families, and :func:`render`.

A *family* is a prompt pattern (instruction before, after or around the context, question first, chat
turns, markdown, XML, JSON, LangChain / LlamaIndex RAG prompts, LongBench prompts, ...) with small sets of
alternative phrasings picked per prompt, so a family is a pattern rather than one string. Whole families
are held out (:data:`HELD_OUT_FAMILIES`, records with ``split = "validation"``), never single rows.

A filled template says where its request's content is written: the ``[start, end)`` character spans of the
question (with its options), the key sentence, the field list or the final few-shot question, one per
occurrence; none for kinds whose request names nothing to search for. :mod:`training.curation.formats` builds
the data set with these families.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from training.curation.converters import QA_TEMPLATES
from training.curation.format_tasks import KIND_SLOTS, KINDS, REQUEST_KINDS, SHOT_SLOTS

__all__ = [
    "FAMILIES",
    "FAMILIES_BY_KIND",
    "HELD_OUT_FAMILIES",
    "LONGBENCH_FAMILIES",
    "PROBE_FAMILIES",
    "QA_FAMILIES",
    "Span",
    "Template",
    "render",
    "split_of",
]

Span = tuple[int, int]
_SLOT = re.compile(r"\{\{|\}\}|\{([A-Za-z_]+)\}")  # "{{" and "}}" are literal braces


def _slot_names(text: str) -> set[str]:
    return {m.group(1) for m in _SLOT.finditer(text) if m.group(1)}


def _substitute(text: str, values: Mapping[str, str], spanned: str | None = None) -> tuple[str, list[Span]]:
    """One pass over ``text``: ``{name}`` -> ``values[name]``, ``{{``/``}}`` -> braces; inserted values are
    never scanned again. Returns the text and the spans where ``spanned`` was inserted."""
    parts: list[str] = []
    spans: list[Span] = []
    length = last = 0
    for match in _SLOT.finditer(text):
        name = match.group(1)
        if name is None:
            value = match.group(0)[0]
        elif name in values:
            value = values[name]
        else:
            raise ValueError(f"no value for slot {{{name}}} (have {sorted(values)})")
        literal = text[last : match.start()]
        parts += [literal, value]
        length += len(literal)
        if name is not None and name == spanned:
            spans.append((length, length + len(value)))
        length += len(value)
        last = match.end()
    parts.append(text[last:])
    return "".join(parts), spans


@dataclass(frozen=True)
class Template:
    """One template family.

    Attributes:
        name: Family name (the ``family`` of its records).
        kinds: The kinds of :class:`~training.curation.format_tasks.TaskItem` it can render.
        pattern: The prompt with ``{slot}`` placeholders: item values (``{context}``, ``{noun}``, ...),
            ``{request}``, ``{shots}``, and the names of ``choices``; ``{{``/``}}`` are literal braces.
        choices: Alternative phrasings per slot, one picked per prompt (the same one where a slot repeats);
            they may hold item-value slots but no other choice slot.
        request: Alternative wordings of the request (e.g. ``'Key: "{key}"'``); wherever ``{request}`` is
            written, the filled wording is a request span. Empty for kinds without request content.
        shot: The pattern of one few-shot example (shot slots and item values), joined by ``shot_separator``.
    """

    name: str
    kinds: frozenset[str]
    pattern: str
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    request: tuple[str, ...] = ()
    shot: str | None = None
    shot_separator: str = "\n\n"

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise ValueError(f"template family {self.name!r}: {problem}")

    def _problem(self) -> str | None:
        if not self.kinds or not self.kinds <= set(KINDS):
            return f"kinds {sorted(self.kinds)} not all in {KINDS}"
        item_slots = frozenset.intersection(*(KIND_SLOTS[kind] for kind in self.kinds))
        wants_request = self.kinds <= REQUEST_KINDS
        if not wants_request and self.kinds & REQUEST_KINDS:
            return "mixes kinds with and without request content"
        if bool(self.request) != wants_request or ("request" in _slot_names(self.pattern)) != wants_request:
            return "needs {request} and request wordings exactly when its kinds have request content"
        shot_slots = frozenset.intersection(*(SHOT_SLOTS.get(kind, frozenset()) for kind in self.kinds))
        if (self.shot is not None) != bool(shot_slots) or ("shots" in _slot_names(self.pattern)) != bool(shot_slots):
            return "needs {shots} and a shot pattern exactly when its kinds have few-shot examples"
        if not set(self.choices) <= _slot_names(self.pattern):
            return f"choices {sorted(set(self.choices) - _slot_names(self.pattern))} are not in the pattern"
        for alternative in (a for options in self.choices.values() for a in options):
            if not _slot_names(alternative) <= item_slots:
                return f"choice {alternative!r} uses slots other than item values"
        used = _slot_names(self.pattern) - set(self.choices) - {"request", "shots"}
        used |= {n for w in self.request for n in _slot_names(w)}
        used |= {n for options in self.choices.values() for a in options for n in _slot_names(a)}
        if not used <= item_slots:
            return f"uses slots {sorted(used - item_slots)} that {sorted(self.kinds)} items lack"
        if self.shot is not None and not _slot_names(self.shot) <= shot_slots | item_slots:
            return f"shot pattern uses unknown slots {sorted(_slot_names(self.shot) - shot_slots - item_slots)}"
        return None

    def fill(self, values: Mapping[str, str], rng: random.Random,
             shots: Sequence[Mapping[str, str]] = ()) -> tuple[str, list[Span]]:
        """The prompt for ``values`` (and few-shot ``shots``), and the spans of every request occurrence.

        Values are inserted verbatim in one pass, so braces or placeholder-like text inside a context or
        question stay as they are.
        """
        picks = {name: rng.choice(options) for name, options in sorted(self.choices.items())}
        pattern = _SLOT.sub(lambda m: picks.get(m.group(1) or "", m.group(0)), self.pattern)
        slots = dict(values)
        if self.request:
            slots["request"] = _substitute(rng.choice(self.request), values)[0]
        if self.shot is not None:
            slots["shots"] = self.shot_separator.join(_substitute(self.shot, {**values, **s})[0] for s in shots)
        return _substitute(pattern, slots, spanned="request" if self.request else None)


# ------------------------------------------------------------------------------------------ families

_QA_KINDS = ("qa", "mcq")
_Q = ("{question}",)
_TASK = ("Answer the question using the documents below.", "Use the passages below to answer the question.",
         "Read the following text and answer the question.", "Answer the question based on the given context.")
_STYLE = ("Answer briefly.", "Be concise.", "Give a short answer.", "Only give the answer, no explanation.",
          "Keep the answer short and factual.")
_SYSTEM = ("You are a helpful assistant. Answer questions using only the documents provided.",
           "You are a precise research assistant. Base every answer on the given sources and keep it short.",
           "You answer questions about the supplied material. If it does not contain the answer, say so.")


def _family(name: str, kinds: Sequence[str], pattern: str, *, request: tuple[str, ...] = (), shot: str | None = None,
            **choices: tuple[str, ...]) -> Template:
    return Template(name, frozenset(kinds), pattern, choices, request, shot)


def _longbench(name: str) -> Template:
    pattern = QA_TEMPLATES[name].replace("{text}", "{context}").replace("{question}", "{request}")
    return _family(name, _QA_KINDS, pattern, request=_Q)


_QA_FAMILIES = (
    _family("instruction_before", _QA_KINDS, "{task} {style}\n\n{context}\n\n{label} {request}\nAnswer:",
            request=_Q, task=_TASK, style=_STYLE, label=("Question:", "Query:")),
    _family("instruction_after", _QA_KINDS, "{context}\n\n{lead} {request}\n{style}", request=_Q, style=_STYLE,
            lead=("Based on the text above, answer the following question:",
                  "Using only the information above, answer:", "Given the passages above, answer this question:")),
    _family("instruction_around", _QA_KINDS, "{task}\n\n{context}\n\n{task} {style}\n\nQuestion: {request}\nAnswer:",
            request=_Q, task=_TASK, style=_STYLE),
    _family("question_first", _QA_KINDS, "Question: {request}\n\n{hint}\n\n{context}\n\n{style}\nAnswer:", request=_Q,
            style=_STYLE, hint=("Answer it using the documents below.", "The following context may help.",
                                "Find the answer in the text below.")),
    _family("question_twice", _QA_KINDS, "{label} {request}\n\n{context}\n\n{task} {style}\n{label} {request}\nAnswer:",
            request=_Q, task=_TASK, style=_STYLE, label=("Question:", "Q:")),
    _family("chat_turns", _QA_KINDS, "User: {opening}\n\n{context}\n\n{request}\n\nAssistant:", request=_Q,
            opening=("I'm going to give you some documents, then ask a question about them.",
                     "Please read this and answer my question.", "Here is some background material.")),
    _family("chatml", _QA_KINDS, "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\nContext:\n{context}\n\n"
            "Question: {request}<|im_end|>\n<|im_start|>assistant\n", request=_Q, system=_SYSTEM),
    _family("markdown_sections", _QA_KINDS, "### Instruction\n{task} {style}\n\n### Context\n{context}\n\n"
            "### Question\n{request}\n\n### Answer\n", request=_Q, task=_TASK, style=_STYLE),
    _family("xml_tags", _QA_KINDS, "<instructions>{task} {style}</instructions>\n<document>\n{context}\n</document>\n"
            "<question>{request}</question>", request=_Q, task=_TASK, style=_STYLE),
    _family("json_wrapper", _QA_KINDS, '{{\n  "instruction": "{task} {style}",\n  "context": "{context}",\n'
            '  "question": "{request}"\n}}', request=_Q, task=_TASK, style=_STYLE),
    _family("q_a", _QA_KINDS, "{context}\n\nQ: {request}\nA:", request=_Q),
    _family("system_prompt", _QA_KINDS, "System: {system}\n\n{header}\n{context}\n\nUser: {request}\nAssistant:",
            request=_Q, system=_SYSTEM, header=("Documents:", "Sources:", "Reference material:")),
    _family("numbered_instructions", _QA_KINDS, "Follow these steps:\n1. Read the {material} below.\n2. Find the part "
            "that answers this question: {request}\n3. {style}\n\n{context}", request=_Q, style=_STYLE,
            material=("documents", "text", "context")),
    _family("langchain_stuff", _QA_KINDS, "Use the following pieces of context to answer the question at the end. If "
            "you don't know the answer, just say that you don't know, don't try to make up an answer.\n\n{context}\n\n"
            "Question: {request}\nHelpful Answer:", request=_Q),
    _family("langchain_rag_prompt", _QA_KINDS, "You are an assistant for question-answering tasks. Use the following "
            "pieces of retrieved context to answer the question. If you don't know the answer, just say that you "
            "don't know. Use three sentences maximum and keep the answer concise.\nQuestion: {request} \nContext: "
            "{context} \nAnswer:", request=_Q),
    _family("llamaindex_text_qa", _QA_KINDS, "Context information is below.\n---------------------\n{context}\n"
            "---------------------\nGiven the context information and not prior knowledge, answer the query.\n"
            "Query: {request}\nAnswer: ", request=_Q),
    _family("terse", _QA_KINDS, "{context}\n\n{request}", request=_Q),
    _family("task_then_documents", _QA_KINDS, "{ask} {request}\n\n{where}\n\n{context}", request=_Q,
            ask=("I have a question:", "My question is:", "Please help me with this question:"),
            where=("Here are the search results I found:", "You can use these documents:", "Relevant text:")),
    _family("mcq_choose_letter", ("mcq",), "{task}\n\n{context}\n\nQuestion: {request}\n\n{rule}\nAnswer:",
            request=_Q, task=_TASK, rule=(
                "Answer with the letter of the correct option.", "Reply with A, B, C or D only.",
                "Choose the correct option and give its letter.")),
    _family("mcq_exam", ("mcq",), "Read the text and answer the multiple-choice question that follows.\n\n"
            "=== TEXT ===\n{context}\n=== END OF TEXT ===\n\n{request}\n\nYour choice (letter only):", request=_Q),
)
_LONGBENCH_QA = tuple(_longbench(name) for name in QA_TEMPLATES if name != "lost_in_the_middle_kv")

_OTHER_FAMILIES = (
    # kv_lookup: the request span is the sentence naming the key
    _family("lost_in_the_middle_kv", ("kv_lookup",), QA_TEMPLATES["lost_in_the_middle_kv"]
            .replace("{text}", "{context}").replace("{question}", "{request}\nCorresponding value:"),
            request=('Key: "{key}"',)),
    _family("kv_key_first", ("kv_lookup",), "{request}\n\n{context}", request=(
        'What is the value associated with the key "{key}"? The JSON data is below.',
        'Find the value for key "{key}" in the following JSON object.',
        'Look up the key "{key}" in this JSON and return its value.')),
    _family("kv_around", ("kv_lookup",), "Below is a JSON object of key-value pairs. {request}\n\n{context}\n\n"
            "{request}\nValue:",
            request=('Return the value of key "{key}".', 'Which value does the key "{key}" map to?')),
    _family("kv_chat", ("kv_lookup",), "User: Here is a JSON dictionary.\n```json\n{context}\n```\n{request}\n"
            "Assistant:",
            request=('Which value is stored under "{key}"?', 'Can you tell me the value for the key "{key}"?')),
    # field_extraction: the request span is the field list
    _family("extract_before", ("field_extraction",), "{verb} the following fields from the {noun} below: {request}.\n\n"
            "{context}", request=("{fields}",), verb=("Extract", "Pull out", "Find")),
    _family("extract_after", ("field_extraction",), "{context}\n\nFrom the {noun} above, extract these fields:\n"
            "{request}\n\n{output}", request=("{field_lines}",),
            output=("Return one line per field.", "Write 'unknown' for a field the text does not mention.")),
    _family("extract_json", ("field_extraction",), "Fill in a JSON object with information from the {noun}.\n\n"
            "{context}\n\nJSON keys: {request}\n\nJSON:", request=("{field_keys}",)),
    _family("extract_table", ("field_extraction",), "Read the {noun} and complete a markdown table with one row per "
            "field: {request}.\n\n{context}\n\n| field | value |\n|---|---|", request=("{fields}",)),
    # summarise_one
    _family("summarise_before", ("summarise_one",), "{verb} the following {noun}.\n\n{context}",
            verb=("Summarize", "Summarise", "Write a short summary of", "Give a brief overview of")),
    _family("summarise_after", ("summarise_one",), "{context}\n\n{ask}", ask=(
        "Summarize the {noun} above in a few sentences.", "What are the main points of this {noun}?",
        "Write a concise summary of the {noun} above.")),
    _family("longbench_gov_report", ("summarise_one",), "You are given a {noun}. Write a one-page summary of the "
            "{noun}.\n\n{Noun}:\n{context}\n\nNow, write a one-page summary of the {noun}.\n\nSummary:"),
    _family("tldr", ("summarise_one",), "{context}\n\nTL;DR:"),
    _family("summary_chat", ("summarise_one",), "User: {ask}\n\n{context}\nAssistant:", ask=(
        "Can you summarise this {noun} for me?", "Please give me the key points of the following {noun}.")),
    # summarise_many
    _family("longbench_multi_news", ("summarise_many",), "You are given several news passages. Write a one-page "
            "summary of all news. \n\nNews:\n{context}\n\nNow, write a one-page summary of all the news.\n\nSummary:"),
    _family("summarise_all", ("summarise_many",), "{ask}\n\n{context}", ask=(
        "Summarize the main points of all the {unit}s below.", "Write one summary that covers every {unit} below.")),
    _family("sources_markdown", ("summarise_many",), "## Sources\n{context}\n\n## Task\nCombine the sources above "
            "into one summary."),
    _family("digest_bullets", ("summarise_many",), "{context}\n\nWrite a bullet-point digest covering every {unit} "
            "above."),
    # classification
    _family("classify_before", ("classification",), "Classify the {noun} into one of the following categories: "
            "{labels}.\n\n{context}\n\nCategory:"),
    _family("classify_after", ("classification",), "{context}\n\nWhich of these categories best describes the {noun} "
            "above?\n{label_lines}\n\nAnswer with the category name only."),
    _family("classify_json", ("classification",), "Text:\n{context}\n\nAssign a label to the text. Allowed labels: "
            '[{label_quoted}]\nReturn JSON: {{"label": "..."}}'),
    # few_shot_classification
    _family("longbench_trec", ("few_shot_classification",), "Please determine the type of the {noun} below. Here are "
            "some examples of {noun}s.\n\n{shots}\n{Noun}: {context}\nType:", shot="{Noun}: {shot_text}\n"
            "Type: {shot_label}"),
    _family("labelled_examples", ("few_shot_classification",), "Classify each {noun} into one of: {labels}.\n\n"
            "{shots}\n\n{Noun}: {context}\nLabel:", shot="{Noun}: {shot_text}\nLabel: {shot_label}"),
    _family("few_shot_chat_labels", ("few_shot_classification",), "System: Label every message with one of: "
            "{labels}.\n\n{shots}\n\nUser: {context}\nAssistant:", shot="User: {shot_text}\nAssistant: {shot_label}"),
    # few_shot_qa: the request span is the final question
    _family("longbench_triviaqa", ("few_shot_qa",), "Answer the question based on the given passage. Only give me "
            "the answer and do not output any other words. The following are some examples.\n\n{shots}\n\nPassage: "
            "{context}\nQuestion: {request}\nAnswer:", request=_Q,
            shot="Passage: {shot_passage}\nQuestion: {shot_question}\nAnswer: {shot_answer}"),
    _family("qa_pairs_then_documents", ("few_shot_qa",), "{intro}\n\n{shots}\n\nDocuments:\n{context}\n\nQuestion: "
            "{request}\nAnswer:", request=_Q, shot="Question: {shot_question}\nAnswer: {shot_answer}",
            intro=("Here are some example questions with their answers.", "Answer like in these examples.")),
    _family("few_shot_chat_qa", ("few_shot_qa",), "System: You answer trivia questions with short answers, using the "
            "reference documents when they help.\n\n{shots}\n\nReference documents:\n{context}\n\nUser: {request}\n"
            "Assistant:", request=_Q, shot="User: {shot_question}\nAssistant: {shot_answer}"),
    # code_completion
    _family("longbench_lcc", ("code_completion",), "Please complete the code given below. \n{context}Next line of "
            "code:\n"),
    _family("longbench_repobench", ("code_completion",), "Please complete the code given below. \n# Path: {path}\n"
            "{context}Next line of code:\n"),
    _family("fenced_continue", ("code_completion",), "```python\n{context}```\n{ask}", ask=(
        "Continue this code with the next line.", "What is the next line of this Python code?",
        "Write the line that comes next.")),
    _family("code_comment", ("code_completion",), "# {path}\n# Task: write the next line of this file.\n{context}"),
    # bare_document
    _family("bare_text", ("bare_document",), "{context}"),
    _family("bare_fenced", ("bare_document",), "{fence}\n{context}\n{fence}", fence=('"""', "```", "---")),
    _family("bare_file", ("bare_document",), "{header}\n{context}", header=(
        "=== document.txt ===", "[Pasted text]", "Attachment: notes.txt")),
)

# Probe families: QA wrappers written after the request head's layout features were designed (those were
# designed looking at the held-out families' failures), so they measure generalisation to formats nobody tuned
# for. Never dealt into the data set; ``render`` fills them for evaluation only (``training.evaluate --family``).
_PROBE_FAMILIES = (
    _family("probe_yaml", _QA_KINDS, "task: {task} {style}\nquestion: {request}\ndocuments: |\n{context}\n",
            request=_Q, task=_TASK, style=_STYLE),
    _family("probe_inst", _QA_KINDS, "[INST] {task} {style}\n\n{context}\n\n{request} [/INST]", request=_Q,
            task=_TASK, style=_STYLE),
    _family("probe_html", _QA_KINDS, "<p><b>Question:</b> {request}</p>\n<div class=\"context\">\n{context}\n</div>\n"
            "<p>{style}</p>", request=_Q, style=_STYLE),
    _family("probe_brackets", _QA_KINDS, "[CONTEXT]\n{context}\n[/CONTEXT]\n[QUERY] {request}\n[RESPONSE]", request=_Q),
    _family("probe_ticket", _QA_KINDS, "Support ticket #4821\nCustomer asks: {request}\n\nKnowledge base excerpts:\n"
            "{context}\n\nDraft a short reply to the customer.", request=_Q),
)
PROBE_FAMILIES: tuple[str, ...] = tuple(t.name for t in _PROBE_FAMILIES)
_RENDERABLE: Mapping[str, Template] = {t.name: t for t in (*_QA_FAMILIES, *_LONGBENCH_QA, *_PROBE_FAMILIES)}

FAMILIES: Mapping[str, Template] = {t.name: t for t in (*_QA_FAMILIES, *_LONGBENCH_QA, *_OTHER_FAMILIES)}
LONGBENCH_FAMILIES: tuple[str, ...] = (*(t.name for t in _LONGBENCH_QA), "lost_in_the_middle_kv",
                                       "longbench_gov_report", "longbench_multi_news", "longbench_trec",
                                       "longbench_triviaqa", "longbench_lcc", "longbench_repobench")
QA_FAMILIES: tuple[str, ...] = tuple(name for name, t in FAMILIES.items() if t.kinds & set(_QA_KINDS))
HELD_OUT_FAMILIES: frozenset[str] = frozenset({
    # QA: question first, markdown, LlamaIndex RAG, XML, JSON, one multiple-choice family
    "task_then_documents", "markdown_sections", "llamaindex_text_qa", "xml_tags", "json_wrapper", "mcq_exam",
    # one family of most other kinds
    "kv_chat", "extract_table", "summary_chat", "digest_bullets", "classify_json", "few_shot_chat_labels",
    "few_shot_chat_qa", "code_comment", "bare_fenced",
})
FAMILIES_BY_KIND: Mapping[str, tuple[str, ...]] = {
    kind: tuple(name for name, t in FAMILIES.items() if kind in t.kinds) for kind in KINDS
}


def split_of(family: str) -> str:
    """``"validation"`` for a held-out family, else ``"train"``."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")
    return "validation" if family in HELD_OUT_FAMILIES else "train"


def render(family: str, context: str, question: str | None, *, rng: random.Random) -> tuple[str, list[Span]]:
    """Fill a QA family (any of :data:`QA_FAMILIES`) with a context and a question.

    Args:
        family: A family name from :data:`QA_FAMILIES` or :data:`PROBE_FAMILIES` (evaluation only).
        context: Any text; inserted verbatim (braces are safe).
        question: The question, multiple-choice options included; inserted stripped of outer whitespace.
        rng: Picks the family's phrasing alternatives.

    Returns:
        The prompt and the ``(start, end)`` spans of every occurrence of the question in it.

    Raises:
        ValueError: ``family`` is not a QA family, or ``question`` is empty.
    """
    if family not in QA_FAMILIES and family not in PROBE_FAMILIES:
        raise ValueError(f"{family!r} is not a QA family; expected one of {QA_FAMILIES + PROBE_FAMILIES}")
    if question is None or not question.strip():
        raise ValueError("a QA family needs a non-empty question")
    return _RENDERABLE[family].fill({"context": context, "question": question.strip()}, rng)
