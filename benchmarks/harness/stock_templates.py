"""Prompt shapes a request reaches a compressor in: the frameworks' stock templates and everyday hand-written ones.

The framework strings are the stock prompts users get without writing one (LangChain's ``rlm/rag-prompt`` and
its "stuff" QA prompt, LlamaIndex's default text-QA and refine templates, Haystack's RAG pipeline prompt, the
OpenAI cookbook's "answer from the articles" prompt), written with two placeholders, ``{context}`` and
``{request}``, and filled in one pass so braces inside a document stay literal. A flattened ChatML chat and a
typed lower-case query are the two shapes no template writes but users send every day.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["EVERYDAY_SHAPES", "STOCK_TEMPLATES", "fill", "typed_query"]

STOCK_TEMPLATES: dict[str, str] = {
    "langchain_rag": (
        "You are an assistant for question-answering tasks. Use the following pieces of retrieved context to answer "
        "the question. If you don't know the answer, just say that you don't know. Use three sentences maximum and "
        "keep the answer concise.\nQuestion: {request} \nContext: {context} \nAnswer:"
    ),
    "langchain_stuff": (
        "Use the following pieces of context to answer the question at the end. If you don't know the answer, just "
        "say that you don't know, don't try to make up an answer.\n\n{context}\n\nQuestion: {request}\nHelpful "
        "Answer:"
    ),
    "llamaindex_text_qa": (
        "Context information is below.\n---------------------\n{context}\n---------------------\nGiven the context "
        "information and not prior knowledge, answer the query.\nQuery: {request}\nAnswer: "
    ),
    "llamaindex_refine": (
        "The original query is as follows: {request}\nWe have provided an existing answer: I could not find it in "
        "the first part.\nWe have the opportunity to refine the existing answer (only if needed) with some more "
        "context below.\n------------\n{context}\n------------\nGiven the new context, refine the original answer "
        "to better answer the query. If the context isn't useful, return the original answer.\nRefined Answer: "
    ),
    "haystack_rag": (
        "Given the following information, answer the question.\n\nContext:\n{context}\n\nQuestion: {request}\n"
        "Answer:"
    ),
    "openai_cookbook": (
        "Use the below articles to answer the subsequent question. If the answer cannot be found in the articles, "
        "write \"I could not find an answer.\"\n\nArticle:\n\"\"\"\n{context}\n\"\"\"\n\nQuestion: {request}"
    ),
    "chatml": (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n{context}\n\n{request}"
        "<|im_end|>\n<|im_start|>assistant\n"
    ),
    "llamaindex_typed": (
        "Context information is below.\n---------------------\n{context}\n---------------------\nGiven the context "
        "information and not prior knowledge, answer the query.\nQuery: {typed}\nAnswer: "
    ),
}

EVERYDAY_SHAPES: dict[str, str] = {
    "after": "{context}\n\n{request}",
    "before": "{request}\n\n{context}",
    "langchain_rag": STOCK_TEMPLATES["langchain_rag"],
    "llamaindex_text_qa": STOCK_TEMPLATES["llamaindex_text_qa"],
    "typed_lower": "{context}\n\n{typed}",
    "chatml": STOCK_TEMPLATES["chatml"],
}

_PLACEHOLDER = re.compile(r"\{(context|request|typed)\}")


def typed_query(request: str) -> str:
    """The request as people type it into a search box: lower case, no final question mark or full stop."""
    return request.strip().lower().rstrip("?.! ")


def fill(template: str, context: str, request: str) -> tuple[str, str]:
    """``(prompt, written)``: the template filled in one pass, and the request exactly as the prompt writes it
    (the typed form where the template asks for ``{typed}``)."""
    typed = typed_query(request)
    values: dict[str, Callable[[], str]] = {"context": lambda: context, "request": lambda: request,
                                            "typed": lambda: typed}
    written = typed if "{typed}" in template else request
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)](), template), written
