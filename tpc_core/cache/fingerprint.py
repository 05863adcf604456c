"""What an entry depends on, as 16 bytes, and the key of a document's entry.

An entry is valid only for the model, config, splitter, tokenizer and storage dtype that made it. The compressor
describes its model (:meth:`tpc_core.TPCCompressor.cache_fingerprint`: the weights' hashes or Hub commits, the CSE
config, the tokenizer, the compute dtype); :func:`fingerprint` adds the splitter and the storage dtype. The
fingerprint keys the document (:func:`entry_key`: a blake2b of the text keyed by it) and is written inside the
entry, where :func:`~tpc_core.cache.entry.decode_entry` checks it again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Mapping
from typing import Any

from tpc_core.cache.entry import FORMAT_VERSION
from tpc_core.segmentation import SentenceSplitter
from tpc_core.segmentation.splitter import SPLIT_RULES_REVISION, LineAwareSplitter
from tpc_core.version import __version__

__all__ = ["KEY_PREFIX", "entry_key", "fingerprint", "splitter_identity"]

#: Every entry key starts with it, so a cache in a shared store clears only the entries TPC wrote.
KEY_PREFIX = "tpc-"

# The package whose code a built-in backend runs (its version changes where sentences are cut).
_BACKEND_PACKAGES = {"nupunkt": "nupunkt", "nltk": "nltk"}


@functools.cache
def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def splitter_identity(splitter: SentenceSplitter) -> str | None:
    """A string that names what ``splitter`` cuts, or ``None`` where it cannot be told (then no cache is used).

    A built-in splitter is its backend, its settings and the code versions (tpc-langchain's and the backend
    package's). Another object names itself with a ``cache_identity`` string attribute (change it whenever its
    cuts change); one without it is never cached.
    """
    if isinstance(splitter, LineAwareSplitter):
        package = _BACKEND_PACKAGES.get(splitter.name)
        return json.dumps(["tpc", __version__, SPLIT_RULES_REVISION, splitter.name, splitter.max_sentence_chars,
                           splitter.join_wrapped_lines, _package_version(package) if package else None])
    identity = getattr(splitter, "cache_identity", None)
    return f"custom:{type(splitter).__module__}.{type(splitter).__qualname__}:{identity}" \
        if isinstance(identity, str) and identity else None


def fingerprint(model: Mapping[str, Any], splitter: str, dtype: str) -> bytes:
    """The 16-byte fingerprint of entries made by ``model`` (the compressor's description) with ``splitter``
    (:func:`splitter_identity`), stored as ``dtype``."""
    described = json.dumps({"format": FORMAT_VERSION, "model": model, "splitter": splitter, "dtype": dtype},
                           sort_keys=True, default=str)
    return hashlib.blake2b(described.encode("utf-8"), digest_size=16).digest()


def entry_key(fingerprint_bytes: bytes, text: str) -> str:
    """The key of ``text``'s entry: ``"tpc-"`` and a blake2b of the text keyed by the fingerprint (40 hex digits).

    Safe as a file name and as a LangChain ``LocalFileStore`` key."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20, key=fingerprint_bytes)
    return KEY_PREFIX + digest.hexdigest()
