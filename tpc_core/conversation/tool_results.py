"""An agent's tool results compressed one by one, each once, so the model's view stays the same bytes call after call.

An agent re-sends every tool result on every model call. Compressing the whole view again on each call would
reshuffle older results and defeat a provider's prompt cache (a cached prefix must be the same bytes). So:

1. each tool result is compressed on its own, prompt-aware, toward its question: the user's latest request and
   the tool call that asked for it (its name and arguments, :func:`tool_question`);
2. :class:`ToolResultLedger` remembers what each result was sent as. When the results fit the room the rest of the
   view leaves them, nothing changes; a result seen for the first time is sent whole when it fits, else
   compressed to the current share (the share of the last shrink; :func:`planned_share` before any);
3. only when the results no longer fit are earlier ones compressed further, all together, to a share planned so
   that ``ahead`` more results of the same mean size fit too (:func:`planned_share`): the next calls then add their
   results without changing the earlier ones, and the prompt prefix stays the same bytes until the next shrink
   (always from the original text, so the same inputs give the same bytes).

A call's compressions (new results and a shrink's) are one batched engine call (:func:`compress_tool_texts`). A
result with no room at all is sent as a short note that says so (:func:`emptied_note`), never as an empty text.

A structured result (JSON, CSV, a table, code: :mod:`tpc_core.conversation.records`) is reduced by whole records,
so it stays valid; other text keeps its most relevant sentences, verbatim, in order, and a block of records inside
it (a table, a JSON block, fenced code: :class:`tpc_core.conversation.records.RecordsInProse`) is one unit, kept or
left out whole.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpc_core.conversation.records import WHOLE_RECORD, RecordsInProse, read_records
from tpc_core.engine.options import CompressionOptions
from tpc_core.engine.output.result import CompressionResult
from tpc_core.engine.pipeline import BudgetLabel, Engine
from tpc_core.engine.selection.fitting import drop_to_fit
from tpc_core.engine.tokens import TokenCounter

__all__ = ["LedgerEntry", "ToolResult", "ToolResultLedger", "compress_tool_text", "compress_tool_texts", "emptied_note",
           "fair_share", "kept_nothing", "planned_share", "tool_question", "tool_share"]


def tool_question(request: str | None, name: str | None, args: Any) -> str | None:
    """What a tool result is compressed toward: the user's request, then the tool's name and its arguments' values
    (a search query, a file name) on a line of their own."""
    values = _argument_values(args)
    call = " ".join(part for part in (name or "", *values) if part)
    text = "\n".join(part for part in (request or "", call) if part.strip())
    return text or None


def _argument_values(args: Any) -> list[str]:
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return [args]
    if isinstance(args, Mapping):
        return [value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
                for value in args.values()]
    return [] if args is None else [json.dumps(args, ensure_ascii=False, default=str)]


def fair_share(sizes: Sequence[int], room: int) -> int:
    """The largest share ``s`` with ``sum(min(size, s)) <= room``: every result gets up to ``s`` tokens, a short one
    leaving what it does not use to the others (0 when ``room`` is not positive)."""
    if room <= 0 or not sizes:
        return 0
    if sum(sizes) <= room:
        return max(sizes)
    low = 0
    high = max(sizes)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(size, middle) for size in sizes) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def planned_share(sizes: Sequence[int], room: int, ahead: int) -> int:
    """The share that fits ``sizes`` and ``ahead`` more results of their mean size in ``room``
    (:func:`fair_share` over both; ``ahead=0``: the fair share of ``sizes`` alone)."""
    if not sizes:
        return fair_share(sizes, room)
    mean = -(-sum(sizes) // len(sizes))
    return fair_share([*sizes, *[mean] * max(ahead, 0)], room)


def kept_nothing(text: str, sent: str) -> bool:
    """Whether ``sent``, a compression of the tool result ``text``, holds none of its content: blank, or a structured
    result's bare frame (``[]``, a CSV header), which a model would read as "no results"."""
    if not sent.strip():
        return True
    records = read_records(text)
    return records is not None and sent == records.text([])


def emptied_note(tokens: int) -> str:
    """What a tool result of ``tokens`` tokens is sent as when none of it fits: a note saying so (a provider rejects
    an empty tool result, and an empty one would hide that something was left out)."""
    return f"[tool result of {tokens} tokens left out: no room in the context budget]"


def compress_tool_text(engine: Engine, text: str, question: str | None, target_tokens: int,
                       counter: Callable[[str], int], options: Mapping[str, Any],
                       results: list[CompressionResult] | None = None, tokens: int | None = None,
                       budget_label: BudgetLabel | None = None) -> str:
    """``text`` within ``target_tokens`` (``counter``'s count), most relevant to ``question`` first: whole records
    of a structured text (:func:`tpc_core.conversation.records.read_records`), else verbatim sentences in order (a
    block of records inside the prose one unit, kept or left out whole).

    Args:
        engine: The compressor's engine.
        text: One tool result's text.
        question: What it is compressed toward (``None``: prompt-agnostic).
        target_tokens: Its budget. A structure none of whose records fits keeps its frame (``[]``, a header) where
            that fits, else ``""``; so does text none of whose sentences fits.
        counter: The caller's counter.
        options: Engine keywords (``cache``, ``splitter``, ...); the budget is this function's.
        results: Where to append the engine's result, when it runs (its figures: cache hits and misses).
        tokens: ``counter(text)``, where the caller has counted it already.
        budget_label: How the warnings name ``target_tokens`` (the caller's share of its own budget; default:
            "this tool result's budget").
    """
    if (counter(text) if tokens is None else tokens) <= target_tokens:
        return text
    if target_tokens <= 0:
        return ""
    records = read_records(text)
    # the engine counts in batches: a plain callable becomes a TokenCounter (one that already is one is kept)
    engine_counter = counter if isinstance(counter, TokenCounter) else TokenCounter(counter)
    if records is None:  # prose, where a block of records inside it (a table, a fence) is one unit
        prose = RecordsInProse(engine.splitter(options.get("splitter")))
        settings = CompressionOptions.build(target_tokens=target_tokens, **{**options, "splitter": prose})
        result = engine.compress([(text,)], [question], engine_counter, settings,
                                 budget_label=budget_label or _tool_budget)[0]
        if results is not None:
            results.append(result)
        return result.compressed_prompt
    frame = records.text([])  # what is left when no record fits: still valid ("[]", a CSV header)
    room = target_tokens - counter(frame)
    if room <= 0:
        return frame if room == 0 else ""
    settings = CompressionOptions.build(target_tokens=room, **{**options, "splitter": WHOLE_RECORD,
                                                                "document_separator": records.separator})
    result = engine.compress([records.records], [question], engine_counter, settings,
                             budget_label=budget_label or _tool_budget)[0]
    if results is not None:
        results.append(result)
    scores = {sentence.doc_index: sentence.score or 0.0 for sentence in result.sentences}
    kept = [k for k, document in enumerate(result.compressed_documents) if document]
    # the frame's joins can count more than the engine's: the one budget loop, the structure its one part
    fitted = drop_to_fit([kept], target_tokens, lambda _, records_kept: counter(records.text(records_kept)),
                         weakest=lambda k: (scores.get(k, 0.0), -k))
    return records.text(fitted.kept[0])  # with no record kept, the frame: it fits (room > 0)


def compress_tool_texts(engine: Engine, items: Sequence[tuple[str, str | None, int]], target_tokens: int,
                        counter: Callable[[str], int], options: Mapping[str, Any],
                        results: list[CompressionResult] | None = None,
                        budget_label: BudgetLabel | None = None) -> list[str]:
    """Each ``(text, question, tokens)`` of ``items`` within ``target_tokens``, as :func:`compress_tool_text` does
    one, the plain texts read in one batched engine call (a structured text is reduced by records, on its own)."""
    texts: list[str] = [text for text, _, _ in items]
    plain = [k for k, (text, _, tokens) in enumerate(items)
             if tokens > target_tokens > 0 and read_records(text) is None]
    if plain:
        engine_counter = counter if isinstance(counter, TokenCounter) else TokenCounter(counter)
        prose = RecordsInProse(engine.splitter(options.get("splitter")))
        settings = CompressionOptions.build(target_tokens=target_tokens, **{**options, "splitter": prose})
        done = engine.compress([(items[k][0],) for k in plain], [items[k][1] for k in plain], engine_counter,
                               settings, budget_label=budget_label or _tool_budget)
        for k, result in zip(plain, done):
            texts[k] = result.compressed_prompt
        if results is not None:
            results.extend(done)
    for k, (text, question, tokens) in enumerate(items):
        if k not in plain:
            texts[k] = compress_tool_text(engine, text, question, target_tokens, counter, options, results, tokens,
                                          budget_label)
    return texts


def tool_share(budget: int, fixed: int, tokens: int) -> str:
    """A tool result's budget, ``tokens``, named as its share of what the caller's ``budget`` leaves after the rest
    of the view (``fixed`` tokens: the system prompt, the request, the other turns and excluded tools)."""
    return (f"this tool result's share ({tokens} tokens) of the {budget - fixed} tokens left of the budget of "
            f"{budget} after the rest of the view (system prompt, request, other turns: {fixed} tokens)")


def _tool_budget(tokens: int) -> str:
    return f"this tool result's budget of {tokens} tokens"


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass(frozen=True)
class ToolResult:
    """One tool result in the model's view.

    Attributes:
        key: Its identity across calls: :meth:`ToolResultLedger.key_of` (the tool call id and the text).
        text: Its original text.
        question: What it is compressed toward (:func:`tool_question`).
        tokens: Its original count.
    """

    key: str
    text: str
    question: str | None
    tokens: int


@dataclass(frozen=True)
class LedgerEntry:
    """What a tool result was last sent as.

    Attributes:
        text: The text sent (the original, or its compression).
        tokens: Its count.
        share: The budget it was compressed to (``None``: sent whole).
    """

    text: str
    tokens: int
    share: int | None


class ToolResultLedger:
    """What each tool result was sent as, per key, so later calls send the same bytes (thread-safe, the
    ``max_entries`` most recently used kept)."""

    def __init__(self, max_entries: int = 4096) -> None:
        self._entries: OrderedDict[str, LedgerEntry] = OrderedDict()
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def count(self, text: str, counter: Callable[[str], int]) -> int:
        """``counter(text)``, remembered by the text's digest: a view re-sent on every call is counted once (a
        ledger serves one counter)."""
        key = _digest(text)
        with self._lock:
            known = self._counts.get(key)
            if known is not None:
                self._counts.move_to_end(key)
                return known
        tokens = counter(text)
        with self._lock:
            self._counts[key] = tokens
            while len(self._counts) > 4 * self.max_entries:
                self._counts.popitem(last=False)
        return tokens

    @staticmethod
    def key_of(call_id: str | None, text: str) -> str:
        """A result's identity: its tool call id and a digest of its text (a result edited in the state is new)."""
        return f"{call_id or ''}:{_digest(text)}"

    def get(self, key: str) -> LedgerEntry | None:
        """The entry of ``key``, or ``None``."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: str, entry: LedgerEntry) -> None:
        """Remember what ``key`` was sent as."""
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry (the next calls compress again)."""
        with self._lock:
            self._entries.clear()
            self._counts.clear()

    def fit(self, results: Sequence[ToolResult], room: int,
            compress: Callable[[Sequence[ToolResult], int], Sequence[str]], counter: Callable[[str], int],
            ahead: int = 0) -> list[tuple[LedgerEntry, str]]:
        """Each result's text for this call, with what happened to it: "reused" (the bytes sent before), "whole"
        (first sent, uncompressed), "compressed" (first sent, compressed to the current share) or "recompressed"
        (sent before, compressed further because the results no longer fit ``room``: every earlier result over the
        new share at once, the share planned for ``ahead`` more results).

        Args:
            results: The view's tool results, oldest first.
            room: What the rest of the view leaves them.
            compress: Compresses results' original texts to one budget (one batched call); an emptied one comes back
                as :func:`emptied_note`.
            counter: Counts a text.
            ahead: How many more results of the same mean size a shrink leaves room for.
        """
        sent: list[LedgerEntry] = []
        actions: list[str] = []
        for result in results:
            entry = self.get(result.key)
            sent.append(entry or LedgerEntry(result.text, result.tokens, None))
            actions.append("reused" if entry else "whole")
        if sum(entry.tokens for entry in sent) > room:
            targets, share = self._plan(results, sent, actions, room, ahead)
            texts = compress([results[k] for k in targets], share) if targets else []
            for k, text in zip(targets, texts):
                sent[k] = LedgerEntry(text, counter(text), share)
                actions[k] = "compressed" if actions[k] == "whole" else "recompressed"
            self._refill(results, sent, targets, room, compress, counter)
        for result, entry in zip(results, sent):
            self.put(result.key, entry)
        return list(zip(sent, actions))

    @staticmethod
    def _refill(results: Sequence[ToolResult], sent: list[LedgerEntry], targets: Sequence[int], room: int,
                compress: Callable[[Sequence[ToolResult], int], Sequence[str]], counter: Callable[[str], int]) -> None:
        """Give each result the plan emptied what ``room`` still holds, oldest first: the plan keeps room for results
        that may never come, and a result left out now would lose what fits now."""
        for k in targets:
            if sent[k].text != emptied_note(results[k].tokens):
                continue
            spare = room - sum(entry.tokens for entry in sent) + sent[k].tokens
            if spare <= (sent[k].share or 0):
                continue
            text = compress([results[k]], spare)[0]
            tokens = counter(text)
            if tokens <= spare:
                sent[k] = LedgerEntry(text, tokens, spare)

    @staticmethod
    def _plan(results: Sequence[ToolResult], sent: Sequence[LedgerEntry], actions: Sequence[str], room: int,
              ahead: int) -> tuple[list[int], int]:
        """Which results to compress, and to what share: the new ones over the current share (the last shrink's,
        else the planned one); and, when the earlier ones leave the new ones too little, every earlier one over a
        share planned anew (:func:`planned_share`)."""
        sizes = [result.tokens for result in results]
        new = [k for k, action in enumerate(actions) if action == "whole"]
        old = [k for k, action in enumerate(actions) if action != "whole"]
        shares = [share for share in (sent[k].share for k in old) if share is not None]
        share = min(shares) if shares else planned_share(sizes, room, ahead)
        shrink: list[int] = []
        if sum(sent[k].tokens for k in old) + sum(min(sizes[k], share) for k in new) > room:
            share = planned_share(sizes, room, ahead)
            shrink = [k for k in old if sent[k].tokens > share]
        return sorted([k for k in new if sizes[k] > share] + shrink), share
