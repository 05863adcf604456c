"""The adapters given what is not a framework value (a plain string for a Document or a node) name the problem;
metadata that cannot be deep-copied is shared, not a crash. Tiny random models for wiring."""

from __future__ import annotations

import pytest

DOCS = ["Alice went to Paris. Bob stayed home.", "Carol flew to Rome. Rome is in Italy."]


def test_langchain_plain_strings_name_the_problem(tiny):
    from tpc_integrations.langchain import TPCDocumentCompressor

    with pytest.raises(TypeError, match=r"Document 0 is a str, not a langchain Document"):
        TPCDocumentCompressor(compressor=tiny, target_tokens=5).compress_documents([DOCS[0]], "Who?")


def test_llama_index_plain_strings_name_the_problem(tiny):
    from tpc_integrations.llama_index import TPCNodePostprocessor

    with pytest.raises(TypeError, match=r"Node 0 is a str, not a llama_index NodeWithScore"):
        TPCNodePostprocessor(compressor=tiny, target_tokens=5).postprocess_nodes([DOCS[0]], query_str="Who?")


def test_metadata_that_cannot_be_deep_copied_is_shared_not_a_crash(tiny):
    import threading

    from langchain_core.documents import Document

    from tpc_integrations.langchain import TPCDocumentCompressor

    lock = threading.Lock()
    source = Document(page_content=DOCS[0], metadata={"lock": lock, "tags": ["a"]})
    [out] = TPCDocumentCompressor(compressor=tiny, rate=1.0).compress_documents([source], "Who?")
    assert out.metadata["lock"] is lock  # documented: values deepcopy refuses are shared by reference
    out.metadata["tags"].append("b")
    assert source.metadata["tags"] == ["a"]  # everything else is still a copy
