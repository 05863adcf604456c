"""The adapters' engine options, by kind of adapter: which options each kind has as settings fields
(:data:`ADAPTER_GROUPS`), and the static declaration of those fields that type checkers read.

``tpc_integrations`` builds each group's class at run time with :func:`tpc_core.options.option_fields` (each field
with the option's type, check, default, documentation and peer names), and its settings classes inherit them. A type
checker cannot read a class made at run time, so :mod:`tpc_core.options.adapter_fields` declares the same fields
statically: it is generated from :data:`ADAPTER_GROUPS` and :class:`~tpc_core.options.CompressOptions` by
``python -m tpc_core.options --write`` (``--check`` and tests/core/options/test_options.py fail when it drifts), and
the adapters' modules import it under ``TYPE_CHECKING`` in place of the run-time class.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tpc_core.options.model import CompressOptions
from tpc_core.options.surfaces import keyword_type, options_for, type_source

__all__ = ["ADAPTER_FIELDS_PATH", "ADAPTER_GROUPS", "AdapterGroup", "adapter_fields_source", "static_name"]

ADAPTER_FIELDS_PATH = Path(__file__).with_name("adapter_fields.py")


@dataclass(frozen=True)
class AdapterGroup:
    """The engine options one kind of adapter has as settings fields.

    Attributes:
        reach: The options whose :class:`~tpc_core.options.Reach` puts them on this kind of adapter ("every",
            "query", "index").
        doc: What the group is, for its class's documentation.
        only: A subset of those options, where the kind has only some of them (``None``: all of them).
        defaults: Another default for some of them, where this kind of adapter differs from ``compress``.
    """

    reach: Literal["every", "query", "index"]
    doc: str
    only: tuple[str, ...] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def names(self) -> tuple[str, ...]:
        """The group's options, in declaration order."""
        return options_for(self.reach) if self.only is None else self.only

    def default(self, name: str) -> Any:
        """Option ``name``'s default in this group."""
        return self.defaults.get(name, CompressOptions.model_fields[name].default)


ADAPTER_GROUPS: dict[str, AdapterGroup] = {
    "EveryAdapterOptions": AdapterGroup("every", "The engine options of every adapter."),
    "QueryTimeOptions": AdapterGroup(
        "query", "The engine options of the query-time adapters (document compressors, node postprocessors, the "
        "chain-input compressor): the budget's scope and the reranker-style filters applied after it."),
    "ConversationOptions": AdapterGroup(
        "query", "The query-time option a conversation adapter has (the filters have no meaning for messages).",
        only=("budget_scope",)),
    "IndexTimeOptions": AdapterGroup(
        "index", "The engine options of the index-time transformers: batching, the progress bar, whether bare "
        "documents are described (not by default: stored documents ask nothing)."),
    "AgentContextOptions": AdapterGroup(
        "every", "The option an agent's context adapter sets apart from every adapter: the sentence cache, on in "
        "memory by default (a tool result read again on a later call costs almost nothing).", only=("cache",),
        defaults={"cache": "memory"}),
}
"""Each adapter options class (by its name in ``tpc_integrations``) and the options it holds."""


def static_name(group: str) -> str:
    """The name of a group's static declaration in :mod:`tpc_core.options.adapter_fields`."""
    return group.removesuffix("Options") + "Fields"


def _value_source(value: Any) -> str:
    """A default as source text (strings in double quotes, as the formatter writes them)."""
    if isinstance(value, str) and '"' not in value and "\\" not in value and value.isprintable():
        return f'"{value}"'
    return repr(value)


_DOC = '''"""The adapters' engine-option classes, declared statically for type checkers: one class per
:data:`tpc_core.options.adapters.ADAPTER_GROUPS` entry, with each option's type and default.

GENERATED from :class:`tpc_core.options.CompressOptions` and ``ADAPTER_GROUPS`` by ``python -m tpc_core.options
--write``: do not edit (tests/core/options/test_options.py fails when this file drifts from them). At run time the
adapters inherit the classes ``tpc_integrations`` builds from the same groups (with each option's check,
documentation and peer names); these are what type checkers read in their place.
"""

from __future__ import annotations

'''


def adapter_fields_source() -> str:
    """The whole text of :mod:`tpc_core.options.adapter_fields`."""
    classes = []
    names = []
    for group_name, group in ADAPTER_GROUPS.items():
        name = static_name(group_name)
        names.append(name)
        doc = f'"""The static declaration of ``{group_name}``: {group.doc[0].lower()}{group.doc[1:]}"""'
        lines = [f"class {name}(BaseModel):",
                 *textwrap.wrap(doc, width=116, initial_indent=" " * 4, subsequent_indent=" " * 4,
                                break_on_hyphens=False, break_long_words=False), "",
                 "    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)", ""]
        for option in group.names():
            annotation = type_source(keyword_type(option))  # what a caller may pass (strings for patterns)
            lines.append(f"    {option}: {annotation} = {_value_source(group.default(option))}")
        classes.append("\n".join(lines))
    body = "\n\n\n".join(classes)
    typing_names = [name for name in ("Any", "Literal") if re.search(rf"\b{name}\b", body)]
    imports = ["import re"] if "re.Pattern" in body else []
    if "Iterable[" in body:
        imports.append("from collections.abc import Iterable")
    if typing_names:
        imports.append(f"from typing import {', '.join(typing_names)}")
    imports.extend(["", "from pydantic import BaseModel, ConfigDict"])
    if "SentenceSplitter" in body:
        imports.extend(["", "from tpc_core.segmentation import SentenceSplitter"])
    exports = ", ".join(f'"{name}"' for name in sorted(names))
    return f"{_DOC}{chr(10).join(imports)}\n\n__all__ = [{exports}]\n\n\n{body}\n"
