"""Whether a prompt's written request was found: one :class:`Outcome` per prompt, and their summary by family and shape.

What :mod:`benchmarks.request_found` reports, and what ``training.request_head`` checks its head with. A written
request counts as **found** when at least 80 % of its content words appear in the task description
(``tpc_core.engine.task.grounding.request_covered``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpc_core.engine.task.grounding import request_covered

__all__ = ["Outcome", "summarise", "summary_markdown"]


@dataclass(frozen=True)
class Outcome:
    """What one prompt's task became.

    Attributes:
        record_id: The record.
        family: Its phrasing family (``no_request_*`` for prompts that write none).
        shape: Its prompt shape.
        request: The written request (``""`` when the prompt writes none).
        description: The task description found.
        source: Where it came from (``extracted``, ``matched``, ``generated``, ``fallback``, ``coverage``; or
            ``not_extracted`` where only the request head was run).
    """

    record_id: str
    family: str
    shape: str
    request: str
    description: str
    source: str

    @property
    def found(self) -> bool:
        """Whether the description keeps the written request (always ``False`` for prompts with none)."""
        return bool(self.request) and request_covered(self.request, self.description)


def _group(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    written = [o for o in outcomes if o.request]
    without = [o for o in outcomes if not o.request]
    sources: dict[str, int] = defaultdict(int)
    for outcome in written:
        sources[outcome.source] += 1
    row: dict[str, Any] = {"prompts": len(outcomes), "with_request": len(written)}
    if written:
        row.update(found=round(sum(o.found for o in written) / len(written), 4),
                   fallback=sources.get("fallback", 0), sources=dict(sorted(sources.items())))
    if without:
        row.update(without_request=len(without),
                   no_request_kept_empty=round(sum(o.source != "extracted" for o in without) / len(without), 4))
    return row


def summarise(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Totals, then per family and per shape: found share, fallback count and sources of prompts that write a
    request; the share of prompts writing none that were not given an extracted request."""
    families = sorted({o.family for o in outcomes})
    shapes = sorted({o.shape for o in outcomes})
    return {"all": _group(outcomes),
            "by_family": {f: _group([o for o in outcomes if o.family == f]) for f in families},
            "by_shape": {s: _group([o for o in outcomes if o.shape == s and o.request]) for s in shapes}}


def summary_markdown(summary: Mapping[str, Any], title: str) -> str:
    """The summary as markdown tables."""
    lines = [f"## {title}", "", "| group | prompts | with request | found | fallback | no request kept empty |",
             "|---|---|---|---|---|---|"]

    def add(name: str, row: Mapping[str, Any]) -> None:
        lines.append(f"| {name} | {row['prompts']} | {row['with_request']} | {row.get('found', '')} | "
                     f"{row.get('fallback', '')} | {row.get('no_request_kept_empty', '')} |")

    add("**all**", summary["all"])
    for name, row in summary["by_family"].items():
        add(f"family `{name}`", row)
    for name, row in summary["by_shape"].items():
        add(f"shape `{name}`", row)
    return "\n".join(lines) + "\n"
