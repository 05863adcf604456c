"""Warnings the engine raises during an adapter call point at the line that called the adapter.

``tpc_integrations`` registers itself (and LlamaIndex's span wrapper) with :mod:`tpc_core.diagnostics.caller`, so the
oversized-sentence ``UserWarning`` of ``compress`` skips the core, the adapters and the framework's wrapping of
the adapter's own method, and names this file's line.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, TextNode

import tpc_core
import tpc_integrations
from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer
from tpc_integrations.llama_index import TPCNodePostprocessor, TPCTransform

# The first sentence alone is larger than the whole 8-token budget; the second fits.
TEXT = ("The committee, after many months of careful deliberation across several cities and with the help of "
        "outside experts, finally agreed on a detailed plan for the new railway line. It was approved.")
QUERY = "What did the committee agree on?"
TASK = "Answer questions about the committee's decisions."
LIBRARY = tuple(str(Path(package.__file__).resolve().parent) for package in (tpc_core, tpc_integrations))


def _langchain_compressor(compressor):
    return TPCDocumentCompressor(compressor=compressor, target_tokens=8).compress_documents([Document(TEXT)], QUERY)


def _langchain_transformer(compressor):
    return TPCDocumentTransformer(compressor=compressor, target_tokens=8, task_description=TASK).transform_documents(
        [Document(TEXT)])


def _llama_index_postprocessor(compressor):
    return TPCNodePostprocessor(compressor=compressor, target_tokens=8).postprocess_nodes(
        [NodeWithScore(node=TextNode(text=TEXT))], query_str=QUERY)


def _llama_index_transform(compressor):
    return TPCTransform(compressor=compressor, target_tokens=8, task_description=TASK)([TextNode(text=TEXT)])


@pytest.mark.parametrize("call", [_langchain_compressor, _langchain_transformer, _llama_index_postprocessor,
                                  _llama_index_transform], ids=lambda call: call.__name__.lstrip("_"))
def test_an_engine_warning_names_the_line_that_called_the_adapter(compressor, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outputs = call(compressor)
    assert len(outputs) == 1  # the short sentence was kept
    oversized = [w for w in caught if "larger than the whole budget" in str(w.message)]
    assert len(oversized) == 1, [str(w.message) for w in caught]
    warning = oversized[0]
    assert warning.category is UserWarning
    assert not warning.filename.startswith(LIBRARY), warning.filename
    assert Path(warning.filename).resolve() == Path(__file__).resolve()
    assert warning.lineno in {line for *_, line in call.__code__.co_lines() if line is not None}
