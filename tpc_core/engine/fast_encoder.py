"""The fast encoder: token ids of many texts from a private copy of a fast tokenizer's backend.

:class:`BatchEncoder` gives exactly the backend's ids, faster where BERT's normalizer has nothing to do (a text
the normalizer would only lower-case is lower-cased here and read without it) and, for BERT's whole pipeline,
word by word from a table of words seen before. The default token counter (:mod:`tpc_core.engine.tokens`) and
the CSE (:mod:`tpc_core.engine.scoring.cse`) read through it; :func:`tokenizer_fingerprint` tells whether two
backends give the same ids, so the CSE can reuse a counter's ids instead of tokenizing again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

__all__ = ["WORD_TABLE_SIZE", "BatchEncoder", "tokenizer_fingerprint"]


def tokenizer_fingerprint(backend: Any) -> str:
    """A digest of a fast tokenizer's whole serialised form: two backends with the same fingerprint give the same
    ids for every text (the CSE checks it before it reuses a counter's ids)."""
    return hashlib.sha256(backend.to_str().encode("utf-8")).hexdigest()


class BatchEncoder:
    """Batch encoding with a private copy of a fast tokenizer's backend (truncation and padding off): exactly the
    backend's encodings, faster where BERT's normalizer has nothing to do.

    ``BertNormalizer`` (clean text, pad CJK, strip accents, lower-case) changes a text of printable ASCII, and of
    characters it leaves as they are one by one (curly quotes, dashes; no combining mark), only by lower-casing it,
    length kept. Such a text is lower-cased here and read by a copy without the normalizer (a third of the time);
    any other (accents, CJK, control characters, an added token's text in any case) goes through the backend.
    Where the backend is BERT's whole pipeline (with ``BertPreTokenizer``, ``WordPiece``), :meth:`ids` reads such a
    text word by word (runs of word characters; each punctuation character alone; a non-ASCII character's kind
    asked of the pre-tokenizer once): a word's ids are the same wherever it stands, so words seen before come from
    a table (:data:`WORD_TABLE_SIZE` words at most) and only new ones are encoded.

    Args:
        backend: The tokenizer's Rust backend (copied).
    """

    def __init__(self, backend: Any) -> None:
        self.backend = backend.__class__.from_str(backend.to_str())
        self.backend.no_truncation()
        self.backend.no_padding()
        self.plain, self.lowercase, self.unsafe = _plain_ascii_backend(self.backend)
        self.kept: dict[str, bool] = {}  # non-ASCII character -> whether the normalizer leaves it as it is
        self.by_words = self.plain is not None and _bert_pipeline(self.backend)
        self.words: dict[str, list[int]] = {}  # word (as the normalizer leaves it) -> its ids
        self.kinds: dict[str, str] = {}  # non-ASCII character -> how the pre-tokenizer reads it (see _kind)
        self.patterns: dict[str, re.Pattern[str]] = {}  # the non-ASCII punctuation of a text -> its word pattern

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "words": {}, "patterns": {}}  # a copy starts with empty tables

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text (no special tokens, no truncation): :meth:`encode`'s, word by word where the
        backend allows it (:meth:`word_split`; see the class)."""
        texts = list(texts)
        if not self.by_words:
            return [encoding.ids for encoding in self.encode(texts, offsets=False)]
        split = [self.word_split(text) for text in texts]
        table = self.words
        if len(table) > WORD_TABLE_SIZE:
            table = self.words = {}  # a new table (a call still reading the old one keeps it)
        new = list(set().union(*[words for words in split if words is not None]).difference(table))
        if new:
            for word, encoding in zip(new, self.plain.encode_batch_fast(new, add_special_tokens=False)):
                table[word] = encoding.ids
        rest = [index for index, words in enumerate(split) if words is None]
        others = iter(self.encode([texts[index] for index in rest], offsets=False) if rest else ())
        ids_of = table.__getitem__
        chain = itertools.chain.from_iterable
        return [next(others).ids if words is None else list(chain(map(ids_of, words))) for words in split]

    def word_split(self, text: str) -> list[str] | None:
        """The words ``BertPreTokenizer`` cuts ``text`` into after the normalizer, for a text the normalizer only
        lower-cases (:meth:`plain_text`) and whose characters' kinds are known; else ``None``."""
        lowered = text.lower() if self.lowercase else text
        if text.isascii():
            return _ASCII_WORD.findall(lowered) if self.unsafe.search(text) is None else None
        if not self.plain_text(text):
            return None
        kinds = {char: self.kinds.get(char) or self.kinds.setdefault(char, self._kind(char))
                 for char in set(text) if not char.isascii()}
        if "other" in kinds.values():
            return None
        key = "".join(sorted(char for char, kind in kinds.items() if kind == "punctuation"))
        pattern = self.patterns.get(key)
        if pattern is None:
            marks = _ASCII_PUNCTUATION + re.escape(key)
            pattern = self.patterns[key] = re.compile(rf"[^\s{marks}]+|[{marks}]")
        return pattern.findall(lowered)

    def _kind(self, char: str) -> str:
        """How the pre-tokenizer reads a character between two letters: "punctuation", "word" or "other"."""
        pieces = [piece for piece, _ in self.backend.pre_tokenizer.pre_tokenize_str(f"a{char}a")]
        return "punctuation" if pieces == ["a", char, "a"] else "word" if pieces == [f"a{char}a"] else "other"

    def plain_text(self, text: str) -> bool:
        """Whether the normalizer changes ``text`` only by lower-casing its ASCII letters (see the class)."""
        if self.unsafe.search(text) is not None:
            return False
        if text.isascii():
            return True
        kept = self.kept
        normalize = self.backend.normalizer.normalize_str
        for char in set(text):  # ASCII, or no combining mark, lower case, and kept by the normalizer
            if char not in kept:
                kept[char] = char.isascii() or (not unicodedata.combining(char)
                                                 and char.lower() == char == normalize(char))
            if not kept[char]:
                return False
        return True

    def encode(self, texts: Sequence[str], *, offsets: bool = True) -> list[Any]:
        """The backend's encodings of ``texts`` (no special tokens); ``offsets=False`` may leave offsets out
        (``encode_batch_fast``, where the backend has it)."""
        texts = list(texts)
        method = "encode_batch" if offsets else "encode_batch_fast"
        full = getattr(self.backend, method, self.backend.encode_batch)
        plain = [index for index, text in enumerate(texts) if self.plain_text(text)] if self.plain is not None else []
        if not plain:
            return full(texts, add_special_tokens=False)
        lowered = [texts[index].lower() if self.lowercase else texts[index] for index in plain]
        encodings = getattr(self.plain, method, self.plain.encode_batch)(lowered, add_special_tokens=False)
        if len(plain) == len(texts):
            return encodings
        merged: list[Any] = [None] * len(texts)
        for index, encoding in zip(plain, encodings):
            merged[index] = encoding
        rest = [index for index, encoding in enumerate(merged) if encoding is None]
        for index, encoding in zip(rest, full([texts[index] for index in rest], add_special_tokens=False)):
            merged[index] = encoding
        return merged


WORD_TABLE_SIZE = 100_000
"""Most words a :class:`BatchEncoder` keeps the ids of (the table starts again when it is full)."""

# BertPreTokenizer on printable ASCII: runs of letters and digits; every other character but whitespace alone.
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]")
_ASCII_PUNCTUATION = r"!-/:-@\[-`{-~"  # every printable ASCII character but letters, digits and space


def _bert_pipeline(backend: Any) -> bool:
    """Whether the backend is BERT's pipeline: ``BertNormalizer``, ``BertPreTokenizer``, ``WordPiece``."""
    from tokenizers import models, normalizers, pre_tokenizers

    return isinstance(backend.normalizer, normalizers.BertNormalizer) \
        and isinstance(backend.pre_tokenizer, pre_tokenizers.BertPreTokenizer) \
        and isinstance(backend.model, models.WordPiece)


def _plain_ascii_backend(backend: Any) -> tuple[Any, bool, re.Pattern[str]]:
    """For a backend with BERT's normalizer: a copy without it, whether that normalizer lower-cases, and the
    pattern of what a text must not hold to take that copy (a control character other than tab and line breaks,
    an added token's text in any case). Otherwise ``(None, False, pattern)``."""
    state = json.loads(backend.to_str())
    normalizer = state.get("normalizer") or {}
    added = sorted({token.content for token in backend.get_added_tokens_decoder().values() if token.content},
                   key=len, reverse=True)
    unsafe = re.compile("|".join([r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", *map(re.escape, added)]), re.IGNORECASE)
    if normalizer.get("type") != "BertNormalizer":
        return None, False, unsafe
    state["normalizer"] = None
    plain = backend.__class__.from_str(json.dumps(state))
    plain.no_truncation()
    plain.no_padding()
    return plain, bool(normalizer.get("lowercase", True)), unsafe

