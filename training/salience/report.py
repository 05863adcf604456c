"""The summary tables of a salience-head run, from the JSON that evaluate / index_proxy wrote.

``python -m training.salience.report DIR`` reads ``heldout.json``,
``in_domain.json`` and ``index_proxy.json`` there and writes ``summary.md``: the held-out-dataset table for
the main recipes at both rates, permissive-only against all data, in-domain, and the index-time proxy. No
number is computed here that is not in those files (only subset means are read and differences taken).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["MAIN_METHODS", "main", "method_rows"]

MAIN_METHODS: tuple[str, ...] = (
    "oracle", "lead", "lead-per-passage", "random", "centroid", "hand-logreg", "emb-logreg", "emb-mlp",
    "emb-mlp-listwise", "emb-mlp +mmr0.3", "emb-logreg +lead1.0", "emb-mlp-listwise +lead2.0",
    "emb-mlp-listwise [chosen]", "emb-mlp [chosen]",
)
PERMISSIVE_PAIRS: tuple[tuple[str, str], ...] = (
    ("emb-logreg", "emb-logreg (permissive)"), ("emb-mlp", "emb-mlp (permissive)"),
    ("emb-logreg +lead1.0", "emb-logreg (permissive) +lead1.0"), ("emb-mlp +lead2.0", "emb-mlp (permissive) +lead2.0"),
)


def _cell(row: Mapping[str, float] | None, rate: float) -> str:
    return "—" if not row else f"{row[f'r1@{rate}']:.3f} / {row[f'r2@{rate}']:.3f}"


def method_rows(table: Mapping[str, Mapping[str, Mapping[str, float]]], methods: Sequence[str],
                rate: float) -> list[str]:
    """Markdown rows ``| method | subset R1 / R2 ... | macro |`` for the methods present."""
    subsets = [s for s in table if s != "macro"] + ["macro"]
    lines = ["| method | " + " | ".join(subsets) + " |", "|---|" + "---:|" * len(subsets)]
    for method in methods:
        if any(method in table[s] for s in subsets):
            lines.append(f"| {method} | " + " | ".join(_cell(table[s].get(method), rate) for s in subsets) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Write ``summary.md`` beside the JSON results."""
    directory = Path((sys.argv[1:] if argv is None else argv)[0])
    heldout = json.loads((directory / "heldout.json").read_text())
    table = heldout["table"]
    lines = [f"# Salience head: recipe choice ({heldout['meta']['documents']} summ_train document sets, "
             f"{heldout['meta']['sentences']:,} sentences)", ""]
    for rate in heldout["meta"]["rates"]:
        lines += [f"## Held-out datasets, rate {rate}: ROUGE-1 / ROUGE-2 recall", "",
                  "Each column: heads trained without that `meta.dataset` (both Multi-News variants held out "
                  "together); `macro` = mean of the subsets. `[chosen]`: MMR / lead-blend variant picked on the "
                  "*other* held-out datasets.", "", *method_rows(table, MAIN_METHODS, rate), ""]
    lines += ["## Permissive subsets only (QMSum, SQuALITY, ScisummNet) against all data, same held-out sets", ""]
    for rate in heldout["meta"]["rates"]:
        lines += [f"Rate {rate}:", "", *method_rows(table, [m for pair in PERMISSIVE_PAIRS for m in pair], rate), ""]
    in_domain_path = directory / "in_domain.json"
    if in_domain_path.exists():
        inside = json.loads(in_domain_path.read_text())["table"]
        lines += ["## In-domain (a fifth of every dataset's documents held out by id)", ""]
        for rate in heldout["meta"]["rates"]:
            lines += [f"Rate {rate}:", "", *method_rows(inside, [m for m in MAIN_METHODS if "[" not in m], rate), ""]
    proxy_path = directory / "index_proxy.md"
    if proxy_path.exists():
        lines += ["## Index-time proxy (qa_dev train split, contexts compressed bare)", "", proxy_path.read_text()]
    (directory / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
