"""One table of bad input, one row per kind of bad input: each gets a clear exception naming the problem, before any
model runs where that is possible (tiny random checkpoint for wiring; ``tests/core/engine/test_budget_and_options.py``
has the behaviours that are not errors)."""

from __future__ import annotations

import pytest

from tests.checkpoint_helpers import edited_checkpoint

DOCS = ["Alice went to Paris. Bob stayed home.", "Carol flew to Rome. Rome is in Italy."]


def _load(tiny_checkpoint, tmp_path, section, **values):
    from tpc_core import TPCCompressor

    return TPCCompressor.from_pretrained(edited_checkpoint(tiny_checkpoint, tmp_path, section, **values), device="cpu")


def _langchain(tiny, items):
    from tpc_integrations.langchain import TPCDocumentCompressor

    return TPCDocumentCompressor(compressor=tiny, target_tokens=5).compress_documents(items, "Who?")


def _llama_index(tiny, items):
    from tpc_integrations.llama_index import TPCNodePostprocessor

    return TPCNodePostprocessor(compressor=tiny, target_tokens=5).postprocess_nodes(items, query_str="Who?")


def _cli(tmp_path, *args):
    from tpc_core.cli import main

    return main(["compress", *[str(a).replace("{tmp}", str(tmp_path)) for a in args]])


# (item, id, call(tiny, tiny_checkpoint, tmp_path), exception, message)
TABLE = [
    ("2", "batch_size=0", lambda t, c, p: t.compress_batch([DOCS[0]] * 2, question="Who?", batch_size=0),
     ValueError, "batch_size must be a positive int, got 0"),
    ("2", "batch_size=-1", lambda t, c, p: t.compress_batch([DOCS[0]] * 3, question="Who?", batch_size=-1),
     ValueError, "batch_size must be a positive int, got -1"),
    ("2", "compress batch_size=0", lambda t, c, p: t.compress(DOCS[0], question="Who?", batch_size=0),
     ValueError, "batch_size"),
    ("3", "pattern not a regex string", lambda t, c, p: t.compress(DOCS, question="Who?", force_keep_patterns=[b"x"]),
     TypeError, "force_keep_patterns must hold regex strings, got bytes"),
    ("4", "bad regex", lambda t, c, p: t.compress(DOCS, question="Who?", force_keep_patterns="(unclosed"),
     ValueError, r"'\(unclosed' is not a valid regular expression"),
    ("4", "splitter=123", lambda t, c, p: t.compress(DOCS, question="Who?", splitter=123),
     TypeError, "splitter must be a name or an object with a spans"),
    ("4", "document_separator=None", lambda t, c, p: t.compress(DOCS, question="Who?", document_separator=None),
     TypeError, "document_separator must be a str, got NoneType"),
    ("4", "budget_scope typo", lambda t, c, p: t.compress(DOCS, question="Who?", budget_scope="per_doc"),
     ValueError, "budget_scope must be one of"),
    ("4", "langchain [str]", lambda t, c, p: _langchain(t, [DOCS[0]]),
     TypeError, "Document 0 is a str, not a langchain Document"),
    ("4", "llama_index [str]", lambda t, c, p: _llama_index(t, [DOCS[0]]),
     TypeError, "Node 0 is a str, not a llama_index NodeWithScore"),
    ("4", "document not a str", lambda t, c, p: t.compress(["ok", 3], question="Who?"),
     TypeError, "Prompt 0: document 1 is a int, not a str"),
    ("4", "counter returns a float", lambda t, c, p: t.compress(DOCS, question="Who?", token_counter=lambda s: 1.5),
     TypeError, "token_counter must return a non-negative int"),
    ("5", "string number", lambda t, c, p: _load(c, p, "cse", max_window_tokens="64"),
     ValueError, r"cse\.max_window_tokens must be an int, got str '64'"),
    ("5", "window beyond positions", lambda t, c, p: _load(c, p, "cse", max_window_tokens=4096),
     ValueError, r"cse\.max_window_tokens 4096 is more than the base model's 128 positions"),
    ("5", "absolute adapter_dir", lambda t, c, p: _load(c, p, "cse", adapter_dir="/etc"),
     ValueError, r"cse\.adapter_dir must be a relative path inside the checkpoint"),
    ("5", "escaping weights_dir", lambda t, c, p: _load(c, p, "cse", weights_dir="../../x"),
     ValueError, r"cse\.weights_dir '\.\./\.\./x' points outside the checkpoint"),
    ("5", "escaping extra_embeddings", lambda t, c, p: _load(c, p, "cse", extra_embeddings="../e.safetensors"),
     ValueError, r"cse\.extra_embeddings '\.\./e\.safetensors' points outside the checkpoint"),
    ("5", "absolute base_model", lambda t, c, p: _load(c, p, "cse", base_model=str(c / "cse_base")),
     ValueError, r"cse\.base_model must be a relative path inside the checkpoint"),
    ("5", "escaping base_model", lambda t, c, p: _load(c, p, "ctd", base_model="../ctd_base"),
     ValueError, r"ctd\.base_model '\.\./ctd_base' points outside the checkpoint"),
    ("6", "cli rate 1.5", lambda t, c, p: SystemExit(_cli(p, "{tmp}/none.txt", "--rate", "1.5")),
     None, "2"),
    ("6", "cli missing file", lambda t, c, p: SystemExit(_cli(p, "{tmp}/none.txt")), None, "2"),
    ("1/7", "budget below every sentence", lambda t, c, p: t.compress(DOCS, question="Who?", target_tokens=0),
     ValueError, "target_tokens must be a positive number of tokens"),
    ("9", "question not a str", lambda t, c, p: t.compress(DOCS, question=["Who?"]),
     TypeError, "question must be a str or None, got list"),
    ("28", "unknown keyword", lambda t, c, p: t.compress(DOCS, question="Who?", topn=1),
     TypeError, r"Unknown compression option\(s\) 'topn'; the accepted keywords are target_tokens, rate and .*top_n"),
    ("28", "unknown batch keyword", lambda t, c, p: t.compress_batch([DOCS], question="Who?", keep_first=True),
     TypeError, r"'keep_first'; .*keep_first_sentence"),
]


@pytest.mark.parametrize(("item", "name", "call", "error", "message"), TABLE,
                         ids=[f"item{row[0]}-{row[1]}" for row in TABLE])
def test_bad_input_is_refused_with_a_message_naming_it(tiny, tiny_checkpoint, tmp_path, item, name, call, error,
                                                       message):
    if error is None:  # the CLI reports through its exit code (2 for every usage or input error)
        assert str(call(tiny, tiny_checkpoint, tmp_path).code) == message
        return
    with pytest.raises(error, match=message):
        call(tiny, tiny_checkpoint, tmp_path)


def test_each_keyword_option_is_declared_once_with_its_default_in_the_options():
    """``CompressKeywords`` (generated) names the fields of ``CompressOptions`` (default, check), the budget aside."""
    from tpc_core.engine.options import CompressionOptions, CompressKeywords

    fields = {name: field.default for name, field in CompressionOptions.model_fields.items()}
    assert set(CompressKeywords.__annotations__) == set(fields) - {"target_tokens", "rate"}
    assert {name: fields[name] for name in CompressKeywords.__annotations__} == {
        "budget_scope": "global", "force_keep_patterns": (), "keep_first_sentence": False, "keep_request": True,
        "document_separator": "\n\n", "splitter": None, "min_score": None, "top_n": None, "batch_size": 16,
        "show_progress": None, "describe_bare": False, "cache": None, "small_pass_threads": 1}


# ------------------------------------------------------------------------------------- lone surrogates
# What errors="surrogateescape" decoding or JSON with a broken \u escape leaves in a str; a tokenizer refuses it
# with "TypeError: TextEncodeInput must be Union[...]", so it is refused at entry, named, with what to do.
BROKEN = "Bad \ud800 char. More text here."


@pytest.mark.parametrize("call, where", [
    (lambda t: t.compress(BROKEN, question="Who?"), "Prompt 0"),
    (lambda t: t.compress(BROKEN), "Prompt 0"),
    (lambda t: t.compress(DOCS[0], question="Bad \ud800 char?"), "Prompt 0: the question"),
    (lambda t: t.compress_batch([DOCS, [DOCS[0], BROKEN]], question="Who?"), "Prompt 1: document 1"),
    (lambda t: t.compress_batch([DOCS[0], DOCS[1]], question=[None, "Bad \ud800 char?"]), "Prompt 1: the question"),
    (lambda t: t.describe_task(["Summarise this.", BROKEN]), "Prompt 1"),
    (lambda t: t.compress(DOCS, question="Who?", document_separator="\n\ud800\n"), "document_separator"),
], ids=["compress", "compress agnostic", "question", "one document of a list", "one question of a batch",
        "describe_task", "document_separator"])
def test_a_lone_surrogate_is_a_value_error_that_names_it_and_says_what_to_do(tiny, call, where):
    with pytest.raises(ValueError) as caught:
        call(tiny)
    message = str(caught.value)
    assert message.startswith(f"{where} holds a lone surrogate '\\ud800' (U+D800) at offset ")
    assert 'errors="replace"' in message
    offset = int(message.split("at offset ")[1].split(",")[0])
    assert offset == {"document_separator": 1}.get(where, 4)


def test_text_beyond_the_basic_plane_is_not_a_lone_surrogate(tiny):
    """Emoji and other astral characters are one code point in a str, never a surrogate pair: they pass."""
    result = tiny.compress(["Café ☕ opened in 1999. 😀 The owner is Ana.", "Zürich is in 🇨🇭."], question="Who?",
                           rate=0.5)
    assert result.origin_tokens > 0
