"""Construction-time checks of the adapters' settings: cheap, and before any retrieval runs.

Each check raises a ``ValueError`` (or ``TypeError``) that names the setting and says what to pass instead,
so a wrong device or a misspelt model fails when the pipeline is built, not after the retriever has run.
None of them loads model weights.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any

import torch

from tpc_core import TPCCompressor
from tpc_core.cache import SecretURL, check_cache_spec, is_secret, redacted_url, reveal
from tpc_core.engine import TokenCounter, resolve_token_counter
from tpc_core.loading import HubOptions, read_checkpoint_config, resolve_device, resolve_dtype
from tpc_core.options import check_splitter

__all__ = ["TPCSettingsError", "check_cache", "check_device", "check_dtype", "check_model", "check_model_kwargs",
           "check_splitter", "check_token_counter", "hidden_cache"]

#: The text a token counter is tried on when it is set: a counter that gives it no token cannot count.
COUNTER_PROBE = "TPC checks that this counter counts tokens."


class TPCSettingsError(ValueError):
    """A bad adapter setting, raised when the adapter is built: the message names the setting and says what to pass
    instead. The one error class of the adapters' settings (a wrong kind of value, an impossible value, a peer's
    spelling, a cache directory that cannot be written are all this)."""


def check_token_counter(spec: Any) -> TokenCounter:
    """The counter ``spec`` stands for, tried once on a short probe text: one that cannot load (an unknown name, a
    tokenizer not available offline) or counts the probe as no token (a fake model's ``get_num_tokens`` offline) is
    refused now rather than at the first call, when it would compress nothing or fail.

    Raises:
        ValueError: The counter cannot count (the message says why and what to pass).
        TypeError: Not a kind of counter (from :func:`tpc_core.engine.tokens.resolve_token_counter`).
    """
    counter = resolve_token_counter(spec)
    try:
        probe = counter(COUNTER_PROBE)
    except Exception as error:  # a lazily loaded tokenizer, a model's counter that needs the network
        raise ValueError(f"token_counter={_name(spec)} cannot count: {type(error).__name__}: {error}. Pass a counter "
                         "that works offline: a tiktoken name ('cl100k_base'), a local tokenizer, or a "
                         "Callable[[str], int].") from error
    if isinstance(probe, bool) or not isinstance(probe, int) or probe <= 0:
        raise ValueError(f"token_counter={_name(spec)} counted {probe!r} tokens in the probe text {COUNTER_PROBE!r}; "
                         "a counter must give a positive int for non-empty text (with 0, nothing would ever be "
                         "compressed). Pass a counter that works here: 'cl100k_base', a tokenizer, or a "
                         "Callable[[str], int].")
    return counter


def _name(spec: Any) -> str:
    return repr(spec) if isinstance(spec, str) else type(spec).__name__

_LOADER_OPTIONS = ("token", "cache_dir", "local_files_only", "trust_remote_code", "load_ctd", "ctd")


def check_device(device: str | None) -> None:
    """A device this machine has: ``None``/"auto", "cpu", "cuda[:n]" (with CUDA), "mps" (with MPS)."""
    if device is None:
        return
    try:
        resolved = resolve_device(device)
    except RuntimeError as error:  # torch.device("gpu"): torch's own message lists every backend
        raise ValueError(f"device={device!r} is not a device name; use 'cpu', 'cuda', 'cuda:1', 'mps' or None "
                         "(best available).") from error
    if resolved.type == "cuda" and resolved.index is not None and resolved.index >= torch.cuda.device_count():
        raise ValueError(f"device={device!r}: this machine has {torch.cuda.device_count()} CUDA device(s).")
    if resolved.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise ValueError(f"device={device!r} was requested but Apple MPS is not available; use 'cpu' or None.")


def check_dtype(dtype: str | None, device: str | None) -> None:
    """A dtype name ``resolve_dtype`` knows ("fp32", "bf16", "fp16", ...), or None."""
    resolve_dtype(dtype, resolve_device(device))


def check_model_kwargs(model_kwargs: dict[str, Any]) -> None:
    """Only :meth:`TPCCompressor.from_pretrained` options that the adapters do not set themselves."""
    accepted = [name for name in inspect.signature(TPCCompressor.from_pretrained).parameters if name in _LOADER_OPTIONS]
    own_fields = {"revision": "revision", "device": "device", "dtype": "dtype", "device_map": "device",
                  "name_or_path": "model_name_or_path", "model_name": "model_name_or_path"}
    for key in model_kwargs:
        if key in accepted:
            continue
        close = difflib.get_close_matches(key, [*accepted, *own_fields], n=1, cutoff=0.6)
        target = close[0] if close else None
        field = own_fields.get(key) or (own_fields.get(target) if target is not None else None)
        if field is not None:
            hint = f"set the adapter's `{field}` field instead"
        else:
            hint = f"accepted: {', '.join(accepted)}" + (f" (did you mean {target!r}?)" if target else "")
        raise ValueError(f"model_kwargs[{key!r}] is not a TPCCompressor.from_pretrained option: {hint}.")


def check_model(name_or_path: str, revision: str | None, model_kwargs: dict[str, Any]) -> None:
    """The checkpoint exists and is a TPC checkpoint (its ``tpc_config.json`` parses, a ``cpc-*`` name's ``ctd``
    checkpoint has a task descriptor); no weights are loaded and nothing is written (no ``cpc-*`` checkpoint is
    assembled in the cache, no Hub file is cached).

    Registered names and local directories are checked offline; a Hub repo id's ``tpc_config.json`` is read from
    the Hugging Face cache, else fetched into a temporary directory (see
    ``tpc_core.loading.checkpoint.read_checkpoint_config``).
    """
    options = HubOptions(revision=revision, token=model_kwargs.get("token"), cache_dir=model_kwargs.get("cache_dir"),
                         local_files_only=bool(model_kwargs.get("local_files_only", False)),
                         trust_remote_code=bool(model_kwargs.get("trust_remote_code", False)))
    try:
        read_checkpoint_config(name_or_path, options, ctd=model_kwargs.get("ctd"))
    except (OSError, ValueError) as error:
        raise ValueError(f"model_name_or_path={name_or_path!r} cannot be loaded: {error}") from error


def check_cache(cache: Any) -> None:
    """A ``cache=`` value the engine accepts (:func:`tpc_core.cache.resolve.check_cache_spec`): None, "memory", a
    directory this process may write (a ``Path``, or a string that looks like a path), a
    ``tpc_core.cache.SentenceCache``, a LangChain byte store, a LlamaIndex key-value store, or a Redis URL (a
    ``SecretURL`` or ``SecretStr`` holding one). Checking creates nothing and connects to nothing.

    Raises:
        ValueError: A string that is neither "memory" nor a path (with a did-you-mean), a secret that holds no Redis
            URL, or a Redis URL whose password was redacted.
        TypeError: Any other kind of value (the message names the accepted kinds).
        PermissionError: A directory that cannot be created or written (the message names it).
        NotADirectoryError: A path that is a file.
    """
    check_cache_spec(cache)


def hidden_cache(cache: Any) -> Any:
    """``cache`` as an adapter holds it: a URL that holds a password (in its user info or a ``password=`` of its
    query), or a pydantic ``SecretStr`` holding a URL, becomes a :class:`~tpc_core.cache.secret.SecretURL`, so the
    adapter's ``repr``, dumps and serialised forms show it without the password; any other value is returned as it
    is (:func:`check_cache` judges it).

    A URL whose password is the ``***`` of a redacted one (copied from a dump) is left as it is, for
    :func:`check_cache` to refuse.
    """
    if isinstance(cache, SecretURL):
        return cache
    url = reveal(cache)
    if not isinstance(url, str) or "://" not in url:
        return cache
    return SecretURL(url) if is_secret(cache) or redacted_url(url) != url else cache
