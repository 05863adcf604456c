"""Issue 36, defect 9: the README's Production section documents every score's scale, and its fp32 recipe gives the
uncached call's scores exactly (the int8 default moves them slightly)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document

from tests.core.conversation.test_conversations import PARAGRAPHS, QUESTION
from tpc_core.cache import MemoryCache
from tpc_integrations.langchain import TPCDocumentCompressor

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_the_production_section_says_what_each_setting_channel_and_score_means():
    section = README.split("## Production", 1)[1].split("\n## ", 1)[0]
    for needed in ("on_error", "deadline_ms", "strict", "emptied", "Settings errors", "Runtime warnings", "Events",
                   "Score scales", "salience", "cosine", 'dtype="fp32"', "max_bytes"):
        assert needed in section, needed
    assert re.search(r"can exceed 1", section)


def test_fp32_cache_entries_give_the_uncached_scores_exactly(compressor):
    documents = [Document(page_content=p, id=str(k)) for k, p in enumerate(PARAGRAPHS[2:6])]
    uncached = TPCDocumentCompressor(compressor=compressor, target_tokens=80).compress_documents(documents, QUESTION)
    cached = TPCDocumentCompressor(compressor=compressor, target_tokens=80, cache=MemoryCache(dtype="fp32"))
    cached.compress_documents(documents, QUESTION)  # stores the entries
    again = cached.compress_documents(documents, QUESTION)  # served from them
    assert [d.metadata["relevance_score"] for d in again] == [d.metadata["relevance_score"] for d in uncached]
    assert [d.page_content for d in again] == [d.page_content for d in uncached]
