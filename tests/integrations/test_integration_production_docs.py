"""The README's Production section documents every score's scale, and its fp32 recipe gives the
uncached call's scores exactly (the int8 default moves them slightly)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

import torch
from langchain_core.documents import Document

from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION
from tests.notice_helpers import oversized
from tpc_core.cache import MemoryCache
from tpc_core.engine.scoring.lexical import bm25_scores
from tpc_core.engine.scoring.scorers import CosineBM25, PooledCosine
from tpc_integrations.langchain import TPCDocumentCompressor

README = (Path(__file__).resolve().parents[2] / "docs" / "options-and-production.md").read_text(encoding="utf-8")


def test_the_production_section_says_what_each_setting_channel_and_score_means():
    section = README.split("## Production", 1)[1].split("\n## ", 1)[0]
    for needed in ("on_error", "deadline_ms", "strict", "emptied", "Settings errors", "Warnings or logs", "Events",
                   "Score scales", "salience", "cosine", 'dtype="fp32"', "max_bytes"):
        assert needed in section, needed
    assert re.search(r"can exceed 1", section)


def test_fp32_cache_entries_give_the_uncached_scores_exactly(compressor):
    documents = [Document(page_content=p, id=str(k)) for k, p in enumerate(PARAGRAPHS[2:6])]
    with oversized():  # the paragraphs' long sentences are larger than 80 tokens, on every call
        uncached = TPCDocumentCompressor(compressor=compressor, target_tokens=80).compress_documents(documents,
                                                                                                     QUESTION)
    cached = TPCDocumentCompressor(compressor=compressor, target_tokens=80, cache=MemoryCache(dtype="fp32"))
    with oversized():
        cached.compress_documents(documents, QUESTION)  # stores the entries
    with oversized():
        again = cached.compress_documents(documents, QUESTION)  # served from them
    assert [d.metadata["relevance_score"] for d in again] == [d.metadata["relevance_score"] for d in uncached]
    assert [d.page_content for d in again] == [d.page_content for d in uncached]


def test_the_score_scales_say_what_a_query_score_is_and_the_scorer_computes_that(compressor):
    """A score with a question is the cosine plus tpc-mini's lexical term, which has no upper bound: the README
    says so (not "about -1 to 1"), and the formula it states reproduces the scorer's scores."""
    section = " ".join(README.split("**Score scales.**", 1)[1].split("\n\n", 1)[0].split())
    assert "about -1 to 1" not in section
    for needed in ("`lexical_weight` (0.3) × the standard deviation of the prompt's cosines × the sentence's BM25 "
                   "z-score", "can score above 1"):
        assert needed in section, needed
    scorer = compressor.engine.scorer
    assert isinstance(scorer, CosineBM25) and scorer.lexical_weight == 0.3
    text = "\n\n".join(PARAGRAPHS[2:6])
    with oversized():  # the paragraphs' long sentences are larger than 60 tokens
        result = compressor.compress(text, question=QUESTION, target_tokens=60)
    prompts, embeddings = compressor.engine.read_whole([text])
    cosine = PooledCosine(scorer.encoder).relevance(prompts, embeddings, [QUESTION])[0].double()
    lexical = torch.tensor(bm25_scores(prompts[0].sentences, QUESTION), dtype=torch.float64)
    stated = cosine + 0.3 * cosine.std(unbiased=False) * (lexical - lexical.mean()) / lexical.std(unbiased=False)
    scores = torch.tensor([sentence.score for sentence in result.sentences], dtype=torch.float64)
    assert [s.text for s in result.sentences] == list(prompts[0].sentences)
    assert torch.allclose(scores, stated, atol=1e-5)
