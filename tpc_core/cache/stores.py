"""Where entries live: :class:`SentenceCache` (the contract and what every store shares), in memory and on disk.

A :class:`SentenceCache` reads and writes encoded entries (:mod:`tpc_core.cache.entry`) through two hooks a store
implements, :meth:`SentenceCache.fetch` and :meth:`SentenceCache.store`, and does the rest once for all of them:

* every value read from a store outside this process's memory (a file, Redis, an external store) is decoded and
  checked (:func:`~tpc_core.cache.entry.decode_entry`); a damaged one is logged, counted in ``errors`` and read as
  a miss, so the document is recomputed and its entry overwritten. :class:`MemoryCache` decodes and checks each
  value once, when it is written, and keeps the decoded, frozen :class:`~tpc_core.cache.entry.Entry` (exactly what a
  read of the bytes would give): a warm read hands it back with no decoding (:meth:`SentenceCache.read`);
* a store that raises on a read or a write costs that call its cache, never its result: the call goes on
  uncached and the first failure warns (once per cache);
* hits, misses, evictions, errors are counted under a lock, so one cache serves many threads.

:class:`MemoryCache` is an LRU bounded in bytes; :class:`DirectoryCache` keeps one file per entry, written to a
temporary file and moved into place with ``os.replace``, so processes sharing the directory never read a torn
entry. The adapters for LangChain's and LlamaIndex's stores are in :mod:`tpc_core.cache.external`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tpc_core.cache.entry import DEFAULT_DTYPE, DamagedEntry, Entry, check_dtype, decode_entry, encode_entry
from tpc_core.diagnostics.notices import operator_notice

__all__ = ["DEFAULT_DIRECTORY_MAX_BYTES", "DEFAULT_MAX_BYTES", "STALE_TEMPORARY_SECONDS", "CacheInfo", "DirectoryCache",
           "MemoryCache", "SentenceCache"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_DIRECTORY_MAX_BYTES = 4 * 1024 ** 3
#: A temporary file older than this is a crashed writer's (a live write takes milliseconds): removed on opening.
STALE_TEMPORARY_SECONDS = 3600.0
_TEMPORARY = ".tmp-"
_SAFE_KEY = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_SUFFIX = ".tpcs"


@dataclass(frozen=True)
class CacheInfo:
    """What a cache has done since it was made (or cleared) and what it holds.

    Attributes:
        hits: Documents found (sound entries).
        misses: Documents looked up and not found, or found damaged, or not read because the store failed.
        bytes: Bytes of the entries held (memory, directory); for another store, the bytes this process wrote.
        evictions: Entries the memory cache dropped to stay within its byte limit.
        entries: Entries held (memory, directory); for another store, the entries this process wrote.
        errors: Damaged entries met, and reads or writes the store failed.
    """

    hits: int = 0
    misses: int = 0
    bytes: int = 0
    evictions: int = 0
    entries: int = 0
    errors: int = 0


class SentenceCache:
    """A store of document entries, shared by every call that passes it as ``cache=``.

    Subclasses implement :meth:`fetch` and :meth:`store` (and may report what they hold through :meth:`held` and
    empty themselves in :meth:`drop_all`); the checks, the counts and the handling of failures are here.

    Args:
        dtype: How embeddings are stored: ``"int8"`` (default, about 395 bytes a sentence for MiniLM),
            ``"fp16"`` or ``"fp32"`` (exact: cached calls give the very results of the call that wrote them).
    """

    def __init__(self, *, dtype: str = DEFAULT_DTYPE) -> None:
        self.dtype = check_dtype(dtype)
        self._lock = threading.Lock()
        self._counts = {"hits": 0, "misses": 0, "evictions": 0, "errors": 0, "bytes": 0, "entries": 0}
        self._warned = False

    # ------------------------------------------------------------------ hooks
    def fetch(self, keys: Sequence[str]) -> list[object | None]:
        """The stored values of ``keys`` (``None`` where there is none), as the store holds them."""
        raise NotImplementedError

    def store(self, items: Sequence[tuple[str, bytes]]) -> None:
        """Write encoded entries, replacing what the keys held."""
        raise NotImplementedError

    def held(self) -> tuple[int, int] | None:
        """``(entries, bytes)`` the store holds, or ``None`` where it cannot tell (then ``info`` reports the
        entries and bytes this process wrote)."""
        return None

    def drop_all(self) -> None:
        """Remove every entry this cache wrote (the default: nothing to remove)."""

    # ------------------------------------------------------------------ the contract
    def get_many(self, keys: Sequence[str], *, fingerprint: bytes | None = None) -> list[Entry | None]:
        """The entries of ``keys``; ``None`` for a miss, a damaged entry (logged) or a store that failed (warned).

        Args:
            keys: Entry keys (:func:`tpc_core.cache.fingerprint.entry_key`).
            fingerprint: The fingerprint every entry must carry; another one is a damaged entry.
        """
        keys = list(keys)
        if not keys:
            return []
        try:
            values = self.fetch(keys)
            if len(values) != len(keys):
                raise ValueError(f"the store returned {len(values)} values for {len(keys)} keys")
        except Exception as error:  # noqa: BLE001 - a store that is down costs the cache, never the call
            self._failed("read from", error)
            self._add(misses=len(keys))
            return [None] * len(keys)
        entries: list[Entry | None] = []
        for key, value in zip(keys, values):
            if value is None:
                entries.append(None)
                continue
            try:
                entries.append(self.read(value, fingerprint))
            except DamagedEntry as damage:
                self.report_damaged(key, str(damage))
                entries.append(None)
        found = sum(entry is not None for entry in entries)
        self._add(hits=found, misses=len(keys) - found)
        return entries

    def read(self, value: object, fingerprint: bytes | None) -> Entry:
        """The entry a value :meth:`fetch` returned stands for, decoded and checked; raises
        :class:`~tpc_core.cache.entry.DamagedEntry` for a value that is not a sound entry of ``fingerprint``."""
        return decode_entry(value, fingerprint)

    def put_many(self, items: Sequence[tuple[str, Entry]]) -> int:
        """Store entries (encoded in this cache's dtype); returns how many were written (0 if the store failed)."""
        encoded = [(key, encode_entry(entry, self.dtype)) for key, entry in items]
        if not encoded:
            return 0
        try:
            self.store(encoded)
        except Exception as error:  # noqa: BLE001 - a store that fails to write costs the cache, never the call
            self._failed("write to", error)
            return 0
        self._add(entries=len(encoded), bytes=sum(len(value) for _, value in encoded))
        return len(encoded)

    def report_damaged(self, key: str, reason: str) -> None:
        """Log and count an entry that cannot be trusted (it is recomputed and overwritten by the caller)."""
        operator_notice(logger, f"Sentence cache entry {key} is damaged ({reason}); the document is read again and the "
                                "entry overwritten.")
        self._add(errors=1)

    def info(self) -> CacheInfo:
        """Hits, misses, bytes, evictions, entries and errors (see :class:`CacheInfo`)."""
        held = self.held()
        with self._lock:
            counts = dict(self._counts)
        if held is not None:
            counts["entries"], counts["bytes"] = held
        return CacheInfo(**counts)

    def clear(self) -> None:
        """Empty the cache (the entries it wrote) and reset its counts."""
        self.drop_all()
        with self._lock:
            self._counts = dict.fromkeys(self._counts, 0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dtype={self.dtype!r})"

    # ------------------------------------------------------------------ shared machinery
    def _add(self, **amounts: int) -> None:
        with self._lock:
            for name, amount in amounts.items():
                self._counts[name] += amount

    def _failed(self, action: str, error: BaseException) -> None:
        self._add(errors=1)
        with self._lock:
            first = not self._warned
            self._warned = True
        logger.debug("Sentence cache: could not %s %r: %r", action, self, error)
        if first:
            operator_notice(logger, f"The sentence cache {self!r} failed ({type(error).__name__}: {error}); "
                                    "compression goes on without it where it fails (logged once).")


class MemoryCache(SentenceCache):
    """Entries in this process's memory, least recently used first out, never more than ``max_bytes``.

    A value written is decoded and checked once and held as that frozen :class:`~tpc_core.cache.entry.Entry` with
    its encoded size (what ``max_bytes`` bounds); a read returns it, shared, so nothing changes it in place.

    Args:
        max_bytes: The most bytes of entries held (default 256 MiB, about 650k MiniLM sentences in int8).
        dtype: See :class:`SentenceCache`.

    Raises:
        ValueError: ``max_bytes`` of 0 or less.
        TypeError: ``max_bytes`` that is not an int.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, *, dtype: str = DEFAULT_DTYPE) -> None:
        _check_max_bytes(max_bytes)
        super().__init__(dtype=dtype)
        self.max_bytes = max_bytes
        self._values: OrderedDict[str, tuple[Entry | bytes, int]] = OrderedDict()  # key -> (entry, encoded bytes)
        self._held_bytes = 0

    def fetch(self, keys: Sequence[str]) -> list[object | None]:
        """The held entries of ``keys`` (decoded :class:`~tpc_core.cache.entry.Entry` values, ``None`` where none)."""
        with self._lock:
            found: list[object | None] = []
            for key in keys:
                held = self._values.get(key)
                if held is not None:
                    self._values.move_to_end(key)
                found.append(None if held is None else held[0])
            return found

    def read(self, value: object, fingerprint: bytes | None) -> Entry:
        """The held entry itself (decoded and checked when it was written); only its fingerprint is compared."""
        if not isinstance(value, Entry):
            return decode_entry(value, fingerprint)
        if fingerprint is not None and value.fingerprint != fingerprint:
            raise DamagedEntry("written under another model, config, splitter, tokenizer or storage dtype "
                               "(fingerprint)")
        return value

    def store(self, items: Sequence[tuple[str, bytes]]) -> None:
        # Decoded outside the lock, once. A value that does not decode (only a direct store() of foreign bytes) is
        # kept as it is, and read as any store's damaged value.
        decoded = [(key, _decoded_or_raw(value), len(value)) for key, value in items]
        with self._lock:
            for key, entry, size in decoded:
                old = self._values.pop(key, None)
                self._held_bytes -= old[1] if old is not None else 0
                if size > self.max_bytes:  # larger than the whole cache: never held
                    self._counts["evictions"] += 1
                    continue
                while self._values and self._held_bytes + size > self.max_bytes:
                    _, (_, dropped) = self._values.popitem(last=False)
                    self._held_bytes -= dropped
                    self._counts["evictions"] += 1
                self._values[key] = (entry, size)
                self._held_bytes += size

    def held(self) -> tuple[int, int]:
        with self._lock:
            return len(self._values), self._held_bytes

    def drop_all(self) -> None:
        with self._lock:
            self._values.clear()
            self._held_bytes = 0

    def __repr__(self) -> str:
        return f"MemoryCache(max_bytes={self.max_bytes}, dtype={self.dtype!r})"


def _probe_write(directory: Path) -> None:
    """Make a file in ``directory`` and remove it at once (an ``OSError`` where it cannot be made)."""
    probe, probe_path = tempfile.mkstemp(dir=directory, prefix=".tpc-write-check-")
    try:
        os.close(probe)
    finally:
        os.unlink(probe_path)


class DirectoryCache(SentenceCache):
    """One file per entry under ``directory``, safe for threads and for processes sharing it, at most ``max_bytes``.

    A write goes to a temporary file in the entry's folder, then ``os.replace`` puts it in place: a reader sees
    the old entry or the new one, never part of one (and a file cut short by a crash fails its checksum).

    Size: when a write takes the directory over ``max_bytes``, the least recently used entries are removed until it
    fits: an entry's modification time is its last use (set when it is written, refreshed when it is read; access
    times are not used, many file systems do not keep them). Several processes may evict concurrently; each
    removes only whole files. Temporary files a crashed writer left (``.tmp-*`` older than
    :data:`STALE_TEMPORARY_SECONDS`) are removed when the cache is opened.

    Args:
        directory: Where entries are kept (created if missing).
        max_bytes: The most bytes of entries kept (default 4 GiB, about 10M MiniLM sentences in int8); ``None``:
            no bound.
        dtype: See :class:`SentenceCache`.

    Raises:
        PermissionError: A directory that cannot be created or written (the message names it).
        NotADirectoryError: A path that is a file.
        ValueError: ``max_bytes`` of 0 or less.
    """

    def __init__(self, directory: str | os.PathLike[str], *, max_bytes: int | None = DEFAULT_DIRECTORY_MAX_BYTES,
                 dtype: str = DEFAULT_DTYPE) -> None:
        super().__init__(dtype=dtype)
        if max_bytes is not None:
            _check_max_bytes(max_bytes)
        self.max_bytes = max_bytes
        self.directory = Path(directory).expanduser()
        self.check_path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _probe_write(self.directory)
        except OSError as error:
            raise PermissionError(f"The sentence cache directory {self.directory} is not writable ({error}); pass "
                                  "a directory this process may write, or cache='memory'.") from error
        self.removed_temporaries = self._remove_stale_temporaries()
        self._estimate = self.held()[1] if max_bytes is not None else 0

    @staticmethod
    def check_path(directory: str | os.PathLike[str]) -> None:
        """Whether ``directory`` could hold a cache, found without making it: an existing directory this process
        may write, or a path whose nearest existing parent is one. Writing is tried (permission bits say nothing for
        root, nor for a read-only or virtual file system): a probe file is made in that directory and removed at
        once, so nothing is left behind.

        Raises:
            ValueError: An empty path.
            NotADirectoryError: A path that is a file.
            PermissionError: A directory (or the parent it would be made in) that cannot be written, or a parent
                that is a file.
        """
        if str(directory) == "":
            raise ValueError("The sentence cache directory is an empty path; name a directory.")
        path = Path(directory).expanduser()
        if path.exists() and not path.is_dir():
            raise NotADirectoryError(f"The sentence cache directory {path} is a file, not a directory.")
        parent = path
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            reason = "is a file" if parent.exists() else "does not exist"
            raise PermissionError(f"The sentence cache directory {path} cannot be made or written ({parent} {reason}); "
                                  "pass a directory this process may write, or cache='memory'.")
        try:
            _probe_write(parent)
        except OSError as error:
            raise PermissionError(f"The sentence cache directory {path} cannot be made or written ({parent} is not "
                                  f"writable: {error.strerror or error}); pass a directory this process may write, "
                                  "or cache='memory'.") from error

    def _path(self, key: str) -> Path:
        if not _SAFE_KEY.match(key):
            raise ValueError(f"A directory cache key must be 1-128 letters, digits, '-' or '_', got {key!r}.")
        return self.directory / key[-2:] / (key + _SUFFIX)

    def fetch(self, keys: Sequence[str]) -> list[object | None]:
        found: list[object | None] = []
        for key in keys:
            path = self._path(key)
            try:
                found.append(path.read_bytes())
            except FileNotFoundError:
                found.append(None)
                continue
            if self.max_bytes is not None:
                with contextlib.suppress(OSError):  # a read-only share, or evicted meanwhile: the read stands
                    os.utime(path)  # its last use, for the LRU
        return found

    def store(self, items: Sequence[tuple[str, bytes]]) -> None:
        for key, value in items:
            path = self._path(key)
            path.parent.mkdir(exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=_TEMPORARY, suffix=_SUFFIX)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(value)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            self._estimate += len(value)
        if self.max_bytes is not None and self._estimate > self.max_bytes:
            self._evict(self.max_bytes)

    def _evict(self, limit: int) -> None:
        """Remove the least recently used entries until the directory holds at most ``limit`` bytes."""
        files = []
        for item in self._entry_files():
            with contextlib.suppress(FileNotFoundError):
                status = item.stat()
                files.append((status.st_mtime_ns, item.path, status.st_size))
        total = sum(size for _, _, size in files)
        removed = 0
        for _, path, size in sorted(files):
            if total <= limit:
                break
            with contextlib.suppress(FileNotFoundError):  # another process evicted it first
                os.unlink(path)
                removed += 1
            total -= size
        self._estimate = total
        self._add(evictions=removed)

    def _remove_stale_temporaries(self) -> int:
        """Remove the temporary files writers that crashed left behind (old enough that no live writer owns them)."""
        cutoff = time.time() - STALE_TEMPORARY_SECONDS
        removed = 0
        for folder in os.scandir(self.directory):
            if not (folder.is_dir() and len(folder.name) == 2):
                continue
            for item in os.scandir(folder.path):
                if item.name.startswith(_TEMPORARY):
                    with contextlib.suppress(OSError):
                        if item.stat().st_mtime < cutoff:
                            os.unlink(item.path)
                            removed += 1
        if removed:
            logger.info("Removed %d temporary files a crashed writer left in %s.", removed, self.directory)
        return removed

    def _entry_files(self) -> list[os.DirEntry[str]]:
        files: list[os.DirEntry[str]] = []
        for folder in os.scandir(self.directory):
            if folder.is_dir() and len(folder.name) == 2:
                files.extend(item for item in os.scandir(folder.path)
                             if item.name.endswith(_SUFFIX) and not item.name.startswith("."))
        return files

    def held(self) -> tuple[int, int]:
        files = []
        for item in self._entry_files():
            try:
                files.append(item.stat().st_size)
            except FileNotFoundError:  # replaced or removed by another process meanwhile
                continue
        return len(files), sum(files)

    def drop_all(self) -> None:
        for item in self._entry_files():
            Path(item.path).unlink(missing_ok=True)
        self._estimate = 0

    def __repr__(self) -> str:
        return f"DirectoryCache({str(self.directory)!r}, max_bytes={self.max_bytes}, dtype={self.dtype!r})"


def _decoded_or_raw(value: bytes) -> Entry | bytes:
    """The entry ``value`` encodes, or ``value`` itself where it is damaged (then every read reports it)."""
    try:
        return decode_entry(value)
    except DamagedEntry:
        return value


def _check_max_bytes(max_bytes: object) -> None:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise TypeError(f"max_bytes must be an int (bytes), got {type(max_bytes).__name__}.")
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be a positive number of bytes, got {max_bytes}.")
