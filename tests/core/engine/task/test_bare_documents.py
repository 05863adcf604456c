"""``describe_bare=False``: a prompt with no question and no written request gets the fallback task without a CTD
generation; prompts whose request the head finds are compressed exactly as before.

The task finder's policy is tested with the real tpc-mini request head and a stand-in for the CTD's ``describe``
(what is tested is which task the finder picks, never what the CTD writes).
"""

from __future__ import annotations

import json

import pytest

from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.reading import segment
from tpc_core.engine.task.finder import TaskFinder
from tpc_core.engine.values import Selection, Task, TaskSource

pytestmark = pytest.mark.slow

from tests.core.corpus.corpus_helpers import BUNDLED_QUESTION, corpus_rows  # noqa: E402

#: A paragraph of the bundled text in which tpc-mini's request head finds no request (a bare document).
BARE = corpus_rows()[2]["text"]


def _segmented(compressor, texts):
    options = CompressionOptions(rate=0.4)
    return [segment((text,), compressor.engine.splitter(), compressor.token_counter, options) for text in texts]


def _never(prompts):
    raise AssertionError(f"the CTD was asked to describe {len(prompts)} prompt(s)")


def test_bare_prompts_get_the_fallback_task_without_a_generation(tpc_mini):
    settings = tpc_mini.config.agnostic
    prompts = _segmented(tpc_mini, [BARE, BARE])
    embeddings = tpc_mini.engine.scorer.embed(prompts)
    skipping = TaskFinder(settings, tpc_mini.engine.task_finder.head, _never)
    tasks = skipping.find(prompts, embeddings, [None, "Which grievances are listed?"], separator="\n\n",
                          describe_bare=False)
    assert tasks == [Task(settings.fallback_description, TaskSource.FALLBACK, Selection.COVERAGE),
                     Task.from_question("Which grievances are listed?")]
    # The same task the finder reaches when the CTD writes a description the prompt does not ground.
    head = tpc_mini.engine.task_finder.head
    ungrounded = TaskFinder(settings, head, lambda texts: ["Quantum chromodynamics."] * len(texts))
    assert ungrounded.find(prompts[:1], embeddings[:1], [None], separator="\n\n") == tasks[:1]


def test_the_ctd_still_describes_bare_prompts_by_default(tpc_mini):
    calls = []
    finder = TaskFinder(tpc_mini.config.agnostic, tpc_mini.engine.task_finder.head,
                        lambda texts: calls.append(texts) or ["Quantum chromodynamics."] * len(texts))
    prompts = _segmented(tpc_mini, [BARE])
    finder.find(prompts, tpc_mini.engine.scorer.embed(prompts), [None], separator="\n\n")
    assert calls == [[BARE]]


def test_compress_runs_the_ctd_on_a_bare_document_only_when_asked(tpc_mini, monkeypatch):
    monkeypatch.setattr(tpc_mini.engine.task_finder, "describe", _never)
    result = tpc_mini.compress(BARE, rate=0.4)  # the default: describe_bare=False
    assert (result.task_source, result.task_description) == ("fallback", tpc_mini.config.agnostic.fallback_description)
    assert 0 < result.compressed_tokens <= result.budget
    kept = [s for s in result.sentences if s.kept]
    assert kept and all(BARE[s.start:s.end] == s.text and s.text in result.compressed_prompt for s in kept)
    assert [s.start for s in kept] == sorted(s.start for s in kept)
    assert tpc_mini.compress(BARE, rate=0.4, describe_bare=False).to_dict() == result.to_dict()
    with pytest.raises(AssertionError, match="the CTD was asked"):
        tpc_mini.compress(BARE, rate=0.4, describe_bare=True)


def test_a_prompt_that_writes_its_request_is_compressed_as_before(tpc_mini, monkeypatch):
    question = json.loads(BUNDLED_QUESTION.read_text(encoding="utf-8"))["question"]
    text = f"{corpus_rows()[1]['text']}\n\nQuestion: {question}"
    before = tpc_mini.compress(text, rate=0.5)
    monkeypatch.setattr(tpc_mini.engine.task_finder, "describe", _never)
    after = tpc_mini.compress(text, rate=0.5, describe_bare=False)
    assert before.task_source == "extracted"
    assert after.to_dict() == before.to_dict()


def test_describe_bare_must_be_a_bool():
    with pytest.raises(TypeError, match="describe_bare must be True or False"):
        CompressionOptions(describe_bare="no")
