"""The compress options are declared once, in the option groups of ``tpc_core.options`` that make
``CompressOptions``: the adapters take the groups themselves, every other surface (the typed ``**options``, the
``tpc compress`` flags, the README's table) is derived from the model, and each test here fails when one of them
drifts from it. ``keep_request``, the option added as a single field, is
tested on a real prompt with tpc-mini."""

from __future__ import annotations

import re
import typing
import warnings

import pytest

from tpc_core.options import (
    SURFACE_DEFAULTS,
    BatchOptions,
    BudgetOptions,
    CompressKeywords,
    CompressOptions,
    FilterOptions,
    Reach,
    ReadingOptions,
    ScopeOptions,
    surface_defaults,
    surface_defaults_table,
)
from tpc_core.options.model import reach
from tpc_core.options.surfaces import (
    KEYWORDS_BEGIN,
    KEYWORDS_PATH,
    README_PATH,
    add_option_flags,
    flag_options,
    keyword_type,
    keywords_with_class,
    markdown_table,
    readme_with_table,
    type_source,
)

FIELDS = CompressOptions.model_fields
GROUPS = (BudgetOptions, ReadingOptions, ScopeOptions, FilterOptions, BatchOptions)

# Options of the engine call alone, in no adapter group: how compressed documents are joined, and the threads of
# the small forward passes (a process-level serving choice).
ENGINE_ONLY = {"document_separator", "small_pass_threads"}


def _names(*groups):
    return tuple(name for group in groups for name in group.model_fields)


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
        row = next(" ".join(item.split()) for item in re.split(r"\n(?=- `)", table) if item.startswith(f"- `{name}` ("))
        assert f"`{field.default!r}`" in row and " ".join(field.description.split()[:4]) in row


def test_a_converting_option_takes_what_callers_pass_and_stores_it_as_the_option_stores_it():
    given = ["(?i)total", re.compile("x", re.M)]
    made = ReadingOptions(force_keep_patterns=given)
    assert made.force_keep_patterns == CompressOptions.build(force_keep_patterns=given).force_keep_patterns
    assert isinstance(made.force_keep_patterns, tuple)
    assert made.model_dump()["force_keep_patterns"] == ("(?i)total", "(?m)x")
    assert ReadingOptions.model_json_schema()["properties"]["force_keep_patterns"]["items"] == {
        "format": "regex", "type": "string"}


def test_the_generator_checks_the_generated_texts():
    from tpc_core.options.__main__ import main

    assert main(["--check"]) == 0


def test_every_option_is_documented_and_declared_in_one_group():
    for name, field in FIELDS.items():
        assert field.description and len(field.description) > 20, f"{name} has no docstring"
        assert isinstance(reach(field.metadata), Reach)
        owners = [group for group in GROUPS if name in group.model_fields]
        assert len(owners) == (0 if name in ENGINE_ONLY else 1), name
        if owners:  # the group's field is the model's
            declared = owners[0].model_fields[name]
            assert (declared.annotation, declared.default, declared.description, declared.metadata) == (
                field.annotation, field.default, field.description, field.metadata), name


# ------------------------------------------------------------------------------------------------ adapters
def _adapters():
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from tpc_integrations.langchain import TPCDocumentCompressor, TPCDocumentTransformer, TPCInputCompressor
    from tpc_integrations.langchain_messages import TPCMessagesCompressor
    from tpc_integrations.llama_index import TPCNodePostprocessor, TPCTransform

    every = _names(BudgetOptions, ReadingOptions)
    query = every + _names(ScopeOptions, FilterOptions)
    return {TPCDocumentCompressor: query, TPCNodePostprocessor: query, TPCInputCompressor: query,
            TPCDocumentTransformer: every + _names(BatchOptions), TPCTransform: every + _names(BatchOptions),
            TPCMessagesCompressor: every + _names(ScopeOptions)}


def test_each_adapter_has_the_options_of_its_groups_as_the_models_own_fields():
    for adapter_class, names in _adapters().items():
        fields = adapter_class.model_fields
        exposed = {name for name in FIELDS if name in fields}
        assert exposed == set(names), adapter_class.__name__
        for name in names:
            ours, theirs = FIELDS[name], fields[name]
            assert theirs.annotation == ours.annotation, (adapter_class.__name__, name)
            assert theirs.metadata == ours.metadata, (adapter_class.__name__, name)  # the same checks
            assert theirs.description == ours.description, (adapter_class.__name__, name)
            assert theirs.default == ours.default, (adapter_class.__name__, name)  # one default on every surface


def _declared_in_class_bodies(cls):
    """The annotated names the source of ``cls`` and of the classes of ``tpc_integrations`` it inherits declare."""
    import ast
    import inspect

    declared = set()
    for base in cls.__mro__:
        module = inspect.getmodule(base)
        if module is None or not module.__name__.startswith(("tpc_integrations", "tpc_core.options")):
            continue
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.ClassDef) and node.name == base.__name__:
                declared |= {statement.target.id for statement in node.body if isinstance(statement, ast.AnnAssign)
                             and isinstance(statement.target, ast.Name)}
    return declared


def test_each_adapter_takes_its_engine_options_from_a_group_declared_in_a_class_body():
    """Readers, IDEs and type checkers see every option field of an adapter in the source of a class it inherits (an
    option group of ``tpc_core.options``): no class made at run time, no static copy imported under
    ``TYPE_CHECKING`` in its place."""
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


def test_the_option_groups_are_those_of_today():
    assert _names(BudgetOptions, ReadingOptions) == ("target_tokens", "rate", "force_keep_patterns",
                                                     "keep_first_sentence", "keep_request", "splitter", "cache")
    assert _names(ScopeOptions, FilterOptions) == ("budget_scope", "min_score", "top_n")
    assert _names(BatchOptions) == ("batch_size", "show_progress", "describe_bare")
    assert set(FIELDS) == {*_names(*GROUPS), *ENGINE_ONLY}


def test_the_defaults_that_differ_by_surface_are_one_table_with_reasons():
    assert {(row.surface, row.option): row.default for row in SURFACE_DEFAULTS} == {
        ("agents", "on_error"): "passthrough", ("agents", "cache"): "memory", ("chat memory", "cache"): "memory"}
    assert surface_defaults("agents") == {"on_error": "passthrough", "cache": "memory"}
    assert surface_defaults("chat memory") == {"cache": "memory"}
    assert surface_defaults("retrievers") == {}
    table = surface_defaults_table()
    for row in SURFACE_DEFAULTS:
        assert len(row.reason) > 40 and row.reason in table


def test_a_peer_spelling_is_refused_at_once_naming_ours():
    from tpc_integrations._checks import TPCSettingsError
    from tpc_integrations._peer_names import PEER_ALIASES

    given = {"target_token": 300, "model_name": "tpc-mini", "model": "tpc-mini", "device_map": "cpu", "k": 2,
             "token_limit": 100}
    assert set(given) == set(PEER_ALIASES)
    for adapter_class in _adapters():
        for alias in PEER_ALIASES.values():
            if alias.ours not in adapter_class.model_fields:
                continue
            with pytest.raises(TPCSettingsError) as raised:
                adapter_class(**{alias.name: given[alias.name]})
            shown = repr(alias.convert(given[alias.name]))
            assert f"`{alias.ours}={shown}`" in str(raised.value), (adapter_class.__name__, alias.name)


def test_an_adapter_refuses_a_bad_option_with_the_options_own_check():
    pytest.importorskip("langchain_core")
    from tpc_integrations._checks import TPCSettingsError
    from tpc_integrations.langchain import TPCDocumentCompressor

    with pytest.raises(ValueError, match="top_n must be a positive int"):
        TPCDocumentCompressor(top_n=0)
    with pytest.raises(TPCSettingsError, match="keep_request must be True or False"):
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
