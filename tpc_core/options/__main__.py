"""``python -m tpc_core.options [--markdown | --write | --check]``: print the option table, rewrite the generated
texts (``CompressKeywords`` in ``tpc_core/options/keywords.py``, the README's table, every lazy package's names,
:mod:`tpc_core.lazy`) or check that they match their source (exit code 1)."""

from __future__ import annotations

import argparse
import sys

from tpc_core.lazy import lazy_packages, with_names
from tpc_core.options.surfaces import KEYWORDS_PATH, README_PATH, keywords_with_class, markdown_table, readme_with_table


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m tpc_core.options", description=__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--markdown", action="store_true", help="Print the README's option table.")
    action.add_argument("--write", action="store_true", help="Rewrite the generated files and the README's table.")
    action.add_argument("--check", action="store_true", help="Exit 1 when a generated text differs from the model.")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown_table())
        return 0
    written = {path: path.read_text(encoding="utf-8") for path in (KEYWORDS_PATH, README_PATH)}
    written.update({path: path.read_text(encoding="utf-8") for path in lazy_packages()})
    wanted = {KEYWORDS_PATH: keywords_with_class(written[KEYWORDS_PATH]),
              README_PATH: readme_with_table(written[README_PATH]),
              **{path: with_names(written[path]) for path in lazy_packages()}}
    stale = [path for path, text in wanted.items() if written[path] != text]
    if args.write:
        for path in stale:
            path.write_text(wanted[path], encoding="utf-8")
            print(f"rewrote {path}")
        return 0
    for path in stale:
        print(f"{path} differs from what it is generated from: run python -m tpc_core.options --write",
              file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
