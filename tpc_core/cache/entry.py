"""One document's cache entry: what the engine knows of a document before any question, and its binary form.

An :class:`Entry` holds the document's sentence spans, their counts under the CSE tokenizer (the default
counter), the document's own count, and the sentence embeddings the CSE computed inside the document. It is
data, never code: :func:`encode_entry` writes it in the format below and :func:`decode_entry` reads it back,
checking everything, so a damaged, truncated or foreign value raises :class:`DamagedEntry` instead of being
trusted. Nothing is unpickled.

Format (version 1, little-endian)::

    header    38 bytes  magic b"TPCS", format version, storage dtype code, integer width (2 or 4), 0,
                        fingerprint (16 bytes), sentences n (u32), embedding size d (u16),
                        document tokens (u32), document length in characters (u32)
    integers  3 n w     each sentence's gap from the previous sentence's end, its length and its token count,
                        as three columns of unsigned integers of width w (2 bytes when every value fits)
    vectors             fp32: n d 4 bytes; fp16: n d 2 bytes; int8: n row scales (f32) then n d int8 values
    checksum  16 bytes  blake2b (digest size 16) of everything before it

Storage dtypes: ``"fp32"`` is exact; ``"fp16"`` and ``"int8"`` (symmetric, one scale per row) are read back as
float32 rows L2-normalised again. ``"int8"`` is the default of every cache: 384-d MiniLM sentences cost about
395 bytes each (fp32: 1,550).
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = ["DEFAULT_DTYPE", "FORMAT_VERSION", "STORAGE_DTYPES", "DamagedEntry", "Entry", "check_dtype",
           "decode_entry", "encode_entry"]

FORMAT_VERSION = 1
STORAGE_DTYPES = ("fp32", "fp16", "int8")
DEFAULT_DTYPE = "int8"
_MAGIC = b"TPCS"
_HEADER = struct.Struct("<4sBBBB16sIHII")
_CHECKSUM_BYTES = 16
_INT_WIDTHS: dict[int, np.dtype[Any]] = {2: np.dtype("<u2"), 4: np.dtype("<u4")}


class DamagedEntry(ValueError):
    """A stored value that is not a sound entry for this key: truncated, corrupted, of another format, of
    another fingerprint (model, config, splitter, tokenizer or storage dtype), or not bytes at all."""


def check_dtype(dtype: str) -> str:
    """``dtype`` if it is one of :data:`STORAGE_DTYPES`.

    Raises:
        ValueError: Any other value (the message names the accepted ones).
    """
    if dtype not in STORAGE_DTYPES:
        raise ValueError(f"dtype must be one of {STORAGE_DTYPES} (how embeddings are stored), got {dtype!r}.")
    return dtype


@dataclass(frozen=True)
class Entry:
    """What one document is before any question (one cache value).

    Attributes:
        spans: Its sentence spans (``text[start:end]``), as the splitter gave them.
        counts: Each sentence's token count under the CSE tokenizer (the default counter).
        document_tokens: The whole document's count under that counter.
        embeddings: ``(len(spans), d)`` float32 sentence embeddings, each read inside the document (L2-normalised).
        text_length: The document's length in characters.
        fingerprint: What made the entry (model, config, splitter, tokenizer, storage dtype): 16 bytes.
    """

    spans: tuple[tuple[int, int], ...]
    counts: tuple[int, ...]
    document_tokens: int
    embeddings: torch.Tensor
    text_length: int
    fingerprint: bytes

    @property
    def sentences(self) -> int:
        """How many sentences the document has."""
        return len(self.spans)


def encode_entry(entry: Entry, dtype: str = DEFAULT_DTYPE) -> bytes:
    """The entry in the binary format above, its embeddings stored as ``dtype``.

    Raises:
        ValueError: An entry whose parts disagree (counts, rows, spans) or an unknown ``dtype``.
    """
    check_dtype(dtype)
    n = len(entry.spans)
    matrix = entry.embeddings.detach().to("cpu", torch.float32).numpy().reshape(n, -1) if n else \
        np.zeros((0, entry.embeddings.shape[-1] if entry.embeddings.dim() == 2 else 0), np.float32)
    if len(entry.counts) != n or matrix.shape[0] != n or len(entry.fingerprint) != 16:
        raise ValueError(f"An entry needs one count and one embedding per span and a 16-byte fingerprint; got {n} "
                         f"spans, {len(entry.counts)} counts, {matrix.shape[0]} rows.")
    starts = np.fromiter((start for start, _ in entry.spans), np.int64, n)
    ends = np.fromiter((end for _, end in entry.spans), np.int64, n)
    gaps = starts - np.concatenate(([0], ends[:-1]))
    columns = np.concatenate((gaps, ends - starts, np.asarray(entry.counts, np.int64)))
    if n and (columns.min() < 0 or (ends - starts).min() < 1 or ends[-1] > entry.text_length):
        raise ValueError("An entry's spans must be sorted, non-empty and inside the document.")
    width = 2 if not n or columns.max() < 1 << 16 else 4
    header = _HEADER.pack(_MAGIC, FORMAT_VERSION, STORAGE_DTYPES.index(dtype), width, 0, entry.fingerprint, n,
                          matrix.shape[1], entry.document_tokens, entry.text_length)
    body = header + columns.astype(_INT_WIDTHS[width]).tobytes() + _vectors(matrix, dtype)
    return body + hashlib.blake2b(body, digest_size=_CHECKSUM_BYTES).digest()


def _vectors(matrix: np.ndarray, dtype: str) -> bytes:
    if dtype == "fp32":
        return matrix.astype("<f4").tobytes()
    if dtype == "fp16":
        return matrix.astype("<f2").tobytes()
    peak = np.abs(matrix).max(axis=1) if len(matrix) else np.zeros(0, np.float32)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype("<f4")
    values = np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8)
    return scales.tobytes() + values.tobytes()


def decode_entry(data: object, fingerprint: bytes | None = None) -> Entry:
    """Read an entry back, trusting nothing.

    Args:
        data: The stored value.
        fingerprint: The fingerprint the caller expects (``None``: any).

    Raises:
        DamagedEntry: Not bytes, truncated, a wrong magic, version, checksum, size or field, or another fingerprint.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DamagedEntry(f"the store returned a {type(data).__name__}, not bytes")
    body = _checked_body(bytes(data))
    magic, version, dtype_code, width, _, found, n, d, document_tokens, text_length = _HEADER.unpack_from(body)
    if fingerprint is not None and found != fingerprint:
        raise DamagedEntry("written under another model, config, splitter, tokenizer or storage dtype (fingerprint)")
    if dtype_code >= len(STORAGE_DTYPES) or width not in _INT_WIDTHS:
        raise DamagedEntry(f"unknown storage dtype {dtype_code} or integer width {width}")
    dtype = STORAGE_DTYPES[dtype_code]
    vector_bytes = n * d * {"fp32": 4, "fp16": 2, "int8": 1}[dtype] + (4 * n if dtype == "int8" else 0)
    integers_end = _HEADER.size + 3 * n * width
    if len(body) != integers_end + vector_bytes:
        raise DamagedEntry(f"{len(body)} bytes where {n} sentences of {d} dimensions take "
                           f"{integers_end + vector_bytes}")
    gaps, lengths, counts = np.frombuffer(body, _INT_WIDTHS[width], 3 * n, _HEADER.size).astype(np.int64).reshape(3, n)
    ends = np.cumsum(gaps + lengths)
    if n and (lengths.min() < 1 or ends[-1] > text_length):
        raise DamagedEntry("spans outside the document")
    rows = _read_vectors(body, integers_end, n, d, dtype)
    if not np.isfinite(rows).all():
        raise DamagedEntry("embeddings that are not finite")
    spans = tuple(zip((ends - lengths).tolist(), ends.tolist()))
    return Entry(spans, tuple(counts.tolist()), document_tokens, torch.from_numpy(rows), text_length, found)


def _checked_body(data: bytes) -> bytes:
    """The entry without its checksum, once its length, magic, version and checksum are right."""
    if len(data) < _HEADER.size + _CHECKSUM_BYTES:
        raise DamagedEntry(f"{len(data)} bytes, shorter than any entry")
    body = data[:-_CHECKSUM_BYTES]
    checksum = data[-_CHECKSUM_BYTES:]
    magic, version = _HEADER.unpack_from(body)[:2]
    if magic != _MAGIC:
        raise DamagedEntry("not a TPC sentence-cache entry (magic)")
    if version != FORMAT_VERSION:
        raise DamagedEntry(f"format version {version}, this reader knows {FORMAT_VERSION}")
    if hashlib.blake2b(body, digest_size=_CHECKSUM_BYTES).digest() != checksum:
        raise DamagedEntry("checksum mismatch (corrupted or truncated)")
    return body


def _read_vectors(body: bytes, offset: int, n: int, d: int, dtype: str) -> np.ndarray:
    if dtype == "fp32":
        return np.frombuffer(body, "<f4", n * d, offset).reshape(n, d).copy()
    if dtype == "fp16":
        rows = np.frombuffer(body, "<f2", n * d, offset).reshape(n, d).astype(np.float32)
    else:
        scales = np.frombuffer(body, "<f4", n, offset)
        rows = np.frombuffer(body, np.int8, n * d, offset + 4 * n).reshape(n, d).astype(np.float32)
        rows *= scales[:, None]
    # The compact forms are read back as unit rows, as the CSE gave them: the cosine stays a cosine.
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
    rows /= np.where(norms > 0, norms, 1.0)
    return rows
