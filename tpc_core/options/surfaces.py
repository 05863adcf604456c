"""Every surface of the compress options, derived from :class:`tpc_core.options.CompressOptions`.

* :func:`keywords_source`: the source of :mod:`tpc_core.options.keywords` (the ``CompressKeywords`` TypedDict that
  types ``compress(**options)``; static, so type checkers read it);
* :func:`markdown_table`: the README's option table;
* :func:`add_option_flags` / :func:`flag_options`: the ``tpc compress`` flags, and the options they were given;
* :func:`option_fields`: a pydantic model holding chosen options as fields, for the adapters' settings to inherit.

The two generated texts are rewritten by ``python -m tpc_core.options --write`` and compared by ``--check`` (and by
tests/core/options/test_options.py).
"""

from __future__ import annotations

import argparse
import re
import textwrap
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from tpc_core.options.model import CompressOptions, reach

__all__ = ["KEYWORDS_PATH", "README_PATH", "TABLE_BEGIN", "TABLE_END", "add_option_flags", "flag_options",
           "keyword_type", "keywords_source", "markdown_table", "option_fields", "options_for", "readme_with_table",
           "type_source"]

KEYWORDS_PATH = Path(__file__).with_name("keywords.py")
README_PATH = Path(__file__).resolve().parents[2] / "README.md"
TABLE_BEGIN = "<!-- compress options: generated from tpc_core.options.CompressOptions (python -m tpc_core.options " \
              "--write); do not edit -->"
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


_KEYWORDS_DOC = '''"""``CompressKeywords``: the keyword options of ``compress`` / ``compress_batch``, typed for
``**options``.

GENERATED from :class:`tpc_core.options.CompressOptions` by ``python -m tpc_core.options --write``: do not edit (the
option's declaration is its field there; tests/core/options/test_options.py fails when this file drifts from it).
"""

from __future__ import annotations

'''

_KEYWORDS_CLASS = '''
# Re-exported for the methods that take ``**options: Unpack[CompressKeywords]`` (typing has it from 3.11).
if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

__all__ = ["CompressKeywords", "Unpack"]


class CompressKeywords(TypedDict, total=False):
    """The keyword options of ``compress`` and ``compress_batch`` (each one's default and check: the same-named
    field of :class:`tpc_core.options.CompressOptions`). Unknown keywords raise a ``TypeError`` naming them.

    Attributes:
'''


def _imports(annotations: str) -> list[str]:
    """The import lines the generated annotations need (isort's order: standard library, then ours)."""
    typing_names = [name for name in ("Any", "Literal") if re.search(rf"\b{name}\b", annotations)]
    lines = ["import re"] if "re.Pattern" in annotations else []
    lines.append("import sys")
    if "Iterable[" in annotations:
        lines.append("from collections.abc import Iterable")
    lines.append(f"from typing import {', '.join([*typing_names, 'TypedDict'])}")
    if "SentenceSplitter" in annotations:
        lines.extend(["", "from tpc_core.segmentation import SentenceSplitter"])
    return lines


def keywords_source() -> str:
    """The whole text of :mod:`tpc_core.options.keywords`."""
    names = CompressOptions.keyword_names()
    annotations = [f"    {name}: {type_source(keyword_type(name))}" for name in names]
    lines = [_KEYWORDS_DOC + "\n".join(_imports("\n".join(annotations))) + "\n" + _KEYWORDS_CLASS.rstrip("\n")]
    for name in names:
        field = CompressOptions.model_fields[name]
        text = f"{name}: {_description(field)} Default: ``{field.default!r}``."
        lines.extend(textwrap.wrap(text.replace("\\", "\\\\"), width=116, initial_indent=" " * 8,
                                   subsequent_indent=" " * 12, break_on_hyphens=False, break_long_words=False))
    lines.append('    """')
    lines.append("")
    lines.extend(annotations)
    return "\n".join(lines) + "\n"


def markdown_table() -> str:
    """The README's table of the options: name, type, default, meaning (one row per field, in order)."""
    rows = ["| option | type | default | meaning |", "|---|---|---|---|"]
    for name, field in CompressOptions.model_fields.items():
        kind = type_source(keyword_type(name)).replace("|", "\\|")
        meaning = _description(field).replace("|", "\\|")
        rows.append(f"| `{name}` | `{kind}` | `{field.default!r}` | {meaning} |")
    return "\n".join(rows)


def readme_with_table(readme: str) -> str:
    """``readme`` with the text between :data:`TABLE_BEGIN` and :data:`TABLE_END` replaced by :func:`markdown_table`.

    Raises:
        ValueError: The markers are missing.
    """
    start = readme.find(TABLE_BEGIN)
    end = readme.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"README has no option table between {TABLE_BEGIN!r} and {TABLE_END!r}.")
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


# ---------------------------------------------------------------------------------------------- adapters
def options_for(adapters: str) -> tuple[str, ...]:
    """The options whose :class:`Reach` puts them on ``adapters`` ("every", "query", "index")."""
    return tuple(name for name, field in CompressOptions.model_fields.items()
                 if reach(field.metadata).adapters == adapters)


def option_fields(model_name: str, names: Sequence[str], *, module: str | None = None,
                  defaults: Mapping[str, Any] | None = None,
                  notes: Mapping[str, str] | None = None, aliases: Mapping[str, Iterable[str]] | None = None,
                  shown: Iterable[str] = ()) -> type[BaseModel]:
    """A pydantic model whose fields are the options ``names``, each with the option's type, check, default and
    documentation, for settings classes to inherit.

    Args:
        model_name: The class name of the model made.
        names: Fields of :class:`CompressOptions`.
        module: The module the class is named in (its ``__module__``, for pickling and ``help``); default this one.
        defaults: Another default for some of them (e.g. index time does not describe bare documents).
        notes: A sentence added to some fields' documentation (what differs for this kind of adapter).
        aliases: Other accepted names for some fields (peer names), as pydantic validation aliases.
        shown: Fields the model's repr shows although the option's does not (``cache``, where the model hides a
            URL's password itself).
    """
    defaults = dict(defaults or {})
    notes = dict(notes or {})
    aliases = dict(aliases or {})
    fields: dict[str, Any] = {}
    for name in names:
        field = CompressOptions.model_fields[name]
        annotation: Any = field.annotation
        if field.metadata:  # the checks and serialisers pydantic keeps beside the type: Annotated[type, *metadata]
            arguments = (field.annotation, *field.metadata)
            annotation = Annotated[arguments]
        description = " ".join(filter(None, [field.description, notes.get(name)]))
        choices = tuple(aliases.get(name, ()))
        fields[name] = (annotation, Field(
            defaults.get(name, field.default), description=description, repr=field.repr or name in set(shown),
            validation_alias=AliasChoices(name, *choices) if choices else None))
    return create_model(model_name, __config__=ConfigDict(arbitrary_types_allowed=True), __module__=module or __name__,
                        **fields)
