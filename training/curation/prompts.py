"""Prompts 1-3 of the TPC paper (Appendix A.1), verbatim, as ``str.format`` templates.

* ``PROMPT_1`` (CTD stage 1): a query ``q`` from a long text; placeholder ``{text}``.
* ``PROMPT_2`` (CTD stage 2): a structured template that must itself contain the *literal* placeholders
  ``{text}`` and ``{question}``, so they are escaped (``{{text}}``) in the format string. The paper's box does
  not show how the text and the raw query are handed to the LLM (Algorithm 2: ``g(p, q; Prompt 2)``);
  ``PROMPT_2_INPUTS`` is our addition, appended after the verbatim prompt, with placeholders ``{text}`` and
  ``{question}``.
* ``PROMPT_3`` (MCQR): multi-hop question over ``[[n]]``-numbered sentences; placeholder ``{text}``.

LaTeX ``\\`` line breaks became newlines. In Prompt 3 the source has a line break (no ``\\``) between
"Toy example:" and the numbered toy text; we keep it as a newline because that is what the authors typed.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "PROMPT_1",
    "PROMPT_2",
    "PROMPT_2_INPUTS",
    "PROMPT_3",
    "number_sentences",
    "render_prompt_1",
    "render_prompt_2",
    "render_prompt_3",
]

PROMPT_1 = (
    "You are tasked with writing user queries based on a long context. Consider the topic of the context when "
    "formulating the query. Queries should be concise and specific. You may also ask more complex questions, such "
    "as requesting specific knowledge extraction from the text, extending the text, answering questions based on "
    "the text, paraphrasing/rewriting the text, or summarizing the text.\n"
    'Do not include the word "context" in the query.\n'
    "Long context: {text}\n"
    "Query:"
)

PROMPT_2 = (
    "You are tasked with writing a user query based on a long context. Create a complex template that integrates "
    "this context and a question into a single instruction.\n"
    "The template must include the placeholders {{text}} and {{question}}.\n"
    "Template examples:\n"
    "1. You are given a text and a question related to it. Answer the question based on the text.\n"
    "Question: {{question}}\n"
    "Text: {{text}}\n"
    "Now answer the question:\n"
    "2. Can you extend the following block of code: {{text}}\n"
    "such that it satisfies the requirement: {{question}}\n"
    "Now write the code:\n"
    "Provide various templates, taking into account the topic of the text and the question."
)

# Not in the paper: how the text (possibly an excerpt) and the stage-1 query reach the LLM.
PROMPT_2_INPUTS = "\n\nText: {text}\nQuestion: {question}\nTemplates:"

PROMPT_3 = (
    "You are given a long text consisting of numbered sentences. Your task is to generate complex multi-hop "
    "questions about this text, such that answering them requires step-by-step reasoning (in multiple hops). To "
    "achieve this, first, ask a series of sequential factual questions and identify the corresponding sentences "
    "that contain the answers to these questions. Then, formulate a final question that can only be answered by "
    "combining the information from the previously generated questions and answers. Additionally, specify which "
    "sentences (by their numbers) contain the information necessary to answer the final question.\n"
    "\n"
    "Toy example:\n"
    "[[1]] John is married to Mary. [[2]] They've decided to spend their marriage anniversary in Spain. [[3]] Mary "
    "was afraid that their two small children, Jody and Sue, were too small for a flight. [[4]] That's why she "
    "asked her elder sister Jane to look after them.\n"
    "Questions:\n"
    "Question 1: Who is John married to?\n"
    "Answer 1: John is married to Mary, as stated in [[1]].\n"
    "Question 2: How many children does Mary have?\n"
    "Answer 2: Mary has two children, as stated in [[3]].\n"
    "\n"
    "Combining the questions to create a multi-hop question:\n"
    "1. John is married to Mary, as stated in [[1]].\n"
    "2. Mary has two children, as stated in [[3]].\n"
    "Final question: How many children does John have?\n"
    "Necessary sentences: [[1]], [[3]]\n"
    "\n"
    "Now, solve this example:\n"
    "{text}\n"
    "Questions:"
)


def render_prompt_1(text: str) -> str:
    """Prompt 1 with the long text filled in."""
    return PROMPT_1.format(text=text)


def render_prompt_2(text: str, question: str) -> str:
    """Prompt 2 (verbatim, literal ``{text}``/``{question}``) followed by the text and the stage-1 query."""
    return PROMPT_2.format() + PROMPT_2_INPUTS.format(text=text, question=question)


def number_sentences(sentences: Sequence[str]) -> str:
    """``"[[1]] First. [[2]] Second."``: the numbering of the toy example in Prompt 3 (1-based)."""
    return " ".join(f"[[{number}]] {sentence}" for number, sentence in enumerate(sentences, 1))


def render_prompt_3(sentences: Sequence[str]) -> str:
    """Prompt 3 with the numbered sentences filled in."""
    return PROMPT_3.format(text=number_sentences(sentences))
