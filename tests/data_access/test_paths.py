"""Where the data lives: ``$TPC_DATA``, else ``shared/data`` beside the checkout; a file's own variable wins."""

from __future__ import annotations

from pathlib import Path

from data_access.loaders import default_qa_dev_path
from data_access.paths import CHECKOUT, HELDOUT_IDS, data_file, data_root


def test_the_checkout_is_the_repository_root_and_the_held_out_ids_are_in_it() -> None:
    assert (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "data_access" / "paths.py").is_file()
    assert HELDOUT_IDS.is_file()


def test_the_root_is_shared_data_beside_the_checkout_unless_tpc_data_says_otherwise(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("TPC_DATA", raising=False)
    monkeypatch.delenv("TPC_QA_DEV", raising=False)
    assert data_root() == CHECKOUT.parent / "shared" / "data"
    assert default_qa_dev_path() == CHECKOUT.parent / "shared" / "data" / "qa_dev.jsonl"
    monkeypatch.setenv("TPC_DATA", str(tmp_path))
    assert data_root() == tmp_path
    assert data_file("nq_train.jsonl.gz") == tmp_path / "nq_train.jsonl.gz"
    assert default_qa_dev_path() == tmp_path / "qa_dev.jsonl"
    monkeypatch.setenv("TPC_QA_DEV", str(tmp_path / "mine.jsonl"))
    assert data_file("qa_dev.jsonl", "TPC_QA_DEV") == Path(tmp_path / "mine.jsonl")
    assert default_qa_dev_path() == tmp_path / "mine.jsonl"
