"""The scoring heads' one base: a new head is one subclass and one table entry; shipped files read and write as
before."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from tpc_core.engine.scoring.head import ScoringHead, head_metadata
from tpc_core.engine.scoring.lead import LeadCorrection
from tpc_core.engine.scoring.salience import SalienceHead
from tpc_core.loading.heads import HEADS, AnyHead, load_head

SHIPPED = Path(__file__).resolve().parents[4] / "tpc_core" / "checkpoints" / "tpc-mini"


@dataclass(frozen=True)
class ScaledHead(ScoringHead):
    """A head no module of the project defines: two features, a scale read from its file's config."""

    scale: float = 1.0

    kind: ClassVar[str] = "scaled_test_head"
    what: ClassVar[str] = "scaled test head"
    features: ClassVar[tuple[str, ...]] = ("length", "position")
    config_keys: ClassVar[tuple[str, ...]] = ("scale",)
    retrain: ClassVar[str] = "the test"

    def scores(self, features: torch.Tensor) -> torch.Tensor:
        return self.scale * self.output(self.standardised(features))


def _scaled(hidden: int | None) -> ScaledHead:
    generator = torch.Generator().manual_seed(3)
    width = hidden or 2
    return ScaledHead(torch.randn(width, generator=generator), 0.25, torch.tensor([1.0, -2.0]),
                      torch.tensor([0.5, 3.0]),
                      torch.randn(width, 2, generator=generator) if hidden else None,
                      torch.randn(width, generator=generator) if hidden else None, scale=2.5)


@pytest.mark.parametrize("hidden", [None, 4])
def test_a_new_head_is_one_subclass_and_one_table_entry(tmp_path, monkeypatch, hidden) -> None:
    monkeypatch.setitem(HEADS, ScaledHead.kind, ScaledHead)
    head = _scaled(hidden)
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    head.save(checkpoint / "scaled.safetensors", {"command": "made by a test"})

    loaded = load_head(AnyHead, "scaled.safetensors", checkpoint, "agnostic.scaled")

    assert type(loaded) is ScaledHead
    assert loaded.scale == 2.5 and loaded.bias == 0.25
    features = torch.randn(6, 2, generator=torch.Generator().manual_seed(5))
    assert torch.equal(loaded.scores(features), head.scores(features))
    assert head_metadata(checkpoint / "scaled.safetensors") == {
        "command": "made by a test", "kind": "scaled_test_head", "features": "length,position", "scale": "2.5"}
    with pytest.raises(ValueError, match="outside the checkpoint"):
        load_head(AnyHead, "../scaled.safetensors", checkpoint, "agnostic.scaled")


def test_a_kind_the_table_lacks_is_read_as_a_salience_head_and_refused_clearly(tmp_path) -> None:
    _scaled(None).save(tmp_path / "scaled.safetensors")
    with pytest.raises(ValueError, match="not a salience head: it holds"):
        AnyHead.load(tmp_path / "scaled.safetensors")


def test_head_files_that_do_not_fit_are_refused_with_the_reason(tmp_path) -> None:
    head = _scaled(4)
    path = tmp_path / "bad.safetensors"
    head.save(path)
    with pytest.raises(ValueError, match="not a lead correction .its kind is 'scaled_test_head'"):
        LeadCorrection.load(path)
    tensors = {"weight": head.weight, "bias": torch.tensor([0.0]), "mean": head.mean, "std": head.std,
               "hidden_weight": torch.zeros(4, 3), "hidden_bias": torch.zeros(4)}
    header = {"kind": "scaled_test_head", "features": "length,position"}
    save_file(tensors, str(path), metadata=header)
    with pytest.raises(ValueError, match=r"inconsistent scaled test head shapes .*'hidden_weight': \(4, 3\)"):
        ScaledHead.load(path)
    save_file({**tensors, "hidden_weight": torch.zeros(4, 2)}, str(path), metadata={**header, "scale": "fast"})
    with pytest.raises(ValueError, match="config scale='fast' is not JSON"):
        ScaledHead.load(path)
    save_file({**tensors, "hidden_weight": torch.zeros(4, 2)}, str(path), metadata={**header, "scale": '"2"'})
    with pytest.raises(ValueError, match="is not a float"):
        ScaledHead.load(path)
    save_file({**tensors, "std": torch.zeros(2), "hidden_weight": torch.zeros(4, 2)}, str(path), metadata=header)
    with pytest.raises(ValueError, match="inconsistent"):
        ScaledHead.load(path)


def _header_and_data(path: Path) -> tuple[dict[str, object], bytes]:
    """A safetensors file as its parsed header and its tensor bytes (the header's key order is the writer's
    hash order, so the file's bytes are compared in these two parts)."""
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8:8 + size]), raw[8 + size:]


@pytest.mark.parametrize(("head_type", "name"), [(LeadCorrection, "lead_correction"),
                                                 (SalienceHead, "salience_head")])
def test_the_shipped_heads_load_and_save_to_the_same_file(tmp_path, head_type, name) -> None:
    shipped = SHIPPED / f"{name}.safetensors"
    with safe_open(str(shipped), framework="pt") as handle:
        metadata = handle.metadata()
    written = {"features", *head_type.config_keys, *(("kind",) if head_type.marks_files else ())}
    provenance = {key: value for key, value in metadata.items() if key not in written}

    head = AnyHead.load(shipped)
    assert type(head) is head_type
    head.save(tmp_path / "again.safetensors", provenance)

    assert _header_and_data(tmp_path / "again.safetensors") == _header_and_data(shipped)


@pytest.mark.parametrize("head_type", [AnyHead, LeadCorrection])
def test_a_head_file_that_is_not_safetensors_is_named_with_its_config_key(tmp_path: Path, head_type) -> None:
    # what a clone without `git lfs pull` holds in place of the weights
    (tmp_path / "head.safetensors").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:0123\n"
                                               "size 1532\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"agnostic.lead_correction .*head.safetensors is not a safetensors file"):
        load_head(head_type, "head.safetensors", tmp_path, "agnostic.lead_correction")
