"""A CSE assembled from published Hub parts: base decoder + PEFT LoRA adapter + tokenizer (the authors' CPC).

The layout is the one CPC's own loader reads (``Workday/cpc`` ``model/model.py``: tokenizer repo, base model,
``resize_token_embeddings(len(tokenizer))``, then ``PeftModel.from_pretrained`` on the inner decoder): an adapter
repo with ``adapter_config.json`` and ``adapter_model.safetensors`` (or ``adapter_model.bin``, read only with
``torch.load(weights_only=True)``), whose state may carry the whole resized ``embed_tokens`` matrix (PEFT saves
it when the vocabulary grew); the tokenizer repo holds the tokens those rows belong to.

Loading happens in two steps so that a name always means the same weights once loaded:
:func:`pin_hub_revisions` resolves every part to a commit (downloading it), and :func:`load_hub_cse` builds the
model from exactly those commits. :func:`materialise_checkpoint` turns a registered name into an ordinary TPC
checkpoint directory (config + the CTD parts it is paired with).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import torch

from tpc_core.config import AgnosticConfig, CSEConfig, TPCConfig
from tpc_core.loading.architecture import detect_architecture
from tpc_core.loading.hub import HubPart, load_weights_file, require_gated_access, resolve_part
from tpc_core.loading.paths import inside_checkpoint
from tpc_core.loading.registry import REGISTRY, RegisteredModel

__all__ = ["ADAPTER_CONFIG", "adapter_weights_file", "assembled_config", "cached_commits", "cached_unavailable_reason",
           "check_vocabulary", "hub_cse_config", "load_hub_cse", "materialise_checkpoint", "pin_hub_revisions",
           "read_adapter_config", "split_embedding_rows"]

logger = logging.getLogger(__name__)
ADAPTER_CONFIG = "adapter_config.json"
_ADAPTER_FILES = ("adapter_model.safetensors", "adapter_model.bin")
_TOKENIZER_PATTERNS = ["tokenizer*", "special_tokens_map.json", "added_tokens.json", "*.model", "*.jinja"]
_GATED_BASES = frozenset(m.hub_cse.base for m in REGISTRY.values() if m.hub_cse is not None and m.hub_cse.gated)


# ---------------------------------------------------------------- registered name -> TPC checkpoint
def hub_cse_config(model: RegisteredModel, adapter_revision: str | None = None) -> CSEConfig:
    """The CSE section for a registered Hub-assembled encoder (``adapter_revision`` overrides the pinned one)."""
    spec = model.hub_cse
    if spec is None:
        raise ValueError(f"{model.name} is not assembled from Hub parts.")
    return CSEConfig(base_model=spec.base, base_revision=spec.base_revision, architecture="decoder",
                     adapter_repo=spec.adapter, adapter_revision=adapter_revision or spec.adapter_revision,
                     adapter_allow_bin=spec.adapter_allow_bin, tokenizer_repo=spec.tokenizer,
                     tokenizer_revision=spec.tokenizer_revision, pooling="cpc", use_special_tokens=False,
                     max_window_tokens=spec.max_window_tokens, window_overlap_tokens=spec.window_overlap_tokens,
                     batch_size=spec.batch_size)


def _ctd_dirs(config: TPCConfig) -> list[str]:
    """Sub-directories of a checkpoint that its CTD needs (adapter, full weights, a base shipped inside)."""
    ctd = config.ctd
    assert ctd is not None
    return [d for d in (ctd.adapter_dir, ctd.weights_dir) if d]


def assembled_config(model: RegisteredModel, ctd_config: TPCConfig, options: Any, *, ctd_from: str) -> TPCConfig:
    """The config of the checkpoint :func:`materialise_checkpoint` writes for ``model`` (reads nothing, writes
    nothing: what a construction-time check validates).

    Args:
        model: A registered name with ``hub_cse``.
        ctd_config: The config of the checkpoint whose CTD serves prompt-agnostic mode.
        options: ``loading.HubOptions``; its ``revision`` selects the adapter's revision.
        ctd_from: What the caller named that checkpoint (``"tpc-mini"`` or a directory), recorded in the config.

    Raises:
        ValueError: That checkpoint has no CTD.
    """
    if ctd_config.ctd is None:
        raise ValueError(f"Checkpoint {ctd_from} has no task descriptor (ctd) to pair with {model.name}.")
    # The request head and coverage weights were fit to the CTD checkpoint's own CSE embeddings; a different
    # encoder's embeddings would be read by the wrong head, so only the fallback description is carried over.
    return TPCConfig(cse=hub_cse_config(model, options.revision), ctd=ctd_config.ctd,
                     agnostic=AgnosticConfig(fallback_description=ctd_config.agnostic.fallback_description),
                     splitter=ctd_config.splitter, name=model.name, trained=True,
                     extra={"ctd_from": ctd_from, "ctd_checkpoint": ctd_config.name},
                     languages=list(model.languages) or None)


def materialise_checkpoint(model: RegisteredModel, ctd_dir: Path, options: Any, *, ctd_from: str) -> Path:
    """Write (once) a TPC checkpoint for ``model``: its Hub CSE plus the CTD of another checkpoint.

    Args:
        model: A registered name with ``hub_cse``.
        ctd_dir: The (resolved) TPC checkpoint directory whose CTD serves prompt-agnostic mode.
        options: ``loading.HubOptions``; its ``revision`` selects the adapter's revision.
        ctd_from: What the caller named that checkpoint (``"tpc-mini"`` or a directory), recorded in the config.

    Returns:
        The checkpoint directory, under ``tpc_core.loading.offline.cache_root()/assembled``.
    """
    from tpc_core.loading.offline import cache_root

    ctd_config = TPCConfig.load(ctd_dir)
    config = assembled_config(model, ctd_config, options, ctd_from=ctd_from)
    assert ctd_config.ctd is not None  # assembled_config refuses a checkpoint without one
    copied = [(relative, inside_checkpoint(ctd_dir, relative, "ctd part")) for relative in _ctd_dirs(ctd_config)]
    base = ctd_config.ctd.base_model
    if base and (ctd_dir / base).is_dir():  # a base shipped inside the CTD checkpoint travels with it
        copied.append((base, inside_checkpoint(ctd_dir, base, "ctd.base_model")))
    text = json.dumps(config.to_dict(), sort_keys=True)
    digest = hashlib.sha256(text.encode())
    for _, source in copied:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                digest.update(f"{path.relative_to(source)}:{path.stat().st_size}:{path.stat().st_mtime_ns}".encode())
    target = cache_root() / "assembled" / f"{model.name}-{digest.hexdigest()[:12]}"
    if (target / "tpc_config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{model.name}-", dir=target.parent))
    try:
        for relative, source in copied:
            shutil.copytree(source, staging / relative)
        config.save(staging)
        try:
            staging.rename(target)
        except OSError:  # another process wrote the same checkpoint first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


# ---------------------------------------------------------------- resolution (downloads) and pinning
def _parts(config: CSEConfig, options: Any, *, local_only: bool = False) -> list[HubPart]:
    hub = {"token": options.token, "cache_dir": options.cache_dir,
           "local_files_only": options.local_files_only or local_only}
    adapter_patterns = [ADAPTER_CONFIG, _ADAPTER_FILES[0]] + ([_ADAPTER_FILES[1]] if config.adapter_allow_bin else [])
    parts = []
    if config.tokenizer_repo:
        parts.append(resolve_part("tokenizer", config.tokenizer_repo, config.tokenizer_revision,
                                  allow_patterns=_TOKENIZER_PATTERNS, **hub))
    if config.adapter_repo:
        parts.append(resolve_part("adapter", config.adapter_repo, config.adapter_revision,
                                  allow_patterns=adapter_patterns, **hub))
    parts.append(resolve_part("base", config.base_model, config.base_revision, **hub))
    return parts


def pin_hub_revisions(config: TPCConfig, options: Any) -> TPCConfig:
    """Resolve (and download) every Hub part of the CSE; return the config pinned to the commits found.

    A config without Hub parts is returned unchanged. ``extra["hub_parts"]`` records, per part, the repo, the
    revision asked for and the commit it resolved to; saving the pinned config keeps those exact weights.

    Raises:
        GatedRepoAccessError: A gated base with no token and no cached copy (before any download).
        FileNotFoundError: A missing repo, revision or (offline) cache entry.
    """
    cse = config.cse
    if not cse.from_hub_parts:
        return config
    if cse.base_model in _GATED_BASES:
        require_gated_access(cse.base_model, token=options.token, cache_dir=options.cache_dir,
                             local_files_only=options.local_files_only)
    parts = {part.role: part for part in _parts(cse, options)}

    def pinned_revision(role: str, asked: str | None) -> str | None:
        return (parts[role].commit or asked) if role in parts else asked

    pinned = dataclasses.replace(cse, base_revision=pinned_revision("base", cse.base_revision),
                                 adapter_revision=pinned_revision("adapter", cse.adapter_revision),
                                 tokenizer_revision=pinned_revision("tokenizer", cse.tokenizer_revision))
    extra = {**config.extra, "hub_parts": {role: part.record() for role, part in parts.items()}}
    return dataclasses.replace(config, cse=pinned, extra=extra)


# ---------------------------------------------------------------- checks on the downloaded files
def read_adapter_config(directory: Path, repo_id: str) -> dict[str, Any]:
    """The adapter's ``adapter_config.json``, checked to be a LoRA adapter with target modules.

    Raises:
        FileNotFoundError: The repo has no ``adapter_config.json``.
        ValueError: Not a LoRA adapter, or no target modules.
    """
    path = directory / ADAPTER_CONFIG
    if not path.is_file():
        raise FileNotFoundError(f"Adapter repo {repo_id} has no {ADAPTER_CONFIG} (files: "
                                f"{sorted(p.name for p in directory.iterdir())}); it is not a PEFT adapter.")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("peft_type") != "LORA":
        raise ValueError(f"Adapter repo {repo_id} is a {data.get('peft_type')!r} adapter; only LoRA is supported.")
    if not data.get("target_modules"):
        raise ValueError(f"Adapter repo {repo_id}: {ADAPTER_CONFIG} names no target_modules.")
    return data


def adapter_weights_file(directory: Path, repo_id: str, *, allow_bin: bool) -> Path:
    """``adapter_model.safetensors``, else ``adapter_model.bin`` when the weights-only loader is allowed.

    Raises:
        FileNotFoundError: Neither file (or only a ``.bin`` that was not downloaded because it is not allowed).
        ValueError: Only a ``.bin`` is present and ``allow_bin`` is off.
    """
    safetensors, pickled = (directory / name for name in _ADAPTER_FILES)
    if safetensors.is_file():
        return safetensors
    if pickled.is_file():
        if not allow_bin:
            raise ValueError(f"Adapter repo {repo_id} has only {pickled.name}, a pickle, and the safe .bin loader is "
                             "off: set cse.adapter_allow_bin=true to read it with torch.load(weights_only=True).")
        return pickled
    raise FileNotFoundError(f"Adapter repo {repo_id} has no {_ADAPTER_FILES[0]}"
                            + (f" or {_ADAPTER_FILES[1]}." if allow_bin else
                               " (a pickle adapter_model.bin is read only with cse.adapter_allow_bin=true)."))


def split_embedding_rows(state: dict[str, torch.Tensor]) -> tuple[torch.Tensor | None, dict[str, torch.Tensor]]:
    """The input-embedding matrix an adapter carries (saved when its vocabulary was resized), and the rest."""
    rows = [key for key in state if key.endswith("embed_tokens.weight") and "lora_" not in key]
    if len(rows) > 1:
        raise ValueError(f"Adapter holds several embedding matrices: {rows}.")
    rest = {key: value for key, value in state.items() if key not in rows}
    return (state[rows[0]] if rows else None), rest


def check_vocabulary(tokenizer_size: int, base_rows: int, adapter_rows: int | None, tokenizer_repo: str,
                     adapter_repo: str) -> None:
    """The tokenizer must hold exactly the tokens the adapter's embedding rows were trained for.

    Raises:
        ValueError: The tokenizer lacks added tokens the adapter has rows for, or has tokens it has none for.
    """
    if adapter_rows is None:
        if tokenizer_size > base_rows:
            warnings.warn(f"{tokenizer_repo} has {tokenizer_size - base_rows} token(s) beyond the base model's "
                          f"{base_rows} embedding rows and {adapter_repo} carries no rows for them: they get the "
                          "mean embedding (they only matter where a prompt contains them).", stacklevel=3)
        return
    if tokenizer_size < adapter_rows:
        raise ValueError(f"Tokenizer {tokenizer_repo} has {tokenizer_size} tokens but adapter {adapter_repo} was "
                         f"trained with {adapter_rows} embedding rows: it lacks the {adapter_rows - tokenizer_size} "
                         "added token(s) the compressor expects. Use the tokenizer repo published with the adapter "
                         "(cse.tokenizer_repo / tokenizer_revision).")
    if tokenizer_size > adapter_rows:
        raise ValueError(f"Tokenizer {tokenizer_repo} has {tokenizer_size} tokens, more than the {adapter_rows} "
                         f"embedding rows of adapter {adapter_repo}: they do not belong together.")


# ---------------------------------------------------------------- building the model
def _fit_embeddings(model: Any, tokenizer_size: int, rows: torch.Tensor | None) -> None:
    weight = model.get_input_embeddings().weight
    if rows is not None and rows.shape[1] != weight.shape[1]:
        raise ValueError(f"The adapter's embedding rows have width {rows.shape[1]}, the base model {weight.shape[1]}: "
                         "the adapter belongs to another base model.")
    wanted = rows.shape[0] if rows is not None else max(tokenizer_size, weight.shape[0])
    if wanted != weight.shape[0]:
        model.resize_token_embeddings(wanted, mean_resizing=True)
    if rows is not None:
        with torch.no_grad():
            model.get_input_embeddings().weight.copy_(rows.to(model.get_input_embeddings().weight.dtype))


def _apply_lora(model: Any, adapter_config: dict[str, Any], state: dict[str, torch.Tensor], repo_id: str) -> Any:
    from peft import LoraConfig, PeftModel, set_peft_model_state_dict

    known = {f.name for f in dataclasses.fields(LoraConfig)}
    lora = LoraConfig(**{k: v for k, v in adapter_config.items() if k in known and k != "peft_type"})
    lora.inference_mode = True
    # An adapter saved from the causal-LM wrapper names the decoder ``model.``; ours is the bare decoder.
    state = {key.replace("base_model.model.model.", "base_model.model.", 1): value for key, value in state.items()}
    peft_model = PeftModel(model, lora)
    try:
        result: Any = set_peft_model_state_dict(peft_model, state)  # torch's load_state_dict keys, untyped in peft
    except RuntimeError as error:
        raise ValueError(f"Adapter {repo_id} does not fit the base model (another base or revision?): {error}") \
            from error
    unexpected = [key for key in result.unexpected_keys if "lora_" in key]
    missing = [key for key in result.missing_keys if "lora_" in key]
    if unexpected or missing:
        raise ValueError(f"Adapter {repo_id} does not match the base model: {len(missing)} LoRA weight(s) missing, "
                         f"{len(unexpected)} unexpected (e.g. {(missing + unexpected)[:2]}).")
    return peft_model.merge_and_unload()


def load_hub_cse(config: CSEConfig, options: Any, device: torch.device,
                 dtype: torch.dtype) -> tuple[Any, Any, str]:
    """Build the CSE backbone from its Hub parts (see the module docstring); returns ``(model, tokenizer, arch)``.

    Hub parts never run remote code (``trust_remote_code=False`` whatever the options say), and the base is
    read from safetensors only.

    Raises:
        FileNotFoundError: A part, revision or file is missing.
        ValueError: A refused pickle, a tokenizer without the adapter's added tokens, an adapter that does not
            fit the base, a slow tokenizer.
    """
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    pinned = all(r is None or len(r) == 40 for r in (config.base_revision, config.adapter_revision,
                                                     config.tokenizer_revision))
    parts = {part.role: part for part in _parts(config, options, local_only=pinned and _cached(config, options))}
    base = parts["base"]
    tokenizer_part = parts.get("tokenizer", base)
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_part.path), trust_remote_code=False)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"Tokenizer {tokenizer_part.repo_id} has no fast (Rust) version; character offsets need one.")
    if config.use_special_tokens:  # markers must come with the published tokenizer: new rows would be untrained
        absent = [t for t in (config.end_of_sentence_token, config.end_of_question_token)
                  if t not in tokenizer.get_vocab()]
        if absent:
            raise ValueError(f"cse.use_special_tokens needs {absent} in tokenizer {tokenizer_part.repo_id}, which "
                             "lacks them; use pooling='cpc' (no markers) or a tokenizer trained with them.")
    model_config = AutoConfig.from_pretrained(str(base.path), trust_remote_code=False)
    architecture = detect_architecture(model_config) if config.architecture == "auto" else config.architecture
    if not any(base.path.glob("*.safetensors")):
        raise FileNotFoundError(f"Base repo {base.repo_id}@{base.commit or base.revision} has no safetensors weights "
                                "(pickle weights of a base model are never loaded).")
    model = AutoModel.from_pretrained(str(base.path), use_safetensors=True, dtype=dtype, trust_remote_code=False)
    rows = None
    lora_state: dict[str, torch.Tensor] = {}
    if "adapter" in parts:
        adapter = parts["adapter"]
        adapter_config = read_adapter_config(adapter.path, adapter.repo_id)
        weights = adapter_weights_file(adapter.path, adapter.repo_id, allow_bin=config.adapter_allow_bin)
        rows, lora_state = split_embedding_rows(load_weights_file(weights, allow_bin=config.adapter_allow_bin))
        check_vocabulary(len(tokenizer), model.get_input_embeddings().weight.shape[0],
                         None if rows is None else rows.shape[0], tokenizer_part.repo_id, adapter.repo_id)
    _fit_embeddings(model, len(tokenizer), rows)
    if "adapter" in parts:
        model = _apply_lora(model, adapter_config, lora_state, parts["adapter"].repo_id)
    if tokenizer.pad_token is None:  # CPC's own loader does the same
        tokenizer.pad_token = tokenizer.eos_token
    model.to(device=device, dtype=dtype)
    model.eval()
    return model, tokenizer, architecture


def _cached(config: CSEConfig, options: Any) -> bool:
    """Every pinned commit of the config already has a snapshot in the cache (no network needed)."""
    from tpc_core.loading.hub import repo_cache_folder

    pairs = [(config.base_model, config.base_revision), (config.adapter_repo, config.adapter_revision),
             (config.tokenizer_repo, config.tokenizer_revision)]
    return all(repo is None or (revision is not None
                                and (repo_cache_folder(repo, options.cache_dir) / "snapshots" / revision).is_dir())
               for repo, revision in pairs)


def cached_commits(name: str, cache_dir: str | None = None) -> str:
    """``":hub=<commit12>,..."`` of registered ``name``'s parts in the local cache (``""`` for other names), so
    cached benchmark results of different published revisions never mix."""
    from tpc_core.loading.hub import cached_refs

    model = REGISTRY.get(name)
    if model is None or model.hub_cse is None:
        return ""
    spec = model.hub_cse
    commits = [cached_refs(repo, cache_dir).get(revision or "main", revision or "?")[:12]
               for repo, revision in ((spec.base, spec.base_revision), (spec.adapter, spec.adapter_revision),
                                      (spec.tokenizer, spec.tokenizer_revision))]
    return ":hub=" + ",".join(commits)


def cached_unavailable_reason(name: str, cache_dir: str | None = None) -> str | None:
    """``None`` when every Hub part of registered ``name`` is in the local cache; otherwise why it cannot run."""
    from tpc_core.loading.hub import cached_refs

    model = REGISTRY.get(name)
    if model is None or model.hub_cse is None:
        return None
    spec = model.hub_cse
    missing = [repo for repo, revision in ((spec.base, spec.base_revision), (spec.adapter, spec.adapter_revision),
                                           (spec.tokenizer, spec.tokenizer_revision))
               if (revision or "main") not in cached_refs(repo, cache_dir) and not (
                   revision and len(revision) == 40 and revision in cached_refs(repo, cache_dir).values())]
    if missing:
        return (f"no local weights for {name}: {', '.join(missing)} not in the Hugging Face cache (download them "
                f"once with TPCCompressor.from_pretrained({name!r}) where the Hub is reachable)")
    return None
