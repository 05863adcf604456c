"""Task prompt templates, answer lengths, metrics and Table 1 categories of LongBench (and qa_dev).

The LongBench strings follow the benchmark's ``config/dataset2prompt.json`` and
``config/dataset2maxlen.json`` (English tasks). Templates use two placeholders only, ``{context}``
and ``{input}``; :func:`fill_template` substitutes them in one pass so braces inside a document are
never interpreted.
"""

from __future__ import annotations

import re

__all__ = [
    "DATASET2PROMPT",
    "DATASET2MAXLEN",
    "DATASET2METRIC",
    "DATASET2CATEGORY",
    "LONGBENCH_CATEGORIES",
    "NO_CHAT_TEMPLATE",
    "QA_DEV_TEMPLATES",
    "fill_template",
    "instruction_query",
]

_QA_PASSAGES = (
    "Answer the question based on the given passages. Only give me the answer and do not output any other "
    "words.\n\nThe following are given passages.\n{context}\n\nAnswer the question based on the given passages. "
    "Only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:"
)

DATASET2PROMPT: dict[str, str] = {
    "narrativeqa": (
        "You are given a story, which can be either a novel or a movie script, and a question. Answer the question "
        "as concisely as you can, using a single phrase if possible. Do not provide any explanation.\n\nStory: "
        "{context}\n\nNow, answer the question based on the story as concisely as you can, using a single phrase "
        "if possible. Do not provide any explanation.\n\nQuestion: {input}\n\nAnswer:"
    ),
    "qasper": (
        "You are given a scientific article and a question. Answer the question as concisely as you can, using a "
        "single phrase or sentence if possible. If the question cannot be answered based on the information in "
        'the article, write "unanswerable". If the question is a yes/no question, answer "yes", "no", or '
        '"unanswerable". Do not provide any explanation.\n\nArticle: {context}\n\n Answer the question based on '
        "the above article as concisely as you can, using a single phrase or sentence if possible. If the question "
        'cannot be answered based on the information in the article, write "unanswerable". If the question is a '
        'yes/no question, answer "yes", "no", or "unanswerable". Do not provide any explanation.\n\nQuestion: '
        "{input}\n\nAnswer:"
    ),
    "multifieldqa_en": (
        "Read the following text and answer briefly.\n\n{context}\n\nNow, answer the following question based on "
        "the above text, only give me the answer and do not output any other words.\n\nQuestion: {input}\nAnswer:"
    ),
    "hotpotqa": _QA_PASSAGES,
    "2wikimqa": _QA_PASSAGES,
    "musique": _QA_PASSAGES,
    "gov_report": (
        "You are given a report by a government agency. Write a one-page summary of the report.\n\nReport:\n"
        "{context}\n\nNow, write a one-page summary of the report.\n\nSummary:"
    ),
    "qmsum": (
        "You are given a meeting transcript and a query containing a question or instruction. Answer the query in "
        "one or more sentences.\n\nTranscript:\n{context}\n\nNow, answer the query based on the above meeting "
        "transcript in one or more sentences.\n\nQuery: {input}\nAnswer:"
    ),
    "multi_news": (
        "You are given several news passages. Write a one-page summary of all news. \n\nNews:\n{context}\n\nNow, "
        "write a one-page summary of all the news.\n\nSummary:"
    ),
    "trec": (
        "Please determine the type of the question below. Here are some examples of questions.\n\n{context}\n{input}"
    ),
    "triviaqa": (
        "Answer the question based on the given passage. Only give me the answer and do not output any other "
        "words. The following are some examples.\n\n{context}\n\n{input}"
    ),
    "samsum": ("Summarize the dialogue into a few short sentences. The following are some examples.\n\n"
               "{context}\n\n{input}"),
    "passage_count": (
        "There are some paragraphs below sourced from Wikipedia. Some of them may be duplicates. Please carefully "
        "read these paragraphs and determine how many unique paragraphs there are after removing duplicates. In "
        "other words, how many non-repeating paragraphs are there in total?\n\n{context}\n\nPlease enter the final "
        "count of unique paragraphs after removing duplicates. The output format should only contain the number, "
        "such as 1, 2, 3, and so on.\n\nThe final answer is: "
    ),
    "passage_retrieval_en": (
        "Here are 30 paragraphs from Wikipedia, along with an abstract. Please determine which paragraph the "
        "abstract is from.\n\n{context}\n\nThe following is an abstract.\n\n{input}\n\nPlease enter the number of "
        'the paragraph that the abstract is from. The answer format must be like "Paragraph 1", "Paragraph 2", '
        "etc.\n\nThe answer is: "
    ),
    "lcc": "Please complete the code given below. \n{context}Next line of code:\n",
    "repobench-p": "Please complete the code given below. \n{context}{input}Next line of code:\n",
}

DATASET2MAXLEN: dict[str, int] = {
    "narrativeqa": 128, "qasper": 128, "multifieldqa_en": 64, "hotpotqa": 32, "2wikimqa": 32, "musique": 32,
    "gov_report": 512, "qmsum": 512, "multi_news": 512, "trec": 64, "triviaqa": 32, "samsum": 128,
    "passage_count": 32, "passage_retrieval_en": 32, "lcc": 64, "repobench-p": 64,
}  # fmt: skip

DATASET2METRIC: dict[str, str] = {
    "narrativeqa": "qa_f1", "qasper": "qa_f1", "multifieldqa_en": "qa_f1", "hotpotqa": "qa_f1",
    "2wikimqa": "qa_f1", "musique": "qa_f1", "gov_report": "rouge_l", "qmsum": "rouge_l", "multi_news": "rouge_l",
    "trec": "classification", "triviaqa": "qa_f1", "samsum": "rouge_l", "passage_count": "count",
    "passage_retrieval_en": "retrieval", "lcc": "code_sim", "repobench-p": "code_sim",
}  # fmt: skip

LONGBENCH_CATEGORIES: tuple[str, ...] = ("SingleDoc", "MultiDoc", "Summ.", "FewShot", "Synth.", "Code")

DATASET2CATEGORY: dict[str, str] = {
    "narrativeqa": "SingleDoc", "qasper": "SingleDoc", "multifieldqa_en": "SingleDoc",
    "hotpotqa": "MultiDoc", "2wikimqa": "MultiDoc", "musique": "MultiDoc",
    "gov_report": "Summ.", "qmsum": "Summ.", "multi_news": "Summ.",
    "trec": "FewShot", "triviaqa": "FewShot", "samsum": "FewShot",
    "passage_count": "Synth.", "passage_retrieval_en": "Synth.",
    "lcc": "Code", "repobench-p": "Code",
}  # fmt: skip

# LongBench's pred.py sends these raw (no chat template): few-shot and code prompts end mid-pattern.
NO_CHAT_TEMPLATE: frozenset[str] = frozenset({"trec", "triviaqa", "samsum", "lcc", "repobench-p"})

# qa_dev has no task prompt of its own: reuse the LongBench template of the closest task type, and the
# lost-in-the-middle KV prompt (whose question already ends in "Corresponding value:").
QA_DEV_TEMPLATES: dict[str, str] = {
    "multi_doc_qa": _QA_PASSAGES,
    "single_doc_qa": DATASET2PROMPT["multifieldqa_en"],
    "synthetic": ("Extract the value corresponding to the specified key in the JSON object below.\n\n"
                  "{context}\n\n{input}"),
}

_PLACEHOLDER = re.compile(r"\{(context|input)\}")


def fill_template(template: str, context: str, question: str) -> str:
    """Substitute ``{context}`` and ``{input}`` in one pass (document braces stay literal)."""
    values = {"context": context, "input": question}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def instruction_query(template: str, question: str) -> str:
    """The query a question-based compressor gets in the prompt-aware setting.

    The question when there is one; otherwise (summaries, code) the task's own instruction, i.e. the
    template without its placeholders: the hand-made "question" the LongLLMLingua protocol uses.
    """
    if question.strip():
        return question.strip()
    return " ".join(fill_template(template, "", "").split())
