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
   (always from the original text, so the same inputs give the same bytes). The ledger's ``shares`` says how a
   shrink shares the room: evenly (each result the same share), or by relevance (every result compressed together,
   :func:`compress_tool_texts_together`, so a result read early that holds what the task needs keeps it).

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

__all__ = ["SHARES", "LedgerEntry", "ToolResult", "ToolResultLedger", "compress_tool_text", "compress_tool_texts",
           "compress_tool_texts_together", "emptied_note", "fair_share", "joint_question", "kept_nothing",
           "planned_share", "tool_question", "tool_share"]


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


def joint_question(questions: Sequence[str | None]) -> str | None:
    """What several tool results are compressed toward together: the lines every question shares (the user's
    request, a call every result answers), else every distinct line, in order (``None`` when there is none)."""
    lines = [[line for line in (question or "").split("\n") if line.strip()] for question in questions]
    common = [line for line in dict.fromkeys(lines[0] if lines else []) if all(line in other for other in lines)]
    chosen = common or list(dict.fromkeys(line for question in lines for line in question))
    return "\n".join(chosen) or None


def compress_tool_texts_together(engine: Engine, items: Sequence[tuple[str, str | None, int]], target_tokens: int,
                                 counter: Callable[[str], int], options: Mapping[str, Any],
                                 results: list[CompressionResult] | None = None,
                                 budget_label: BudgetLabel | None = None) -> list[str]:
    """The ``(text, question, tokens)`` of ``items`` within ``target_tokens`` together, shared by relevance: the
    prose texts are the documents of one prompt-aware prompt toward their :func:`joint_question`, so the engine keeps
    the most relevant sentences of all of them (a text none of whose sentences is among them comes back ``""``). A
    structured text is reduced by whole records on its own (:func:`compress_tool_text`), to the :func:`fair_share`
    of the target, before the prose shares what it leaves."""
    texts: list[str] = [text for text, _, _ in items]
    if sum(tokens for _, _, tokens in items) <= target_tokens:
        return texts
    structured = [k for k, (text, _, _) in enumerate(items) if read_records(text) is not None]
    share = fair_share([tokens for _, _, tokens in items], target_tokens)
    used = 0
    for k in structured:
        text, question, tokens = items[k]
        texts[k] = compress_tool_text(engine, text, question, share, counter, options, results, tokens, budget_label)
        used += counter(texts[k])
    plain = [k for k in range(len(items)) if k not in structured]
    room = target_tokens - used
    if not plain or room <= 0:  # nothing in prose, or no room left for it: its texts emptied
        return [("" if k in plain else text) for k, text in enumerate(texts)]
    engine_counter = counter if isinstance(counter, TokenCounter) else TokenCounter(counter)
    prose = RecordsInProse(engine.splitter(options.get("splitter")))
    settings = CompressionOptions.build(target_tokens=room, **{**options, "splitter": prose})
    question = joint_question([items[k][1] for k in plain])
    result = engine.compress([tuple(items[k][0] for k in plain)], [question], engine_counter, settings,
                             budget_label=budget_label or _tool_budget)[0]
    if results is not None:
        results.append(result)
    for k, document in zip(plain, result.compressed_documents):
        texts[k] = document
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


SHARES = ("even", "relevance")
"""How a shrink shares the room between tool results (:class:`ToolResultLedger`; the first is the default)."""

JOINT_TRIES = 4
"""How many times results compressed together are compressed again, within less, when their texts overrun."""

Compress = Callable[[Sequence[ToolResult], int], Sequence[str]]
"""Compresses results' original texts to one budget each (``compress``), or all within one budget together
(``compress_together``); an emptied one comes back as :func:`emptied_note`."""


class ToolResultLedger:
    """What each tool result was sent as, per key, so later calls send the same bytes (thread-safe, the
    ``max_entries`` most recently used kept).

    ``shares`` is how a shrink shares the room: "even" (default) gives each result the same share
    (:func:`planned_share`); "relevance" compresses every result together, so the engine's scores decide which
    results keep sentences (a result with the evidence keeps more, one that answers nothing may keep none; a result
    the scores miss loses what an even share would have kept of it).
    """

    def __init__(self, max_entries: int = 4096, shares: str = SHARES[0]) -> None:
        if shares not in SHARES:
            raise ValueError(f"shares must be one of {SHARES}, got {shares!r}.")
        self._entries: OrderedDict[str, LedgerEntry] = OrderedDict()
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries
        self.shares = shares

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

    def fit(self, results: Sequence[ToolResult], room: int, compress: Compress, counter: Callable[[str], int],
            ahead: int = 0, compress_together: Compress | None = None) -> list[tuple[LedgerEntry, str]]:
        """Each result's text for this call, with what happened to it: "reused" (the bytes sent before), "whole"
        (first sent, uncompressed), "compressed" (first sent, compressed to the current share) or "recompressed"
        (sent before, compressed again because the results no longer fit ``room``: every earlier result at once,
        the room planned for ``ahead`` more results).

        Args:
            results: The view's tool results, oldest first.
            room: What the rest of the view leaves them.
            compress: Compresses results' original texts to one budget each (one batched call).
            counter: Counts a text.
            ahead: How many more results of the same mean size a shrink leaves room for.
            compress_together: Compresses results within one budget together (with ``shares="relevance"``: the
                shrink, and the new results of one call); ``None``: every share even.
        """
        sent: list[LedgerEntry] = []
        actions: list[str] = []
        for result in results:
            entry = self.get(result.key)
            sent.append(entry or LedgerEntry(result.text, result.tokens, None))
            actions.append("reused" if entry else "whole")
        if sum(entry.tokens for entry in sent) > room:
            together = compress_together if self.shares == "relevance" else None
            if together is None or not self._share_by_relevance(results, sent, actions, room, ahead, together,
                                                                counter):
                self._share_evenly(results, sent, actions, room, ahead, compress, counter)
        for result, entry in zip(results, sent):
            self.put(result.key, entry)
        return list(zip(sent, actions))

    def _share_evenly(self, results: Sequence[ToolResult], sent: list[LedgerEntry], actions: list[str], room: int,
                      ahead: int, compress: Compress, counter: Callable[[str], int]) -> None:
        """Every result over the share compressed to it (:meth:`_plan`), then what the plan emptied refilled."""
        targets, share = self._plan(results, sent, actions, room, ahead)
        texts = compress([results[k] for k in targets], share) if targets else []
        for k, text in zip(targets, texts):
            sent[k] = LedgerEntry(text, counter(text), share)
            actions[k] = "compressed" if actions[k] == "whole" else "recompressed"
        self._refill(results, sent, targets, room, compress, counter)

    @staticmethod
    def _share_by_relevance(results: Sequence[ToolResult], sent: list[LedgerEntry], actions: list[str], room: int,
                            ahead: int, together: Compress, counter: Callable[[str], int]) -> bool:
        """The results within ``room`` with the room shared by relevance; ``False`` (``sent`` untouched) where the
        texts, counted one by one, do not fit (the caller then shares evenly).

        The new results alone, when the earlier ones leave them their even shares: compressed together within the
        sum of those shares, the earlier results' bytes kept. Else a shrink: every result compressed together
        within what the even shares of the results at hand sum to (the room less ``ahead`` results' shares), each
        entry keeping the even share as the share of the results to come.
        """
        sizes = [result.tokens for result in results]
        new = [k for k, action in enumerate(actions) if action == "whole"]
        old = [k for k, action in enumerate(actions) if action != "whole"]
        shares = [share for share in (sent[k].share for k in old) if share is not None]
        share = min(shares) if shares else planned_share(sizes, room, ahead)
        chosen = new
        if sum(sent[k].tokens for k in old) + sum(min(sizes[k], share) for k in new) > room:
            share = planned_share(sizes, room, ahead)
            chosen = list(range(len(results)))
        spare = room - sum(sent[k].tokens for k in range(len(results)) if k not in chosen)
        # a text read twice (a repeated result) is compressed once and sent as the same bytes each time: its copies
        # take their own shares
        firsts = {results[k].text: k for k in reversed(chosen)}
        unique = sorted(firsts.values())
        copies = [sum(results[k].text == results[first].text for k in chosen) for first in unique]
        total = sum(min(sizes[k], share) for k in unique)
        fitted = _fit_together([results[k] for k in unique], copies, total, spare, together, counter)
        at_hand = spare // max(copies, default=1)
        if fitted is not None and at_hand > total and all(_emptied_text(results[k], text)
                                                          for k, (text, _) in zip(unique, fitted)):
            # the plan keeps room for results that may never come: it must not leave out all that fits now
            fitted = _fit_together([results[k] for k in unique], copies, at_hand, spare, together, counter) or fitted
        if fitted is None:
            return False
        by_text = {results[k].text: fitted_text for k, fitted_text in zip(unique, fitted)}
        for k, (text, tokens) in ((k, by_text[results[k].text]) for k in chosen):
            if actions[k] == "whole":
                sent[k] = LedgerEntry(text, tokens, share)
                actions[k] = "whole" if text == results[k].text else "compressed"
            elif text != sent[k].text:
                sent[k] = LedgerEntry(text, tokens, share)
                actions[k] = "recompressed"
        return True

    @staticmethod
    def _refill(results: Sequence[ToolResult], sent: list[LedgerEntry], targets: Sequence[int], room: int,
                compress: Compress, counter: Callable[[str], int]) -> None:
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


def _emptied_text(result: ToolResult, text: str) -> bool:
    """Whether ``text``, what ``result`` is sent as, holds none of it (blank, or the note that says so)."""
    return not text.strip() or text == emptied_note(result.tokens)


def _fit_together(chosen: Sequence[ToolResult], copies: Sequence[int], total: int, spare: int, together: Compress,
                  counter: Callable[[str], int]) -> list[tuple[str, int]] | None:
    """``chosen`` compressed together within ``total``, each text with its count, where their counts (each sent
    ``copies`` times) sum to at most ``spare``; where they do not (a counter's joins, the notes of emptied results),
    again with the total lowered by the overrun, up to :data:`JOINT_TRIES` tries; else ``None``."""
    for _ in range(JOINT_TRIES):
        if total <= 0:
            return None
        texts = list(together(chosen, total))
        tokens = [counter(text) for text in texts]
        over = sum(count * times for count, times in zip(tokens, copies)) - spare
        if over <= 0:
            return list(zip(texts, tokens))
        total -= -(-over // max(copies, default=1))
    return None
