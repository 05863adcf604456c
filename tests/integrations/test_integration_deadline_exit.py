"""A call that passed its ``deadline_ms`` leaves its work behind; the interpreter must still exit cleanly (status 0,
no "terminate called without an active exception" abort from a thread stopped inside torch's native code). A fresh
process with the real tpc-mini, whose script ends right after the deadline, while the abandoned work still runs."""

from __future__ import annotations

import pytest

from tests.subprocess_helpers import run_in_checkout

pytest.importorskip("langchain_core")


_SCRIPT = r"""
import logging

from langchain_core.documents import Document

from tpc_core import TPCCompressor
from tpc_integrations.langchain import TPCDocumentCompressor

text = open("examples/data/declaration_of_independence.txt", encoding="utf-8").read()
docs = [Document(page_content=f"Copy {k}. " + text) for k in range(12)]  # distinct documents, real prose
compressor = TPCCompressor.from_pretrained("tpc-mini", device="cpu")  # loaded before the deadline's clock starts
TPCDocumentCompressor(compressor=compressor, rate=0.3).compress_documents(docs[:1], "late fee?")  # warm
seen = []
handler = logging.Handler(logging.WARNING)
handler.emit = seen.append
logging.getLogger("tpc_integrations").addHandler(handler)
out = TPCDocumentCompressor(compressor=compressor, rate=0.3, deadline_ms=1).compress_documents(docs, "late fee?")
assert out == docs, "past its deadline the call returns its input"
assert any("passed its deadline" in r.getMessage() for r in seen), [r.getMessage() for r in seen]
print("DONE", flush=True)
"""


@pytest.mark.slow
def test_the_process_exits_cleanly_after_a_call_that_passed_its_deadline():
    run = run_in_checkout("-c", _SCRIPT)
    output = run.stdout + run.stderr
    assert "DONE" in run.stdout, output
    assert run.returncode == 0, output
    assert "terminate called" not in output
