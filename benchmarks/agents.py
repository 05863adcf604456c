"""Agent trajectories: what a tool-calling agent's model receives, call after call, under one token budget.

``python -m benchmarks.agents --split train --limit 40`` (held-out train rows), then ``--split dev`` once;
``--kinds`` picks trajectory kinds (:data:`KINDS`, :func:`build_trajectory`; reports
``benchmarks/results/agents/train_kinds*.md``).

Each qa_dev row with evidence labels becomes one trajectory: a system prompt, the row's question as the user's
request, then 3–6 tool calls (``search`` with the question as its query and a page number), each answered by a tool
result of 1–5k tokens: one contiguous group of the row's own documents (paragraphs, or lines where a row has too
few), inserted at a random place among padding documents of other rows. The groups go to the tool calls in a random
order, so the evidence lands in a tool result at a uniformly random position. The model is called before each tool
call and once after the last result.

Every method is held to one budget (``--budget`` MiniLM WordPiece tokens, the sum over every text part of every
message the model receives, the system prompt and the request included):

* ``none``: the view as the agent holds it;
* ``trim_messages``: LangChain's ``trim_messages(strategy="last", include_system=True)``;
* ``clear_tool_uses``: LangChain's ``ContextEditingMiddleware(ClearToolUsesEdit(trigger=budget, keep=1))`` (its
  counter counts the messages without the system prompt: the trigger is the budget less the system prompt);
* ``clear_tool_uses_defaults``: ``ClearToolUsesEdit`` at its defaults but the trigger (``keep=3``,
  ``clear_at_least=0``);
* ``clear_at_least``: as ``clear_tool_uses``, with ``clear_at_least`` half the budget (a clearing reclaims at least
  that much, so the next calls add results without another change);
* ``tpc``: :class:`tpc_integrations.langchain_agents.TPCContextMiddleware` (``target_tokens=budget``, a sentence
  cache of its own); ``tpc:K``: the same with ``plan_ahead=K``; ``even:K`` / ``rel:K``: the same with the ledger's
  shares "even" (each result the same share) / "relevance" (a shrink compresses the results together);
* ``reference``: prompt-aware ``TPCCompressor.compress`` of every tool result of the trajectory as one document
  each, with the question, at the budget less the system prompt and the request (last call only); and, per TPC
  method, at the tokens that method's last call gave the tool results (recall at the same tokens sent).

Cost, with a provider's prompt cache: per model call, the cached prefix is the longest run of leading messages
identical (class and content) to the previous call's in the same trajectory (none on the first call); its tokens are
billed at 0.1, the rest at 1.0 (output excluded, the same for every method); no cache-write premium and no minimum
cached length. Reported: the cached share (cached tokens / tokens sent) and the cost in token-units per trajectory.

Reported per method: evidence recall of what the model receives at its last call, the budget overruns (calls over
the budget), tokens sent over the whole trajectory, the cached prefix kept (per call, the share of the previous
call's tokens that the current view repeats as an unchanged prefix of messages: what a provider's prompt cache can
reuse), whether the request reached the last call whole, and the added latency per model call: cold (a fresh
middleware and an empty sentence cache, the trajectory's calls in order), warm (the last call of the trajectory
again, every tool result seen before), with ``torch.set_num_threads(1)``. ``SummarizationMiddleware`` needs an LLM
to write its summaries: it is not run here; its cost is counted as the model calls at which the agent's view passes
the budget (each is one extra LLM call for a summary, before a summary shrinks the history).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.conversations import casual, chosen_methods, split_documents
from data_access.loaders import Sample, recall_samples, round_robin
from evaluation.budget import minilm_token_counter
from evaluation.metrics import evidence_recall

__all__ = ["KINDS", "METHODS", "Trajectory", "build_trajectory", "cache_cost", "cached_tokens", "capture",
           "evidence_units", "main", "run", "spreadable"]

METHODS = ("none", "trim_messages", "clear_tool_uses", "clear_tool_uses_defaults", "clear_at_least", "tpc")
PLANNED = tuple(f"{rule}:{k}" for rule in ("tpc", "even", "rel") for k in range(9))
"""tpc with plan_ahead=k (choosing the default): the ledger's default sharing (tpc), or shares="even" / "relevance"."""
RULES = {"even": "even", "rel": "relevance"}
CACHED_PRICE = 0.1
SYSTEM = "You are a research assistant. Use the search tool, then answer the user's question from what it returns."
CALLS = (3, 6)
RESULT_TOKENS = (1000, 5000)


class Trajectory:
    """A trajectory's messages (LangChain), its row and its tool results' texts."""

    def __init__(self, sample: Sample, messages: list[Any], results: list[str], evidence_call: list[int]) -> None:
        self.sample = sample
        self.messages = messages
        self.results = results
        self.evidence_call = evidence_call

    def views(self) -> list[list[Any]]:
        """What the agent holds at each model call (the system prompt first): before each tool call, then after the
        last result."""
        body = self.messages[1:]
        return [[self.messages[0], *body[:1 + 2 * k]] for k in range(len(self.results) + 1)]


def _groups(sample: Sample, count: int) -> list[str]:
    """The row's text in ``count`` contiguous groups: of its paragraphs, else of its lines, else of its sentences
    (a row of one paragraph is split between sentences)."""
    units = split_documents(sample.context)
    if len(units) < count:
        units = [line for line in sample.context.split("\n") if line.strip()]
    if len(units) < count:
        units = [piece for piece in re.split(r"(?<=[.!?])\s+", sample.context) if piece.strip()]
    count = min(count, len(units))
    size, extra = divmod(len(units), count)
    groups = []
    start = 0
    for k in range(count):
        end = start + size + (k < extra)
        groups.append("\n\n".join(units[start:end]))
        start = end
    return groups


KINDS = ("grouped", "single", "spread", "repeat", "empty", "mixed")
"""Trajectory kinds (:func:`build_trajectory`): where the evidence is and what else the agent reads."""
SHORT_TOKENS = (150, 400)
LONG_TOKENS = (3000, 6000)


def _cut_between(unit: str, evidence: Sequence[str]) -> list[str]:
    """``unit`` cut before each of its supporting sentences but the first, so each piece holds one (verbatim)."""
    starts = sorted({unit.find(sentence) for sentence in evidence if sentence in unit} - {-1})
    cuts = [0, *starts[1:], len(unit)]
    return [unit[a:b].strip() for a, b in zip(cuts, cuts[1:]) if unit[a:b].strip()]


def evidence_units(sample: Sample) -> tuple[list[str], list[str]]:
    """The row's documents that hold supporting sentences (a document holding several cut between them, so each
    piece can go to a tool result of its own), and its other documents."""
    units = split_documents(sample.context)
    evidence: list[str] = []
    rest: list[str] = []
    for unit in units:
        inside = [sentence for sentence in sample.supporting_sentences if sentence in unit]
        if inside:
            evidence.extend(_cut_between(unit, inside))
        else:
            rest.append(unit)
    return evidence, rest


def spreadable(sample: Sample) -> bool:
    """Whether the row's evidence can be spread over two tool results at least."""
    return len(evidence_units(sample)[0]) >= 2


def _grouped(sample: Sample, padding: Sequence[str], counter: Callable[[str], int],
             rng: random.Random) -> list[str]:
    """The row's text in 3-6 contiguous groups, each inside 1-5k tokens of padding (the first benchmark's kind)."""
    groups = _groups(sample, rng.randint(*CALLS))
    rng.shuffle(groups)
    results = []
    for group in groups:
        target = rng.randint(*RESULT_TOKENS)
        pieces = []
        tokens = counter(group)
        while tokens < target:
            piece = padding[rng.randrange(len(padding))]
            pieces.append(piece)
            tokens += counter(piece)
        pieces.insert(rng.randint(0, len(pieces)), group)
        results.append("\n\n".join(pieces))
    return results


def _placed(sample: Sample, padding: Sequence[str], counter: Callable[[str], int], rng: random.Random,
            spread: bool, sizes: Sequence[int]) -> list[str]:
    """Tool results of ``sizes`` tokens: the row's evidence in one of them (``spread``: over 2-4), its other documents
    and other rows' documents around it, each result's pieces in a random order."""
    evidence, rest = evidence_units(sample)
    rest = list(rest)
    rng.shuffle(rest)
    calls = len(sizes)
    if spread:
        holders = rng.sample(range(calls), min(len(evidence), rng.randint(2, 4), calls))
    else:
        holders = [rng.randrange(calls)]
    assigned: list[list[str]] = [[] for _ in range(calls)]
    for k, unit in enumerate(evidence):
        assigned[holders[k % len(holders)]].append(unit)
    results = []
    for k, target in enumerate(sizes):
        pieces = list(assigned[k])
        tokens = sum(counter(piece) for piece in pieces)
        while tokens < target and rest:
            pieces.append(rest.pop())
            tokens += counter(pieces[-1])
        while tokens < target:
            pieces.append(padding[rng.randrange(len(padding))])
            tokens += counter(pieces[-1])
        rng.shuffle(pieces)
        results.append("\n\n".join(pieces))
    return results


def _sizes(rng: random.Random, calls: int, mixed: bool) -> list[int]:
    if not mixed:
        return [rng.randint(*RESULT_TOKENS) for _ in range(calls)]
    return [rng.randint(*(SHORT_TOKENS if rng.random() < 0.5 else LONG_TOKENS)) for _ in range(calls)]


def build_trajectory(sample: Sample, padding: Sequence[str], counter: Callable[[str], int], seed: int,
                     kind: str = "grouped") -> Trajectory:
    """One trajectory from ``sample`` of ``kind``, padded from ``padding`` (other rows' documents).

    Kinds: "grouped" (the row's text in 3-6 contiguous groups, one per result); "single" (the row's evidence in one
    of 3-6 results of 1-5k tokens, its other documents and other rows' around it); "spread" (the evidence over
    2-4 of them); "repeat" ("single", and one more call, the same tool call again, whose result repeats an earlier
    result verbatim); "empty" ("spread", and one more call whose result answers nothing: "No results found");
    "mixed" ("spread" with results short (150-400 tokens) or long (3-6k) at random).
    """
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # lazy: optional extra

    if kind not in KINDS:
        raise ValueError(f"Unknown trajectory kind {kind!r}; one of {KINDS}.")
    rng = random.Random(seed)
    query = casual(sample.question)
    if kind == "grouped":
        results = _grouped(sample, padding, counter, rng)
    else:
        sizes = _sizes(rng, rng.randint(*CALLS), kind == "mixed")
        results = _placed(sample, padding, counter, rng, kind in ("spread", "empty", "mixed"), sizes)
    pages = list(range(1, len(results) + 1))
    if kind == "repeat":
        source = rng.randrange(len(results))
        at = rng.randint(source + 1, len(results))
        results.insert(at, results[source])
        pages.insert(at, pages[source])
    if kind == "empty":
        at = rng.randint(0, len(results))
        results.insert(at, f'No results found for "{query}".')
        pages.insert(at, len(results))
    messages: list[Any] = [SystemMessage(SYSTEM), HumanMessage(sample.question, id="request")]
    evidence_call = []
    for k, (text, page) in enumerate(zip(results, pages)):
        call = {"name": "search", "args": {"query": query, "page": page}, "id": f"call_{k}"}
        messages += [AIMessage("", tool_calls=[call], id=f"ai_{k}"),
                     ToolMessage(text, tool_call_id=call["id"], name="search", id=f"tool_{k}")]
        if any(s in text for s in sample.supporting_sentences):
            evidence_call.append(k)
    return Trajectory(sample, messages, results, evidence_call)


def view_tokens(view: Sequence[Any], counter: Callable[[str], int]) -> int:
    """The budget's measure: the counter over every text part of every message."""
    return sum(counter(_text(message)) for message in view)


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(part if isinstance(part, str) else part.get("text", "") for part in content)


def capture(middleware: Any, view: list[Any]) -> list[Any]:
    """The messages ``middleware.wrap_model_call`` hands the model, and nothing else run."""
    from langchain.agents.middleware import ModelRequest, ModelResponse  # lazy: optional extra
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    sent: list[Any] = []

    def handler(request: ModelRequest) -> ModelResponse:
        system = [request.system_message] if request.system_message is not None else []
        sent.extend([*system, *request.messages])
        return ModelResponse(result=[AIMessage("")])

    request = ModelRequest(model=GenericFakeChatModel(messages=iter(())), messages=list(view[1:]),
                           system_message=view[0], tools=[], state={"messages": list(view[1:])})
    middleware.wrap_model_call(request, handler)
    return sent


def _method(name: str, compressor: Any, budget: int, counter: Callable[[str], int],
            cache: Any = None) -> Callable[[list[Any]], list[Any]]:
    """The method ``name`` as a function from what the agent holds to what the model receives (one per trajectory:
    a middleware keeps what it sent; a TPC method uses ``cache``, else a sentence cache of its own)."""
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware  # lazy: optional extra
    from langchain_core.messages import trim_messages

    from tpc_core.cache import MemoryCache
    from tpc_integrations.langchain_agents import TPCContextMiddleware

    def count(messages: Sequence[Any]) -> int:
        return view_tokens(messages, counter)

    if name == "none":
        return list
    if name == "trim_messages":
        return lambda view: trim_messages(view, max_tokens=budget, strategy="last", include_system=True,
                                          token_counter=count)
    if name.startswith("clear_"):
        trigger = budget - counter(SYSTEM)
        edit = {"clear_tool_uses": ClearToolUsesEdit(trigger=trigger, keep=1),
                "clear_tool_uses_defaults": ClearToolUsesEdit(trigger=trigger),
                "clear_at_least": ClearToolUsesEdit(trigger=trigger, keep=1, clear_at_least=budget // 2)}[name]
        editing = ContextEditingMiddleware(edits=[edit], token_counter=count)
        return lambda view: capture(editing, view)
    if name == "tpc" or name in PLANNED:
        ahead = {"plan_ahead": int(name.split(":")[1])} if ":" in name else {}
        middleware = TPCContextMiddleware(compressor=compressor, target_tokens=budget, token_counter=counter,
                                          cache=cache if cache is not None else MemoryCache(), **ahead)
        rule = RULES.get(name.split(":")[0])
        if rule is not None:  # the ledger's sharing rule, which the middleware's settings do not name
            from tpc_core.conversation import ToolResultLedger

            middleware.context.ledger = ToolResultLedger(shares=rule)
        return lambda view: capture(middleware, view)
    raise ValueError(f"Unknown method {name!r}; one of {METHODS}.")


def _prefix_kept(before: Sequence[Any], after: Sequence[Any], counter: Callable[[str], int]) -> float:
    """The share of ``before``'s tokens that ``after`` repeats as an unchanged prefix of messages."""
    total = view_tokens(before, counter)
    same = 0
    for old, new in zip(before, after):
        if type(old) is not type(new) or old.content != new.content:
            break
        same += counter(_text(old))
    return same / total if total else 1.0


def cached_tokens(before: Sequence[Any], after: Sequence[Any], counter: Callable[[str], int]) -> int:
    """The tokens of ``after``'s longest run of leading messages identical (class and content) to ``before``'s."""
    same = 0
    for old, new in zip(before, after):
        if type(old) is not type(new) or old.content != new.content:
            break
        same += counter(_text(new))
    return same


def cache_cost(sent: Sequence[Sequence[Any]], counter: Callable[[str], int]) -> tuple[int, int, float]:
    """Over a trajectory's calls: tokens sent, tokens a prompt cache holds (each call's prefix identical to the
    previous call's), and the cost (uncached at 1.0, cached at :data:`CACHED_PRICE`)."""
    tokens = [view_tokens(view, counter) for view in sent]
    cached = [0] + [cached_tokens(a, b, counter) for a, b in zip(sent, sent[1:])]
    return sum(tokens), sum(cached), sum(t - c for t, c in zip(tokens, cached)) + CACHED_PRICE * sum(cached)


def _reference(compressor: Any, trajectory: Trajectory, room: int, counter: Callable[[str], int],
               cache: Any = None) -> float | None:
    """Evidence recall of prompt-aware ``compress`` of the trajectory's results at ``room`` tokens."""
    sample = trajectory.sample
    result = compressor.compress(trajectory.results, question=sample.question, target_tokens=max(room, 1),
                                 token_counter=counter, cache=cache)
    return evidence_recall(result.compressed_prompt, sample.supporting_sentences, sample.context)


def run_one(compressor: Any, trajectory: Trajectory, methods: Sequence[str], budget: int,
            counter: Callable[[str], int], cache_dir: Path | None = None) -> dict[str, Any]:
    """Every method over one trajectory, and the reference at its last call. The TPC methods share one sentence
    cache (their reads are the same): the first in ``methods`` runs cold, the others' cold figures are not; with
    ``cache_dir``, a directory cache there, shared across runs (then no figure is cold)."""
    from tpc_core.cache import DirectoryCache, MemoryCache  # lazy: loads torch

    shared = MemoryCache() if cache_dir is None else DirectoryCache(cache_dir / "tools")
    references = MemoryCache() if cache_dir is None else DirectoryCache(cache_dir / "references")
    sample = trajectory.sample
    views = trajectory.views()
    row: dict[str, Any] = {"id": sample.id, "source": sample.source, "calls": len(views),
                           "history_tokens": view_tokens(views[-1], counter), "evidence_call": trajectory.evidence_call}
    for name in methods:
        method = _method(name, compressor, budget, counter, shared)
        sent = []
        seconds = []
        for view in views:
            start = time.perf_counter()
            sent.append(method(list(view)))
            seconds.append(time.perf_counter() - start)
        start = time.perf_counter()
        method(list(views[-1]))  # the last call again: every tool result seen before
        warm = time.perf_counter() - start
        tokens = [view_tokens(view, counter) for view in sent]
        last = "\n\n".join(_text(message) for message in sent[-1])
        _, cached, cost = cache_cost(sent, counter)
        row[name] = {"recall": evidence_recall(last, sample.supporting_sentences, sample.context),
                     "tokens_sent": sum(tokens), "last_tokens": tokens[-1], "overruns": sum(t > budget for t in tokens),
                     "request_kept": any(_text(message) == sample.question for message in sent[-1]),
                     "prefix_kept": statistics.fmean(_prefix_kept(a, b, counter) for a, b in zip(sent, sent[1:])),
                     "cached_tokens": cached, "cost": cost,
                     "cold_ms": 1000 * statistics.fmean(seconds), "warm_ms": 1000 * warm}
        if name == "tpc" or name in PLANNED:  # the reference at the tokens its last call gave the tool results
            results_tokens = sum(counter(_text(m)) for m in sent[-1] if type(m).__name__ == "ToolMessage")
            row[name]["reference_same_tokens"] = _reference(compressor, trajectory, results_tokens, counter,
                                                            references)
    room = budget - counter(SYSTEM) - counter(sample.question)
    row["reference"] = {"recall": _reference(compressor, trajectory, room, counter, references), "room": room}
    row["summarization_triggers"] = sum(view_tokens(view, counter) > budget for view in views)
    return row


def summarise(rows: list[dict[str, Any]], methods: Sequence[str]) -> dict[str, Any]:
    """Per method: mean recall (rows with gold evidence), overruns, tokens sent, prefix kept, latencies."""
    summary: dict[str, Any] = {}
    for name in methods:
        outcomes = [row[name] for row in rows]
        recalls = [o["recall"] for o in outcomes if o["recall"] is not None]
        summary[name] = {"recall": statistics.fmean(recalls) if recalls else None, "recall_rows": len(recalls),
                         "overruns": sum(o["overruns"] for o in outcomes),
                         "calls": sum(row["calls"] for row in rows),
                         "tokens_sent": statistics.fmean(o["tokens_sent"] for o in outcomes),
                         "prefix_kept": statistics.fmean(o["prefix_kept"] for o in outcomes),
                         "cached_share": sum(o["cached_tokens"] for o in outcomes) / max(sum(o["tokens_sent"]
                                                                                              for o in outcomes), 1),
                         "cost": statistics.fmean(o["cost"] for o in outcomes),
                         "request_kept": sum(o["request_kept"] for o in outcomes),
                         "cold_ms": statistics.fmean(o["cold_ms"] for o in outcomes),
                         "warm_ms": statistics.fmean(o["warm_ms"] for o in outcomes),
                         "warm_ms_p90": sorted(o["warm_ms"] for o in outcomes)[int(0.9 * (len(outcomes) - 1))]}
        same = [o["reference_same_tokens"] for o in outcomes if o.get("reference_same_tokens") is not None]
        summary[name]["reference_same_tokens"] = statistics.fmean(same) if same else None
    recalls = [row["reference"]["recall"] for row in rows if row["reference"]["recall"] is not None]
    summary["reference"] = {"recall": statistics.fmean(recalls) if recalls else None, "recall_rows": len(recalls)}
    summary["summarization"] = {"llm_calls_upper": sum(row["summarization_triggers"] for row in rows),
                                "trajectories_triggering": sum(row["summarization_triggers"] > 0 for row in rows),
                                "model_calls": sum(row["calls"] for row in rows)}
    return summary


def table(summary: dict[str, Any], methods: Sequence[str]) -> str:
    """The markdown table of :func:`summarise`."""
    lines = ["| method | evidence recall (last call) | prompt-aware at the same tokens | calls over budget "
             "| tokens sent / trajectory | cached share | cost / trajectory | cached prefix kept | request kept "
             "| added ms / call, cold | warm (mean, p90) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in methods:
        s = summary[name]
        same = s.get("reference_same_tokens")
        lines.append(f"| {name} | {s['recall']:.3f} | {'-' if same is None else f'{same:.3f}'} | {s['overruns']} / "
                     f"{s['calls']} | {s['tokens_sent']:.0f} | {s['cached_share']:.3f} | {s['cost']:.0f} | "
                     f"{s['prefix_kept']:.3f} | {s['request_kept']} | {s['cold_ms']:.1f} | "
                     f"{s['warm_ms']:.1f}, {s['warm_ms_p90']:.1f} |")
    reference = summary["reference"]
    lines.append(f"| reference (prompt-aware compress at the budget, last call) | {reference['recall']:.3f} "
                 "| - | - | - | - | - | - | - | - | - |")
    return "\n".join(lines)


def _padding(samples: Sequence[Sample], exclude: str) -> list[str]:
    return [document for sample in samples if sample.context != exclude for document in split_documents(sample.context)
            if len(document) > 200]


def _kind_table(rows: list[dict[str, Any]], methods: Sequence[str], kinds: Sequence[str]) -> str:
    """Per kind and TPC method: recall, prompt-aware at the same tokens, their ratio, cost, cached share; and the
    baselines' recall and cost (the trade-off curve, one row per setting)."""
    lines = ["| kind | method | recall | prompt-aware at the same tokens | ratio | cost / trajectory | cached share "
             "| calls over budget |", "|---|---|---|---|---|---|---|---|"]
    for kind in kinds:
        chosen = [row for row in rows if row["kind"] == kind]
        if not chosen:
            continue
        summary = summarise(chosen, methods)
        for name in methods:
            s = summary[name]
            same = s.get("reference_same_tokens")
            ratio = "-" if not same or s["recall"] is None else f"{s['recall'] / same:.3f}"
            lines.append(f"| {kind} ({len(chosen)}) | {name} | {s['recall']:.3f} | "
                         f"{'-' if same is None else f'{same:.3f}'} | {ratio} | {s['cost']:.0f} | "
                         f"{s['cached_share']:.3f} | {s['overruns']} / {s['calls']} |")
    return "\n".join(lines)


def _chosen(samples: Sequence[Sample], limit: int, kind: str) -> list[Sample]:
    """``limit`` rows, round robin over the sources; for a kind that spreads the evidence, rows it can spread."""
    eligible = [s for s in samples if kind not in ("spread", "empty", "mixed") or spreadable(s)]
    queues: dict[str, list[Sample]] = {}
    for sample in eligible:
        queues.setdefault(sample.source, []).append(sample)
    return round_robin(list(queues.values()), limit)


def run(split: str, limit: int, budget: int, methods: Sequence[str], out: Path, seed: int = 2026,
        checkpoint: str = "tpc-mini", data: str | None = None, suffix: str = "",
        kinds: Sequence[str] = ("grouped",), cache_dir: Path | None = None) -> dict[str, Any]:
    """Build ``limit`` trajectories of each of ``kinds`` from ``split`` (held-out train rows or dev), run every
    method, write .md / .json. Rows already in the run's ``.partial.json`` (same split, suffix) are not run again."""
    import torch  # lazy

    from tpc_core import TPCCompressor

    torch.set_num_threads(1)
    load_before = os.getloadavg()
    samples = recall_samples(data, dev=split == "dev")
    counter = minilm_token_counter()
    compressor = TPCCompressor.from_pretrained(checkpoint, device="cpu")
    out.mkdir(parents=True, exist_ok=True)
    name = ("dev" if split == "dev" else "train") + suffix
    partial = out / f"{name}.partial.json"
    rows: list[dict[str, Any]] = json.loads(partial.read_text(encoding="utf-8")) if partial.exists() else []
    done = {(row.get("kind", "grouped"), row["id"]) for row in rows}
    for kind_index, kind in enumerate(kinds):
        for k, sample in enumerate(_chosen(samples, limit, kind)):
            if (kind, sample.id) in done:
                continue
            trajectory_seed = seed + k if kind == "grouped" else seed + 1000 * (kind_index + 1) + k
            trajectory = build_trajectory(sample, _padding(samples, sample.context), counter, trajectory_seed, kind)
            row = run_one(compressor, trajectory, methods, budget, counter, cache_dir)
            rows.append({"kind": kind, **row})
            partial.write_text(json.dumps(rows), encoding="utf-8")
            print(f"{kind} {k + 1}/{limit} {sample.id} calls={row['calls']} "
                  + " ".join(f"{m}={row[m]['recall']}" for m in (*methods, "reference")), flush=True)
    rows = [row for row in rows if row["kind"] in kinds]
    summary = summarise(rows, methods)
    load_after = os.getloadavg()
    history = statistics.fmean(row["history_tokens"] for row in rows)
    heading = (f"## Agent trajectories, qa_dev {'dev' if split == 'dev' else 'held-out train'} ({len(rows)} "
               f"trajectories of kinds {', '.join(kinds)}, {summary[methods[0]]['calls']} model calls, budget "
               f"{budget} MiniLM tokens for everything the model receives; history at the last call "
               f"{history:.0f} tokens on average; one torch thread; load average {load_before[0]:.2f} before, "
               f"{load_after[0]:.2f} after)\n\n")
    summ = summary["summarization"]
    note = (f"\n\nSummarizationMiddleware (not run: it needs an LLM): the view passes the budget at "
            f"{summ['llm_calls_upper']} of {summ['model_calls']} model calls ({summ['trajectories_triggering']} of "
            f"{len(rows)} trajectories); each trigger is one extra LLM call, so it would spend between "
            f"{summ['trajectories_triggering']} and {summ['llm_calls_upper']} summarisation calls here.\n")
    by_kind = "\n\n### Per kind\n\n" + _kind_table(rows, methods, kinds) + "\n" if len(kinds) > 1 else ""
    (out / f"{name}.md").write_text(heading + table(summary, methods) + note + by_kind, encoding="utf-8")
    payload = {"split": split, "limit": limit, "budget": budget, "seed": seed, "checkpoint": checkpoint,
               "kinds": list(kinds), "load_average_before": load_before, "load_average_after": load_after,
               "torch_threads": 1, "summary": summary, "rows": rows}
    (out / f"{name}.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
    print(heading + table(summary, methods) + note + by_kind)
    return payload


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="train", choices=("train", "dev"),
                        help="train: the held-out train rows (data_access.paths.HELDOUT_IDS); dev: once")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"any of {', '.join(METHODS + PLANNED)} (tpc:K: plan_ahead=K; even:K, rel:K: "
                        "with shares='even' / 'relevance')")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--data", default=None, help="qa_dev.jsonl (default: ../shared/data)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/agents"))
    parser.add_argument("--checkpoint", default="tpc-mini")
    parser.add_argument("--suffix", default="", help="added to the reports' names (train<suffix>.md)")
    parser.add_argument("--kinds", default="grouped", help=f"trajectory kinds, any of {', '.join(KINDS)} "
                        "(--limit trajectories of each)")
    parser.add_argument("--cache-dir", type=Path, default=None,
                        help="a sentence cache shared across runs (a re-run with other methods reads it; cold ms are "
                             "then not cold)")
    args = parser.parse_args(argv)
    methods = chosen_methods(parser, args.methods, METHODS + PLANNED)
    kinds = chosen_methods(parser, args.kinds, KINDS)
    run(args.split, args.limit, args.budget, methods, args.out, args.seed, args.checkpoint, args.data, args.suffix,
        kinds, args.cache_dir)


if __name__ == "__main__":
    main()
