"""The compress options are declared once, in ``tpc_core.options.CompressOptions``: every other surface (the typed
``**options``, the adapters' fields, the ``tpc compress`` flags, the README's table) is derived from it, and each
test here fails when one of them drifts from the model. ``keep_request``, the option added as a single field, is
tested on a real prompt with tpc-mini."""

from __future__ import annotations

import re
import typing
import warnings

import pytest

from tpc_core.options import CompressKeywords, CompressOptions, Reach
from tpc_core.options.model import reach
from tpc_core.options.surfaces import (
    KEYWORDS_BEGIN,
    KEYWORDS_PATH,
    README_PATH,
    StoredType,
    add_option_flags,
    flag_options,
    keyword_type,
    keywords_with_class,
    markdown_table,
    option_field,
    option_field_drift,
    options_for,
    readme_with_table,
    type_source,
)

FIELDS = CompressOptions.model_fields


# ------------------------------------------------------------------------------------------------ generated texts
def test_the_typed_keywords_are_generated_from_the_model():
    written = KEYWORDS_PATH.read_text(encoding="utf-8")
    assert keywords_with_class(written) == written, "run python -m tpc_core.options --write"
    with pytest.raises(ValueError, match="has no line"):
        keywords_with_class(written.replace(KEYWORDS_BEGIN, "# edited"))


def test_the_typed_keywords_hold_each_option_but_the_budget_with_its_type():
    hints = typing.get_type_hints(CompressKeywords)
    assert list(hints) == [name for name in FIELDS if name not in ("target_tokens", "rate")]
    assert list(hints) == list(CompressOptions.keyword_names())
    for name, hint in hints.items():
        assert type_source(hint) == type_source(keyword_type(name)), name
    assert CompressKeywords.__optional_keys__ == frozenset(hints)  # every keyword may be left out


def test_the_readme_table_is_generated_from_the_model():
    readme = README_PATH.read_text(encoding="utf-8")
    assert readme_with_table(readme) == readme, "run python -m tpc_core.options --write"
    table = markdown_table()
    for name, field in FIELDS.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{name}` |"))
        assert f"`{field.default!r}`" in row and " ".join(field.description.split()[:4]) in row


def _option_classes():
    """Each class of the adapters' option fields, with the options the model gives it and its own defaults."""
    from tpc_integrations._engine_options import (
        AgentContextOptions,
        ConversationOptions,
        EveryAdapterOptions,
        IndexTimeOptions,
        QueryTimeOptions,
    )

    return {EveryAdapterOptions: (options_for("every"), {}), QueryTimeOptions: (options_for("query"), {}),
            ConversationOptions: (("budget_scope",), {}), IndexTimeOptions: (options_for("index"), {}),
            AgentContextOptions: (("cache",), {"cache": "memory"})}


def test_the_adapters_declared_option_fields_are_the_models():
    """The drift test: each adapter options class declares its options with the model's type, checks, default and
    documentation (a new option that reaches adapters, or a changed type or default, fails here until declared)."""
    drift = [line for option_class, (names, defaults) in _option_classes().items()
             for line in option_field_drift(option_class, names, defaults)]
    assert drift == [], "declare them in tpc_integrations/_engine_options.py as the model gives them"


def test_the_drift_check_names_each_kind_of_difference():
    from typing import Optional

    from pydantic import BaseModel, Field

    class Drifted(BaseModel):
        top_n: Optional[float] = option_field("top_n", None)  # the option's type is Optional[int]
        min_score: Optional[float] = Field(None, description=FIELDS["min_score"].description)  # without its check
        batch_size: int = option_field("batch_size", 8)  # another default than the model's
        describe_bare: bool = Field(False, description="Something else.")

    found = option_field_drift(Drifted, ("top_n", "min_score", "batch_size", "describe_bare"))
    assert found == ["Drifted.top_n: type float | None, the option's is int | None",
                     "Drifted.min_score: its checks are not the option's (declare it with option_field)",
                     "Drifted.batch_size: default 8, expected 16",
                     "Drifted.describe_bare: its checks are not the option's (declare it with option_field)",
                     "Drifted.describe_bare: its documentation does not start with the option's"]
    assert option_field_drift(Drifted, ("top_n", "min_score", "batch_size", "describe_bare"), {"batch_size": 8})[2:] \
        == found[3:]
    assert option_field_drift(Drifted, ("top_n", "min_score")) == ["Drifted declares ['top_n', 'min_score', "
                                                                   "'batch_size', 'describe_bare'], the model gives "
                                                                   "['top_n', 'min_score']"]
    with pytest.raises(ValueError, match="'topn' is not an option of CompressOptions"):
        option_field("topn", None)


def test_a_converting_option_is_declared_as_callers_pass_it_and_stored_as_the_option_stores_it():
    from tpc_integrations._engine_options import EveryAdapterOptions

    field = EveryAdapterOptions.model_fields["force_keep_patterns"]
    assert field.annotation == keyword_type("force_keep_patterns") != FIELDS["force_keep_patterns"].annotation
    given = ["(?i)total", re.compile("x", re.M)]
    made = EveryAdapterOptions(force_keep_patterns=given)
    assert made.force_keep_patterns == CompressOptions.build(force_keep_patterns=given).force_keep_patterns
    assert isinstance(made.force_keep_patterns, tuple)
    assert made.model_dump()["force_keep_patterns"] == ("(?i)total", "(?m)x")
    assert EveryAdapterOptions.model_json_schema()["properties"]["force_keep_patterns"]["items"] == {
        "format": "regex", "type": "string"}


def test_the_generator_checks_the_generated_texts():
    from tpc_core.options.__main__ import main

    assert main(["--check"]) == 0


def test_every_option_is_documented_and_placed():
    for name, field in FIELDS.items():
        assert field.description and len(field.description) > 20, f"{name} has no docstring"
        assert isinstance(reach(field.metadata), Reach)
        assert reach(field.metadata).adapters in ("every", "query", "index", "none")


# ------------------------------------------------------------------------------------------------ adapters
def _adapters():
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer, TPCInputCompressor
    from tpc_integrations.langchain_messages import TPCMessagesCompressor
    from tpc_integrations.llama_index import TPCNodePostprocessor, TPCTransform

    every = options_for("every")
    return {TPCDocumentCompressor: every + options_for("query"), TPCNodePostprocessor: every + options_for("query"),
            TPCDocumentTransformer: every + options_for("index"), TPCTransform: every + options_for("index"),
            TPCMessagesCompressor: (*every, "budget_scope"), TPCInputCompressor: every + options_for("query")}


def test_each_adapter_has_the_options_its_kind_reaches_as_the_models_own_fields():
    for adapter_class, names in _adapters().items():
        fields = adapter_class.model_fields
        exposed = {name for name in FIELDS if name in fields}
        assert exposed == set(names), adapter_class.__name__
        for name in names:
            ours, theirs = FIELDS[name], fields[name]
            assert theirs.annotation == keyword_type(name), (adapter_class.__name__, name)  # what a caller passes
            checks = [item for item in theirs.metadata if not isinstance(item, StoredType)]
            assert checks == ours.metadata, (adapter_class.__name__, name)  # the same checks
            assert theirs.description.startswith(ours.description), (adapter_class.__name__, name)
            expected = False if (name, adapter_class.__name__) in {("describe_bare", "TPCDocumentTransformer"),
                                                                   ("describe_bare", "TPCTransform")} else ours.default
            assert theirs.default == expected, (adapter_class.__name__, name)


def _declared_in_class_bodies(cls):
    """The annotated names the source of ``cls`` and of the classes of ``tpc_integrations`` it inherits declare."""
    import ast
    import inspect

    declared = set()
    for base in cls.__mro__:
        module = inspect.getmodule(base)
        if module is None or not module.__name__.startswith("tpc_integrations"):
            continue
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.ClassDef) and node.name == base.__name__:
                declared |= {statement.target.id for statement in node.body if isinstance(statement, ast.AnnAssign)
                             and isinstance(statement.target, ast.Name)}
    return declared


def test_each_adapter_declares_its_engine_options_in_a_class_body():
    """Readers, IDEs and type checkers see every option field of an adapter in the source of a class it inherits: no
    class made at run time, no static copy imported under ``TYPE_CHECKING`` in its place."""
    import ast
    from pathlib import Path

    import tpc_integrations

    for adapter_class, names in _adapters().items():
        missing = set(names) - _declared_in_class_bodies(adapter_class)
        assert not missing, (adapter_class.__name__, sorted(missing))
    for path in Path(tpc_integrations.__file__).parent.glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                swapped = [item.module for item in ast.walk(node) if isinstance(item, ast.ImportFrom)
                           and (item.module or "").startswith("tpc_core.options")]
                assert not swapped, (path.name, swapped)


def test_the_query_time_and_index_time_options_are_those_of_today():
    assert options_for("every") == ("target_tokens", "rate", "force_keep_patterns", "keep_first_sentence",
                                    "keep_request", "splitter", "cache")
    assert set(options_for("query")) == {"budget_scope", "min_score", "top_n"}
    assert set(options_for("index")) == {"batch_size", "show_progress", "describe_bare"}
    assert options_for("none") == ("document_separator",)


def test_peer_names_are_validation_aliases_of_the_adapter_fields():
    from tpc_integrations._peer_names import PEER_ALIASES

    for adapter_class in _adapters():
        for alias in PEER_ALIASES.values():
            field = adapter_class.model_fields.get(alias.ours)
            if field is None:
                continue
            assert alias.name in field.validation_alias.choices, (adapter_class.__name__, alias.name)
            assert field.validation_alias.choices[0] == alias.ours


def test_an_adapter_refuses_a_bad_option_with_the_options_own_check():
    pytest.importorskip("langchain_core")
    from tpc_integrations.langchain import TPCDocumentCompressor

    with pytest.raises(ValueError, match="top_n must be a positive int"):
        TPCDocumentCompressor(top_n=0)
    with pytest.raises(TypeError, match="keep_request must be True or False"):
        TPCDocumentCompressor(keep_request="no")
    with pytest.raises(ValueError, match="splitter='punkt' is not a sentence splitter"):
        TPCDocumentCompressor(splitter="punkt")


# ------------------------------------------------------------------------------------------------ command line
def _compress_parser():
    from tpc_core.cli import build_parser

    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command")
    return commands.choices["compress"]


def test_the_cli_has_a_flag_for_each_option_that_reaches_it():
    parser = _compress_parser()
    flags = {action.dest: action for action in parser._actions}
    for name, field in FIELDS.items():
        assert (name in flags) == reach(field.metadata).cli, name
        if name in flags:
            assert "--" + name.replace("_", "-") in flags[name].option_strings
            assert " ".join(field.description.split()[:4]).replace("``", "") in flags[name].help


def test_the_cli_flags_become_the_options_of_the_call():
    parser = _compress_parser()
    args = parser.parse_args(["doc.txt", "--rate", "0.3", "--budget-scope", "per_document", "--force-keep-patterns",
                              "^Title", "--force-keep-patterns", "Total", "--no-keep-request", "--splitter", "regex",
                              "--min-score", "0.1", "--no-describe-bare"])
    options = flag_options(args)
    assert options == {"rate": 0.3, "budget_scope": "per_document", "force_keep_patterns": ["^Title", "Total"],
                       "keep_request": False, "splitter": "regex", "min_score": 0.1, "describe_bare": False}
    built = CompressOptions.build(**options)
    assert [p.pattern for p in built.force_keep_patterns] == ["^Title", "Total"] and built.keep_request is False
    assert flag_options(parser.parse_args(["doc.txt"])) == {}  # an unset flag leaves the option's default
    with pytest.raises(SystemExit):
        parser.parse_args(["doc.txt", "--rate", "0.3", "--target-tokens", "5"])


def test_add_option_flags_on_a_fresh_parser():
    import argparse

    parser = argparse.ArgumentParser()
    add_option_flags(parser)
    assert flag_options(parser.parse_args(["--keep-first-sentence"])) == {"keep_first_sentence": True}


def _corpus_parser():
    from tpc_core.cli import build_parser

    commands = next(action for action in build_parser()._actions if action.dest == "command")
    return commands.choices["compress-corpus"]


def test_the_corpus_command_s_option_flags_come_from_the_model():
    from tpc_core.corpus.local import CORPUS_DEFAULTS, CORPUS_OPTIONS

    flags = {action.dest: action for action in _corpus_parser()._actions}
    for name in CORPUS_OPTIONS:
        field = FIELDS[name]
        assert "--" + name.replace("_", "-") in flags[name].option_strings
        assert " ".join(field.description.split()[:4]).replace("``", "") in flags[name].help
    for name, value in CORPUS_DEFAULTS.items():
        assert f"(default: {value!r})" in flags[name].help
    args = _corpus_parser().parse_args(["in.jsonl", "out", "--rate", "0.3", "--describe-bare", "--batch-size", "8"])
    assert flag_options(args, CORPUS_OPTIONS) == {"rate": 0.3, "describe_bare": True, "batch_size": 8}
    assert flag_options(_corpus_parser().parse_args(["in.jsonl", "out"]), CORPUS_OPTIONS) == {}
    with pytest.raises(SystemExit):
        _corpus_parser().parse_args(["in.jsonl", "out", "--rate", "0.3", "--target-tokens", "5"])


def test_add_option_flags_refuses_a_name_that_is_no_option():
    import argparse

    with pytest.raises(ValueError, match="not options of CompressOptions"):
        add_option_flags(argparse.ArgumentParser(), ["rate", "ratio"])


# ------------------------------------------------------------------------------------------------ the model
def test_build_raises_the_checks_own_error_and_refuses_unknown_keywords():
    with pytest.raises(ValueError, match=r"^budget_scope must be one of"):
        CompressOptions.build(budget_scope="per_doc")
    with pytest.raises(TypeError, match=r"^keep_request must be True or False, got 1"):
        CompressOptions.build(keep_request=1)
    with pytest.raises(TypeError, match=r"Unknown compression option\(s\) 'keep_requests'.*keep_request"):
        CompressOptions.build(keep_requests=False)
    with pytest.raises(ValueError, match="not both"):
        CompressOptions(target_tokens=5, rate=0.5)


def test_the_old_names_still_import():
    import tpc_core
    import tpc_core.options as options_module
    from tpc_core.engine import options as engine_options
    from tpc_core.engine.selection import budget

    assert engine_options.CompressionOptions is CompressOptions and not hasattr(tpc_core, "CompressOptions")
    assert engine_options.CompressKeywords is CompressKeywords
    for name in ("BUDGET_SCOPES", "validate_budget_args", "validate_filter_args"):
        assert getattr(budget, name) is getattr(options_module, name)
    for name in ("compile_patterns", "as_documents", "as_questions", "Unpack"):
        assert getattr(engine_options, name) is not None


def test_patterns_are_compiled_and_dumped_as_strings():
    options = CompressOptions.build(force_keep_patterns="^Title")
    assert options.force_keep_patterns == (re.compile("^Title"),)
    assert options.model_dump()["force_keep_patterns"] == ("^Title",)
    assert CompressOptions.model_validate(options.model_dump()) == options


# ------------------------------------------------------------------------------------------------ keep_request
TICKET = ("Customer ticket #4821 from the billing team.\n\n"
          "The invoice for March was sent twice to the same address. The second copy listed a discount that the "
          "first did not. Our records show the discount was approved on 2 March by the regional manager. "
          "The customer paid the first invoice in full on 10 March. Shipping was delayed by a storm in the north. "
          "The warehouse moved to a new building last year.\n\n"
          "Please explain to the customer why two invoices were sent and whether they are owed a refund for the "
          "discount.")
REQUEST = ("Please explain to the customer why two invoices were sent and whether they are owed a refund for the "
           "discount.")


@pytest.mark.slow
def test_keep_request_keeps_the_written_request_over_the_budget_and_false_lets_it_compete(tpc_mini):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kept = tpc_mini.compress(TICKET, target_tokens=12)
        default = tpc_mini.compress(TICKET, target_tokens=12, keep_request=True)
        free = tpc_mini.compress(TICKET, target_tokens=12, keep_request=False)
    assert kept.task_source == free.task_source == "extracted" and kept.task_description == REQUEST
    assert kept.compressed_prompt == default.compressed_prompt == REQUEST  # pinned: kept whole, over the budget
    assert kept.over_budget == kept.compressed_tokens - 12 > 0
    assert any("is larger than the budget" in str(w.message) for w in caught)
    assert REQUEST not in free.compressed_prompt  # competing: it does not fit, so the budget holds
    assert free.over_budget == 0 and 0 < free.compressed_tokens <= 12
    assert free.compressed_prompt in TICKET


@pytest.mark.slow
def test_keep_request_false_changes_nothing_where_the_request_fits_and_wins(tpc_mini):
    kept = tpc_mini.compress(TICKET, target_tokens=40)
    free = tpc_mini.compress(TICKET, target_tokens=40, keep_request=False)
    assert REQUEST in kept.compressed_prompt and REQUEST in free.compressed_prompt
    assert kept.compressed_tokens <= 40 and free.compressed_tokens <= 40


# ------------------------------------------------------------------------------------------------ round trips
def test_a_compiled_pattern_s_flags_survive_a_dump():
    import re

    built = CompressOptions.build(force_keep_patterns=[re.compile("invoice", re.I), "Total",
                                                       re.compile("(?:ab)c", re.I | re.S), re.compile("(?m)^x")])
    dumped = built.model_dump()["force_keep_patterns"]
    assert dumped == ("(?i)invoice", "Total", "(?is)(?:ab)c", "(?m)^x")
    again = CompressOptions.build(force_keep_patterns=dumped).force_keep_patterns
    assert [p.flags for p in again] == [p.flags for p in built.force_keep_patterns]
    assert again[0].search("INVOICE 7")


@pytest.mark.parametrize("value", [5, None, b"x", {"a": 1}])
def test_force_keep_patterns_of_another_kind_is_named(value):
    with pytest.raises(TypeError, match=r"^force_keep_patterns must be a regex string, a compiled regex or a list"):
        CompressOptions.build(force_keep_patterns=value)


def test_the_adapters_option_classes_are_bound_where_they_are_made():
    import pickle

    for made in _option_classes():
        assert made.__module__ == "tpc_integrations._engine_options", made
        assert pickle.loads(pickle.dumps(made)) is made
