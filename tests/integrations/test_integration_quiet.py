"""The first prompt-agnostic call of each adapter loads the task descriptor (the CTD: a PEFT adapter merged into
SmolLM2) without third-party chatter: no ``is_gradient_checkpointing`` deprecation from transformers (read by peft
as it wraps the model), no other warning raised inside transformers or peft, even with every warning shown
(``PYTHONWARNINGS=always``); and the user's warning filters are as they were. A fresh process, so the CTD loads
during the call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = r"""
import sys
import warnings

from langchain_core.documents import Document
from llama_index.core.schema import NodeWithScore, TextNode

from tpc_integrations.langchain import TPCDocumentCompressor
from tpc_integrations.llama_index import TPCNodePostprocessor

bare = open("examples/data/declaration_of_independence.txt", encoding="utf-8").read()
filters_before = list(warnings.filters)
adapter = sys.argv[1]
if adapter == "langchain":
    tpc = TPCDocumentCompressor(rate=0.2, device="cpu")
    tpc.compress_documents([Document(page_content=bare)], "")
else:
    tpc = TPCNodePostprocessor(rate=0.2, device="cpu")
    tpc.postprocess_nodes([NodeWithScore(node=TextNode(text=bare))])
tpc.compressor.describe_task(bare)  # a bare text: the CTD loads and describes it (compression no longer needs it)
assert warnings.filters == filters_before, "the user's warning filters changed"
print("CTD-LOADED", tpc.compressor._ctd.loaded, flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("adapter", ["langchain", "llamaindex"])
def test_the_first_prompt_agnostic_adapter_call_loads_the_ctd_quietly(adapter):
    env = {**os.environ, "PYTHONWARNINGS": "always",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    run = subprocess.run([sys.executable, "-c", _SCRIPT, adapter], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=900)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "CTD-LOADED True" in run.stdout, output  # the bare text has no written request: the CTD loaded and ran
    assert "is_gradient_checkpointing" not in output
    chatter = [line for line in output.splitlines()
               if "Warning" in line and any(part in line for part in ("/transformers/", "/peft/"))]
    assert not chatter, "\n".join(chatter)
