"""Loading, saving and describing a compressor's checkpoint: the ``from_pretrained`` / ``save_pretrained`` /
``push_to_hub`` methods of :class:`tpc_core.TPCCompressor`, as Hugging Face's models have them (a mixin, so the
compressor itself holds only what it does with the models)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import transformers

from tpc_core.config import ScorerConfig, TPCConfig
from tpc_core.engine.scoring.cse import ContextSentenceEncoder
from tpc_core.engine.scoring.scorers import scorer_class
from tpc_core.loading.checkpoint import (
    HubOptions,
    check_config_paths,
    load_cse_deferred,
    push_checkpoint,
    resolve_checkpoint_dir,
    save_checkpoint,
)
from tpc_core.loading.devices import resolve_device, resolve_dtype
from tpc_core.loading.hub_cse import pin_hub_revisions
from tpc_core.loading.registry import DEFAULT_MODEL
from tpc_core.version import __version__

if TYPE_CHECKING:
    from typing_extensions import Self


__all__ = ["PretrainedMixin"]


class PretrainedMixin:
    """``from_pretrained``, ``save_pretrained``, ``push_to_hub`` and ``info`` for a class built as
    ``cls(config, encoder, checkpoint_dir=, hub_options=, device=, dtype=, load_ctd=)`` that has ``config``,
    ``checkpoint_dir``, ``encoder``, ``device`` and ``dtype``."""

    config: TPCConfig
    checkpoint_dir: Path
    encoder: ContextSentenceEncoder
    device: torch.device
    dtype: torch.dtype

    if TYPE_CHECKING:  # what the class this mixes into provides (from_pretrained builds one with these arguments)
        def __init__(self, config: TPCConfig, encoder: ContextSentenceEncoder, *, checkpoint_dir: Path,
                     hub_options: HubOptions, device: torch.device, dtype: torch.dtype, load_ctd: bool = False
                     ) -> None: ...

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path = DEFAULT_MODEL, *, revision: str | None = None,
                        token: str | bool | None = None, cache_dir: str | None = None,
                        local_files_only: bool = False, device: str | torch.device | None = None,
                        dtype: str | torch.dtype | None = None, trust_remote_code: bool = False,
                        load_ctd: bool = False, ctd: str | Path | None = None,
                        trust_config_paths: bool = False,
                        scorer: str | ScorerConfig | None = None) -> Self:
        """Load a TPC checkpoint.

        Args:
            name_or_path: ``"tpc-mini"`` (offline default), ``"cpc-llama-1b"``/``"cpc-mistral-7b"`` (the authors'
                published CPC encoders, assembled from Hub parts), a local checkpoint directory, or a Hub repo
                id. ``"tpc-base"``/``"tpc-large"``/``"tpc-huge"`` are not published and raise.
            revision: Hub revision of the checkpoint (for ``cpc-*``: of the adapter repo).
            token: Hub token for private repos.
            cache_dir: Hub cache directory.
            local_files_only: Never touch the network; use cached files only.
            device: "cpu", "cuda", "mps", a torch.device, or ``None`` to pick the best available.
            dtype: "fp32", "bf16", "fp16", a torch.dtype, or ``None`` (bf16 on CUDA, fp32 elsewhere).
            trust_remote_code: Allow model code from the Hub (off unless you ask).
            load_ctd: Load the task descriptor now instead of on first prompt-agnostic use.
            ctd: For ``cpc-*``: the checkpoint (registered name or directory) whose CTD serves prompt-agnostic
                mode; default ``"tpc-mini"``.
            trust_config_paths: Let the config's ``base_model`` name a local directory outside the checkpoint
                (only for checkpoints you wrote yourself, e.g. ``training/``'s runs); off: every path in the
                config stays inside the checkpoint (see ``tpc_core.loading.checkpoint``).
            scorer: Override the checkpoint's scoring function: a name from ``tpc_core.engine.scoring.scorers.SCORERS``
                (``"pooled_cosine"``: the paper's cosine; ``"cosine_bm25"``: cosine fused with BM25, with the
                checkpoint's ``lexical_weight``) or a full ``ScorerConfig``; ``None``: the checkpoint's own.
        """
        options = HubOptions(revision=revision, token=token, cache_dir=cache_dir,
                             local_files_only=local_files_only, trust_remote_code=trust_remote_code,
                             confine_paths=not trust_config_paths)
        checkpoint_dir = resolve_checkpoint_dir(name_or_path, options, ctd=ctd)
        # Hub parts (cpc-*) resolve to commits first: the loaded weights, info() and save_pretrained agree.
        config = pin_hub_revisions(TPCConfig.load(checkpoint_dir), options)
        if scorer is not None:
            config = dataclasses.replace(config, scorer=config.scorer.overridden(scorer))
        check_config_paths(config, checkpoint_dir, options)  # the CTD's too, though it loads on first use
        scorer_class(config.scorer)  # an unknown scorer name fails before any weights load
        resolved_device = resolve_device(device)
        resolved_dtype = resolve_dtype(dtype, resolved_device)
        # The backbone's weights load on the first forward pass: a prompt that needs no embeddings never loads them.
        model, tokenizer, architecture = load_cse_deferred(config.cse, checkpoint_dir, options, resolved_device,
                                                           resolved_dtype)
        encoder = ContextSentenceEncoder(model, tokenizer, config.cse, architecture, resolved_device)
        return cls(config, encoder, checkpoint_dir=checkpoint_dir, hub_options=options, device=resolved_device,
                   dtype=resolved_dtype, load_ctd=load_ctd)

    def save_pretrained(self, directory: str | Path) -> Path:
        """Write this checkpoint (config and trained parts; base models stay references) to ``directory``."""
        return save_checkpoint(self.config, self.checkpoint_dir, directory)

    def push_to_hub(self, repo_id: str, *, token: str | None = None, private: bool | None = None,
                    commit_message: str = "Upload TPC checkpoint", revision: str | None = None) -> str:
        """Upload this checkpoint to the Hub; returns the commit URL."""
        return push_checkpoint(self.config, self.checkpoint_dir, repo_id, token=token, private=private,
                               commit_message=commit_message, revision=revision)

    def info(self) -> dict[str, Any]:
        """Model, device and version facts (what ``tpc info`` prints)."""
        return {"tpc_langchain": __version__, "torch": torch.__version__, "transformers": transformers.__version__,
                "checkpoint": self.config.name, "checkpoint_dir": str(self.checkpoint_dir),
                "trained": self.config.trained, "device": str(self.device),
                "dtype": str(self.dtype).replace("torch.", ""),
                "cse_base": self.config.cse.base_model, "cse_architecture": self.encoder.architecture,
                "cse_pooling": self.config.cse.pooling,
                "ctd_base": self.config.ctd.base_model if self.config.ctd else None,
                "splitter": self.config.splitter, "languages": self.config.languages,
                "hub_parts": self.config.extra.get("hub_parts")}
