"""The README's "Extending" section: its example runs as written and prints what its comment says, and each table it
names is the one the code reads."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text(encoding="utf-8")
    return text.split("## Extending: one table per kind of thing", 1)[1].split("\n## ", 1)[0]


def test_the_extending_example_prints_what_it_says() -> None:
    code = re.search(r"```python\n(.*?)```", section(), re.S)
    assert code is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), str(README), "exec"), {})
    said = re.search(r"# (\[.*\])\s*$", code.group(1).strip())
    assert said is not None and out.getvalue().strip() == said.group(1)


def test_each_table_the_section_names_is_importable_where_it_says() -> None:
    import importlib

    names = re.findall(r"`(tpc_core(?:\.\w+)+)\.([A-Z_]+)`", section())
    assert {name for _, name in names} == {"CACHE_KINDS", "CHAT_TEMPLATES", "RECORD_KINDS", "HEADS"}
    for module, name in names:
        assert hasattr(importlib.import_module(module), name), (module, name)
