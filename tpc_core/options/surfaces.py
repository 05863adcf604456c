"""Every surface of the compress options, derived from :class:`tpc_core.options.CompressOptions`.

* :func:`keywords_class`: the source of the ``CompressKeywords`` TypedDict that types ``compress(**options)``
  (static, so type checkers read it), the generated part of :mod:`tpc_core.options.keywords`;
* :func:`markdown_table`: the option list of docs/options-and-production.md;
* :func:`add_option_flags` / :func:`flag_options`: the ``tpc compress`` flags, and the options they were given;
* :data:`SURFACE_DEFAULTS`: the one table of defaults that differ by surface, with the reason of each (the adapters'
  settings take the option groups of :mod:`tpc_core.options.model` themselves, unchanged).

The two generated texts (each after its marker) are rewritten by ``python -m tpc_core.options --write`` and compared
by ``--check`` (and by tests/core/options/test_options.py).
"""

from __future__ import annotations

import argparse
import re
import textwrap
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Union

from pydantic.fields import FieldInfo

from tpc_core.options.model import CompressOptions, reach

__all__ = ["KEYWORDS_BEGIN", "KEYWORDS_PATH", "README_PATH", "SURFACE_DEFAULTS", "TABLE_BEGIN", "TABLE_END",
           "SurfaceDefault", "add_option_flags", "flag_options", "keyword_type", "keywords_class",
           "keywords_with_class", "markdown_table", "readme_with_table", "surface_defaults", "surface_defaults_table",
           "type_source"]

KEYWORDS_PATH = Path(__file__).with_name("keywords.py")
README_PATH = Path(__file__).resolve().parents[2] / "docs" / "options-and-production.md"
TABLE_BEGIN = "<!-- compress options: generated from CompressOptions by python -m tpc_core.options --write -->"
TABLE_END = "<!-- end of compress options -->"


def _description(field: FieldInfo) -> str:
    """The field's documentation on one line, Sphinx roles (``:mod:`x```) written as plain code spans."""
    return re.sub(r":\w+:`([^`]+)`", r"``\1``", " ".join((field.description or "").split()))


def _members(annotation: Any) -> list[Any]:
    """The types a field may hold but ``None``: the members of a union, else the annotation itself."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    return [annotation]


def keyword_type(name: str) -> Any:
    """The type a caller passes for option ``name``: the field's, or what its :class:`Reach` says it accepts."""
    field = CompressOptions.model_fields[name]
    accepts = reach(field.metadata).accepts
    return accepts if accepts is not None else field.annotation


def type_source(annotation: Any) -> str:
    """``annotation`` as source text (``X | None`` for optionals, ``Literal["a", "b"]``, ``re.Pattern[str]``)."""
    if annotation is type(None) or annotation is None:
        return "None"
    if annotation is Any:
        return "Any"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (Union, types.UnionType):
        return " | ".join(type_source(arg) for arg in args)
    if origin is Literal:
        return f"Literal[{', '.join(_literal(arg) for arg in args)}]"
    if origin is not None:
        name = {re.Pattern: "re.Pattern"}.get(origin, getattr(origin, "__name__", str(origin)))
        inner = ", ".join("..." if arg is Ellipsis else type_source(arg) for arg in args)
        return f"{name}[{inner}]"
    return getattr(annotation, "__name__", str(annotation))


def _literal(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


KEYWORDS_BEGIN = ("# GENERATED below from tpc_core.options.CompressOptions (python -m tpc_core.options --write); "
                  "do not edit")

_KEYWORDS_CLASS = '''class CompressKeywords(TypedDict, total=False):
    """The keyword options of ``compress`` and ``compress_batch`` (each one's default and check: the same-named
    field of :class:`tpc_core.options.CompressOptions`). Unknown keywords raise a ``TypeError`` naming them.

    Attributes:'''


def keywords_class() -> str:
    """The source of ``CompressKeywords``, the generated part of :mod:`tpc_core.options.keywords`: each keyword with
    its type and documentation."""
    names = CompressOptions.keyword_names()
    lines = [_KEYWORDS_CLASS]
    for name in names:
        field = CompressOptions.model_fields[name]
        text = f"{name}: {_description(field)} Default: ``{field.default!r}``."
        lines.extend(textwrap.wrap(text.replace("\\", "\\\\"), width=116, initial_indent=" " * 8,
                                   subsequent_indent=" " * 12, break_on_hyphens=False, break_long_words=False))
    lines.extend(['    """', ""])
    lines.extend(f"    {name}: {type_source(keyword_type(name))}" for name in names)
    return "\n".join(lines) + "\n"


def keywords_with_class(source: str) -> str:
    """``source`` (the text of :mod:`tpc_core.options.keywords`) with what follows :data:`KEYWORDS_BEGIN` replaced by
    :func:`keywords_class`; the module's imports and re-exports above it are written by hand.

    Raises:
        ValueError: The marker is missing.
    """
    start = source.find(KEYWORDS_BEGIN)
    if start < 0:
        raise ValueError(f"tpc_core/options/keywords.py has no line {KEYWORDS_BEGIN!r} above CompressKeywords.")
    return f"{source[:start]}{KEYWORDS_BEGIN}\n{keywords_class()}"


def markdown_table() -> str:
    """The docs' list of the options: name, type, default, meaning (one item per field, in order), wrapped at 120."""
    items = []
    for name, field in CompressOptions.model_fields.items():
        kind = type_source(keyword_type(name))
        item = f"- `{name}` (`{kind}`, default `{field.default!r}`): {_description(field)}"
        items.append(textwrap.fill(item, width=120, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False))
    return "\n".join(items)


def readme_with_table(readme: str) -> str:
    """``readme`` with the text between :data:`TABLE_BEGIN` and :data:`TABLE_END` replaced by :func:`markdown_table`.

    Raises:
        ValueError: The markers are missing.
    """
    start = readme.find(TABLE_BEGIN)
    end = readme.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"{README_PATH.name} has no option list between {TABLE_BEGIN!r} and {TABLE_END!r}.")
    return f"{readme[:start]}{TABLE_BEGIN}\n{markdown_table()}\n{readme[end:]}"


# ---------------------------------------------------------------------------------------------- command line
def _cli_names() -> list[str]:
    return [name for name, field in CompressOptions.model_fields.items() if reach(field.metadata).cli]


def add_option_flags(parser: argparse.ArgumentParser, names: Sequence[str] | None = None,
                     defaults: Mapping[str, Any] | None = None) -> None:
    """A flag for each option whose :class:`Reach` says ``cli``: ``--name-with-dashes``; booleans as
    ``--x`` / ``--no-x``, tuples repeated, literals as choices. Unset flags default to ``None`` (the option's own
    default applies).

    Args:
        parser: The command's parser.
        names: The options to give flags, where a command has only some (``tpc compress-corpus``); ``None``: every
            option that the command line reaches.
        defaults: The default a command applies instead of the option's own, for the help text (the command applies
            it when the flag is not given).

    Raises:
        ValueError: A name that is not an option.
    """
    unknown = sorted(set(names or ()) - set(CompressOptions.model_fields))
    if unknown:
        raise ValueError(f"{unknown} are not options of CompressOptions.")
    shown = {**{name: field.default for name, field in CompressOptions.model_fields.items()}, **(defaults or {})}
    groups: dict[str, Any] = {}
    for name in _cli_names() if names is None else names:
        field = CompressOptions.model_fields[name]
        exclusive = reach(field.metadata).exclusive
        target: Any = parser
        if exclusive is not None:
            if exclusive not in groups:
                groups[exclusive] = parser.add_mutually_exclusive_group()
            target = groups[exclusive]
        kind = _members(field.annotation)
        default = "" if shown[name] in (None, ()) else f" (default: {shown[name]!r})"
        text = _description(field).replace("``", "").replace("%", "%%")
        settings: dict[str, Any] = {"default": None, "help": text + default}
        if kind[0] is bool:
            settings["action"] = argparse.BooleanOptionalAction
        elif typing.get_origin(kind[0]) is Literal:
            settings["choices"] = typing.get_args(kind[0])
        elif typing.get_origin(kind[0]) is tuple:
            settings.update(action="append", metavar="REGEX")
        elif kind[0] in (int, float):
            settings["type"] = kind[0]
        target.add_argument("--" + name.replace("_", "-"), **settings)


def flag_options(args: argparse.Namespace, names: Sequence[str] | None = None) -> dict[str, Any]:
    """The options given as flags (:func:`add_option_flags`, with the same ``names``), by name; the ones not given
    are left out."""
    chosen = _cli_names() if names is None else names
    return {name: getattr(args, name) for name in chosen if getattr(args, name, None) is not None}


# ---------------------------------------------------------------------------------------------- surfaces
@dataclass(frozen=True)
class SurfaceDefault:
    """A default that one kind of surface sets apart from every other, and why.

    Attributes:
        surface: The surface ("agents": ``TPCContextMiddleware``, ``TPCContextHook``, ``TPCFunctionAgent``).
        option: The option or setting.
        default: Its default there.
        reason: Why it differs.
    """

    surface: str
    option: str
    default: Any
    reason: str


SURFACE_DEFAULTS = (
    SurfaceDefault("agents", "on_error", "passthrough", "An agent's model call goes on when its context cannot be "
                   "compressed: the messages are sent unchanged, with a warning and the error in the call's event. "
                   "Everywhere else (\"raise\") a fault reaches the caller."),
    SurfaceDefault("agents", "cache", "memory", "An agent sends its tool results again on every model call: the "
                   "cache reads each one once, so the later calls cost almost nothing. Everywhere else the cache is "
                   "off (None) until you choose where it lives."),
    SurfaceDefault("chat memory", "cache", "memory", "A chat memory reads the whole history on every ``get``: the "
                   "cache keeps what it read, so a ``get`` after one more turn reads only that turn."),
)
"""Every default that differs between surfaces, in one table (the docs render :func:`surface_defaults_table`);
every other option and setting has one default everywhere: the core's."""


def surface_defaults(surface: str) -> dict[str, Any]:
    """The defaults :data:`SURFACE_DEFAULTS` gives ``surface``, by option."""
    return {row.option: row.default for row in SURFACE_DEFAULTS if row.surface == surface}


def surface_defaults_table() -> str:
    """:data:`SURFACE_DEFAULTS` as a Markdown table: surface, option, default, why."""
    rows = ["| surface | option | default | why |", "|---|---|---|---|"]
    rows.extend(f"| {row.surface} | `{row.option}` | `{row.default!r}` | {row.reason} |" for row in SURFACE_DEFAULTS)
    return "\n".join(rows)
