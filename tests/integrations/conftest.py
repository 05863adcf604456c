"""Fixtures for the adapter tests: the real tpc-mini (loaded once) and real text."""

from __future__ import annotations

import pytest
from integration_helpers import example_data, first_sentences

from tpc_core import TPCCompressor


@pytest.fixture(scope="session")
def compressor() -> TPCCompressor:
    """The real tpc-mini on CPU, loaded through the adapters' shared cache, so adapters built with
    ``device="cpu"`` get this very instance."""
    from tpc_integrations._common import load_shared_compressor

    return load_shared_compressor("tpc-mini", device="cpu")


@pytest.fixture(scope="session")
def sample():
    """A real multi-paragraph QA sample (dev data, or the bundled public-domain text when it is missing)."""
    return example_data.load_sample(example_data.DEFAULT_DATA, 0)


@pytest.fixture(scope="session")
def short_texts() -> list[str]:
    """Three short real paragraphs (cheap for the CTD): two sentences each from the bundled text."""
    paragraphs = example_data.split_documents(example_data.BUNDLED_TEXT.read_text(encoding="utf-8"))
    return [first_sentences(p, 2) for p in paragraphs[2:5]]
