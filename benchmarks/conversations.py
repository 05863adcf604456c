"""Conversations as input: ``compress_messages`` against the ways a user shortens a chat today.

``python -m benchmarks.conversations --split dev --limit 60 --out benchmarks/results/conversations``

Each qa_dev row becomes one conversation (OpenAI-style dicts), in one of three shapes taken in turn:

* ``pasted``: the documents pasted in two earlier user turns, an assistant reply after each;
* ``tools``: an earlier user request, an assistant tool call (``tool_calls`` with ids, no content), one tool
  result per group of documents (``tool_call_id``), an assistant reply;
* ``mixed``: the first documents pasted by the user, an assistant reply, the rest as one tool result;

with a system message first and the row's question as the last user turn; and single-message chats
(``--shapes single``), where one user message holds the documents and the question:

* ``single_after``: "Please read these documents." and the documents, then the question;
* ``single_before``: the question first, then "Here are the documents:" and the documents;
* ``single_casual``: the documents, then the question typed as a search query (lower case, no question mark).

 The budget is ``rate`` (0.2) of the
whole conversation, counted with one counter for every method: MiniLM's WordPiece
(:func:`evaluation.budget.minilm_token_counter`), summed over every text part of every message.

Methods:

* ``compress_messages``: :meth:`tpc_core.TPCCompressor.compress_messages`;
* ``reference``: prompt-aware ``compress`` of the same documents with the same question, at the budget the
  conversation leaves them (the budget minus the messages kept whole): the target is recall within 0.02 of it;
* ``trim_messages``: LangChain's ``trim_messages(strategy="last", include_system=True)``, same counter and budget;
* ``flattened``: the conversation written as one text (``role: text`` blocks) compressed prompt-agnostically
  (``question=None``) at the same budget (``describe_bare=False``, see ``--describe-bare``);
* ``message_documents`` (opt-in, the choice ``compress_messages`` made on train): prompt-aware ``compress`` of the
  compressed messages' text parts, each whole part one document, at the reference's budget: what
  ``compress_messages`` did before it read each part's paragraphs as documents.

Reported: evidence recall (gold supporting sentences found verbatim,
:func:`evaluation.metrics.evidence_recall`), budget overruns (must be 0), conversations whose protected
messages (system, latest user turn) come back intact, and seconds per conversation.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from data_access.loaders import Sample, load_qa_dev, round_robin
from evaluation.budget import minilm_token_counter
from evaluation.metrics import evidence_recall
from tpc_core.conversation.messages import read_message

__all__ = ["SHAPES", "build_conversation", "chosen_methods", "main", "run"]

SHAPES = ("pasted", "tools", "mixed")
SINGLE_SHAPES = ("single_after", "single_before", "single_casual")
SHAPE_SETS = {"history": SHAPES, "single": SINGLE_SHAPES, "all": SHAPES + SINGLE_SHAPES}
METHODS = ("compress_messages", "reference", "trim_messages", "flattened", "message_documents")
DEFAULT_METHODS = METHODS[:4]
SYSTEM = "You are a careful assistant. Answer the user's question from the documents in this conversation only."


def split_documents(context: str) -> list[str]:
    """The row's documents: its paragraphs, else its lines, else the whole context."""
    for separator in ("\n\n", "\n"):
        pieces = [piece for piece in context.split(separator) if piece.strip()]
        if len(pieces) >= 3:
            return pieces
    return [context]


def _halves(documents: list[str]) -> tuple[list[str], list[str]]:
    middle = max(1, len(documents) // 2)
    return documents[:middle], documents[middle:]


def casual(question: str) -> str:
    """A question typed as a search query: lower case, no question mark.

    >>> casual("When did the old age pension start in Australia?")
    'when did the old age pension start in australia'
    """
    return question.strip().rstrip("?").strip().lower()


def single_message(sample: Sample, shape: str) -> tuple[str, str]:
    """The one user message of a single-message chat and the question as it is written in it."""
    body = "\n\n".join(split_documents(sample.context))
    if shape == "single_after":
        return f"Please read these documents.\n\n{body}\n\n{sample.question}", sample.question
    if shape == "single_before":
        return f"{sample.question}\n\nHere are the documents:\n\n{body}", sample.question
    if shape == "single_casual":
        return f"{body}\n\n{casual(sample.question)}", casual(sample.question)
    raise ValueError(f"Unknown shape {shape!r}; one of {SHAPES + SINGLE_SHAPES}.")


def build_conversation(sample: Sample, shape: str) -> tuple[list[dict[str, Any]], list[str]]:
    """One conversation of ``shape`` from a qa_dev row, and the documents it carries (in order)."""
    documents = split_documents(sample.context)
    first, second = _halves(documents)
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    if shape in SINGLE_SHAPES:
        return [*messages, {"role": "user", "content": single_message(sample, shape)[0]}], documents
    if shape == "pasted":
        messages += [{"role": "user", "content": "Please read these documents.\n\n" + "\n\n".join(first)},
                     {"role": "assistant", "content": "I have read them. Is there more?"}]
        if second:
            messages += [{"role": "user", "content": "Yes, here is the rest.\n\n" + "\n\n".join(second)},
                         {"role": "assistant", "content": "Thank you, I have all the documents now."}]
    elif shape == "tools":
        groups = [group for group in (first, second) if group]
        calls = [{"id": f"call_{k}", "type": "function",
                  "function": {"name": "search", "arguments": json.dumps({"page": k})}} for k in range(len(groups))]
        messages += [{"role": "user", "content": "Find the background documents for my next question."},
                     {"role": "assistant", "content": None, "tool_calls": calls}]
        messages += [{"role": "tool", "tool_call_id": call["id"], "content": "\n\n".join(group)}
                     for call, group in zip(calls, groups)]
        messages.append({"role": "assistant", "content": "I found the documents. What is your question?"})
    elif shape == "mixed":
        messages += [{"role": "user", "content": [{"type": "text", "text": "\n\n".join(first)},
                                                  {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]},
                     {"role": "assistant", "content": "Noted. I will also search for related documents.",
                      "tool_calls": [{"id": "call_0", "type": "function",
                                      "function": {"name": "search", "arguments": "{}"}}]}]
        if second:
            messages.append({"role": "tool", "tool_call_id": "call_0", "content": "\n\n".join(second)})
    else:
        raise ValueError(f"Unknown shape {shape!r}; one of {SHAPES}.")
    messages.append({"role": "user", "content": sample.question})
    return messages, documents


def _texts(message: Any) -> list[str]:
    """The text parts of a dict or a LangChain message, as ``compress_messages`` reads them."""
    return [part for part in read_message(message, 0).parts if part is not None]


def conversation_tokens(messages: Sequence[Any], counter: Callable[[str], int]) -> int:
    """The budget's measure: the counter summed over every text part of every message."""
    return sum(counter(text) for message in messages for text in _texts(message))


def _protected(messages: list[dict[str, Any]]) -> list[str]:
    return [messages[0]["content"], messages[-1]["content"]]


def _outcome(text: str, kept_protected: bool, tokens: int, budget: int, seconds: float, sample: Sample) -> dict:
    return {"recall": evidence_recall(text, sample.supporting_sentences, sample.context), "tokens": tokens,
            "budget": budget, "overrun": tokens > budget, "protected_intact": kept_protected, "seconds": seconds}


def run_one(compressor: Any, sample: Sample, shape: str, methods: Sequence[str], rate: float,
            describe_bare: bool) -> dict[str, Any]:
    """Every method on one conversation."""
    counter = minilm_token_counter()
    messages, documents = build_conversation(sample, shape)
    row: dict[str, Any] = {"id": sample.id, "source": sample.source, "shape": shape}
    start = time.perf_counter()
    # ``rate`` of the whole conversation (what trim_messages is given too), as an absolute budget: compress_messages'
    # own ``rate`` keeps that share of the compressible messages on top of the protected ones.
    whole = int(rate * conversation_tokens(messages, counter))
    # strict=False (the adapters' default): a turn kept whole over the budget is an overrun in the table, not a crash
    conversation = compressor.compress_messages(messages, target_tokens=whole, token_counter=counter, strict=False,
                                                return_result=True)
    seconds = time.perf_counter() - start
    budget = conversation.budget
    room = conversation.budget - conversation.protected_tokens
    single = shape in SINGLE_SHAPES
    if single:  # the reference is given the question: the documents get what the system message and it leave
        asked = single_message(sample, shape)[1]
        room = budget - counter(messages[0]["content"]) - counter(asked)
    row["budget"] = budget
    row["origin_tokens"] = conversation.origin_tokens
    if "compress_messages" in methods:
        out = conversation.messages
        intact = ([out[0], out[-1]] == [messages[0], messages[-1]] if not single else
                  out[0] == messages[0] and asked in _texts(out[-1])[0]) and len(out) == len(messages)
        text = "\n\n".join(t for message in out for t in _texts(message))
        row["compress_messages"] = _outcome(text, intact, conversation_tokens(out, counter), budget, seconds, sample)
    if "reference" in methods:
        start = time.perf_counter()
        result = compressor.compress(documents, question=sample.question, target_tokens=max(room, 1),
                                     token_counter=counter)
        row["reference"] = _outcome(result.compressed_prompt, True, sum(result.document_compressed_tokens), room,
                                    time.perf_counter() - start, sample)
    if "message_documents" in methods:
        parts = [text for message in messages[1:-1] for text in _texts(message)]
        start = time.perf_counter()
        result = compressor.compress(parts, question=sample.question, target_tokens=max(room, 1),
                                     token_counter=counter)
        row["message_documents"] = _outcome(result.compressed_prompt, True, sum(result.document_compressed_tokens),
                                            room, time.perf_counter() - start, sample)
    if "trim_messages" in methods:
        from langchain_core.messages import convert_to_messages, trim_messages  # lazy: optional extra (langchain)

        start = time.perf_counter()
        trimmed = trim_messages(convert_to_messages(messages), max_tokens=budget, strategy="last",
                                include_system=True,
                                token_counter=lambda batch: conversation_tokens(batch, counter))
        seconds = time.perf_counter() - start
        kept = ["\n\n".join(_texts(message)) for message in trimmed]
        intact = all(text in kept for text in _protected(messages))
        row["trim_messages"] = _outcome("\n\n".join(kept), intact, conversation_tokens(trimmed, counter), budget,
                                        seconds, sample)
    if "flattened" in methods:
        flat = "\n\n".join(f"{m['role']}: {chr(10).join(_texts(m))}" for m in messages if _texts(m))
        start = time.perf_counter()
        result = compressor.compress(flat, question=None, target_tokens=budget, token_counter=counter,
                                     describe_bare=describe_bare)
        text = result.compressed_prompt
        row["flattened"] = _outcome(text, all(p in text for p in _protected(messages)), counter(text), budget,
                                    time.perf_counter() - start, sample)
        row["flattened"]["task_source"] = str(result.task_source)
    return row


def summarise(rows: list[dict[str, Any]], methods: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per method: mean evidence recall (rows with gold evidence), overruns, protected intact, seconds."""
    summary = {}
    for method in methods:
        outcomes = [row[method] for row in rows if method in row]
        recalls = [o["recall"] for o in outcomes if o["recall"] is not None]
        summary[method] = {
            "recall": statistics.fmean(recalls) if recalls else None, "recall_rows": len(recalls),
            "overruns": sum(o["overrun"] for o in outcomes), "protected_intact": sum(o["protected_intact"]
                                                                                      for o in outcomes),
            "conversations": len(outcomes), "seconds": statistics.fmean(o["seconds"] for o in outcomes),
            "by_shape": {shape: statistics.fmean(r) if (r := [row[method]["recall"] for row in rows
                                                               if row["shape"] == shape and method in row
                                                               and row[method]["recall"] is not None]) else None
                         for shape in dict.fromkeys(row["shape"] for row in rows)}}
    return summary


def table(summary: dict[str, dict[str, Any]]) -> str:
    """The markdown table of :func:`summarise`."""
    names = list(dict.fromkeys(shape for s in summary.values() for shape in s["by_shape"]))
    lines = ["| method | evidence recall | " + " | ".join(names) + " | budget overruns | protected intact | s / conv |",
             "|---|---|" + "---|" * len(names) + "---|---|---|"]
    for method, s in summary.items():
        shapes = " | ".join("-" if s["by_shape"].get(shape) is None else f"{s['by_shape'][shape]:.3f}"
                            for shape in names)
        lines.append(f"| {method} | {s['recall']:.3f} | {shapes} | {s['overruns']} / {s['conversations']} | "
                     f"{s['protected_intact']} / {s['conversations']} | {s['seconds']:.2f} |")
    return "\n".join(lines)


def run(split: str, limit: int, rate: float, methods: Sequence[str], out: Path, describe_bare: bool = False,
        data: str | None = None, shapes: Sequence[str] = SHAPES, checkpoint: str = "tpc-mini") -> dict[str, Any]:
    """Build ``limit`` conversations from ``split`` (sources in turn, shapes in turn), run, write .md / .json."""
    from tpc_core import TPCCompressor  # lazy: loads torch

    samples = load_qa_dev(data, split=split)
    queues: dict[str, list[Sample]] = {}
    for sample in samples:
        if sample.supporting_sentences:
            queues.setdefault(sample.source, []).append(sample)
    chosen = round_robin(list(queues.values()), limit)
    compressor = TPCCompressor.from_pretrained(checkpoint)
    rows = []
    for k, sample in enumerate(chosen):
        rows.append(run_one(compressor, sample, shapes[k % len(shapes)], methods, rate, describe_bare))
        print(f"{k + 1}/{len(chosen)} {sample.id} {rows[-1]['shape']}", flush=True)
    summary = summarise(rows, methods)
    out.mkdir(parents=True, exist_ok=True)
    heading = (f"## Conversations, qa_dev {split} ({len(rows)} conversations, rate {rate} of the whole conversation, "
               f"MiniLM WordPiece counter; flattened: describe_bare={describe_bare})\n\n")
    name = split + next((f"_{key}" for key, value in SHAPE_SETS.items() if key != "history" and value == tuple(shapes)),
                        "" if tuple(shapes) == SHAPES else "_custom")
    (out / f"{name}.md").write_text(heading + table(summary) + "\n", encoding="utf-8")
    payload = {"split": split, "rate": rate, "limit": limit, "describe_bare": describe_bare, "shapes": list(shapes),
               "checkpoint": checkpoint, "summary": summary, "rows": rows}
    (out / f"{name}.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
    print(heading + table(summary))
    return payload


def chosen_methods(parser: argparse.ArgumentParser, text: str, known: Sequence[str]) -> list[str]:
    """The comma-separated ``--methods`` as a list; an unknown name ends the run with the parser's usage error."""
    methods = [name for name in text.split(",") if name]
    unknown = sorted(set(methods) - set(known))
    if unknown:
        parser.error(f"unknown methods {unknown}; choose from {list(known)}")
    return methods


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="train", choices=("train", "dev"))
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--methods", default=",".join(DEFAULT_METHODS), help=f"any of {', '.join(METHODS)}")
    parser.add_argument("--describe-bare", action="store_true", help="let the flattened baseline's CTD describe "
                        "prompts without a request found (slow on a CPU)")
    parser.add_argument("--data", default=None, help="qa_dev.jsonl (default: ../shared/data)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/conversations"))
    parser.add_argument("--shapes", default="history", choices=sorted(SHAPE_SETS),
                        help="history: documents in earlier turns; single: one user message holds the documents and "
                             "the question; all: both")
    parser.add_argument("--checkpoint", default="tpc-mini")
    args = parser.parse_args(argv)
    methods = chosen_methods(parser, args.methods, METHODS)
    run(args.split, args.limit, args.rate, methods, args.out, args.describe_bare, args.data, SHAPE_SETS[args.shapes],
        args.checkpoint)


if __name__ == "__main__":
    main()
