"""Engine speed on this machine: the engine's own milliseconds per ~10k-token prompt, part by part.

Usage:
    python -m benchmarks.engine_overhead [--tokens 10000] [--repeats 3] [--model tpc-mini] [--threads N]
    python -m benchmarks.engine_overhead --compare d419b9d [--rounds 3]   # before / after, alternated
    python -m benchmarks.engine_overhead --quick                           # a tiny prompt: a check, not a figure
    python -m benchmarks.engine_overhead --split [--out DIR]               # the engine-v5 definition (below)

"Model time" is the wall time inside the CSE backbone's forward passes and the CTD's ``generate`` calls; the
engine's **own time** is the call minus the model time: splitting, tokenising and counting, windows and pooling,
BM25, the task finder's heads, selection, result building. Everything is timed from outside the engine
(:class:`PartClock` wraps public functions and methods of ``tpc_core`` for the run; nothing in ``tpc_core`` keeps
time), and each part is exclusive: a part's time excludes the parts and model passes it calls. ``--clock cpu``
times the main thread's CPU instead of the wall (one torch thread, no tokenizer threads): steadier when other
processes share the cores.

Rows, one process: prompt-aware; prompt-agnostic on the same text inside LongBench's multi-document QA template
(the question is written in the prompt, as users send it); prompt-agnostic on the bare text (no request written:
the CTD generates one; left out with ``--compare``); and a warm cached call (the cache suite's retrieval set: 20
chunks of qa_dev ``train`` contexts, ``--tokens`` in all, the first one's question, ``cache="memory"`` filled by
the warm-ups, so every chunk is served from the cache; ``--threads 1`` or ``--clock cpu`` for one
thread). A "MiniLM forward floor" row is the median time of plain
forward passes of the MiniLM backbone over the same prompt's tokens (:mod:`evaluation.methods.forward_floor`),
and a last line prints prompt-aware / floor against the speed floor's limit of 1.15×.

``--compare REV`` measures the same thing for a git revision checked out in a temporary ``git worktree``: each
measurement is a subprocess run from its tree's root (so it imports that tree's ``tpc_core``), base and current
alternated ``--rounds`` times; it prints both trees' own time per mode and part (medians over the rounds) and
their ratio. Every output records the load average. Asserts nothing.

``--split`` measures the other definition of the engine's own time (:mod:`benchmarks.engine_split`): no part is
wrapped (the part wrappers above cost time of their own, which the rows above count as the engine's), only
forward pre/post hooks on the encoder; median of 5 calls after **one** warm-up; 2 torch threads; the warm cached
call and the short-document corpus on the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FLOOR_LIMIT = 1.15  # prompt-aware tpc-mini may take at most this many MiniLM forward floors
QUICK_TOKENS = 600

#: The parts of the engine's own time, each the public functions and methods whose time (less the model passes
#: and the other parts they call) it sums. ``module:qualname``; a name a revision lacks is skipped.
PARTS: dict[str, tuple[str, ...]] = {
    "splitting": ("tpc_core.segmentation.splitter:split_sentences",),
    "tokenizing and counting": ("tpc_core.engine.tokens:TokenCounter.encode_many",
                                "tpc_core.engine.tokens:TokenCounter.count_many",
                                "tpc_core.engine.tokens:TokenCounter.count_from_sentences",
                                "tpc_core.engine.scoring.cse:ContextSentenceEncoder.tokenize",
                                "tpc_core.engine.cse:ContextSentenceEncoder.tokenize"),
    "BM25": ("tpc_core.engine.scoring.lexical:bm25_scores", "tpc_core.engine.lexical:bm25_scores"),
    "task finding and heads": ("tpc_core.engine.task.finder:TaskFinder.find", "tpc_core.engine.task:TaskFinder.find",
                               "tpc_core.engine.scoring.salience:salience_scores",
                               "tpc_core.engine.salience:salience_scores"),
    "windows and pooling": ("tpc_core.engine.scoring.cse:ContextSentenceEncoder.encode_contexts",
                            "tpc_core.engine.scoring.cse:ContextSentenceEncoder.encode_questions",
                            "tpc_core.engine.cse:ContextSentenceEncoder.encode_contexts",
                            "tpc_core.engine.cse:ContextSentenceEncoder.encode_questions"),
    "scores (cosine, fusion, coverage)": ("tpc_core.engine.scoring.scorers:score_prompts",
                                          "tpc_core.engine.scoring:score_prompts"),
    "selection and result": ("tpc_core.engine.selection.assembly:compress_scored",
                             "tpc_core.engine.output.result:to_result",
                             "tpc_core.engine.stages:compress_scored", "tpc_core.engine.stages:to_result"),
}
"""Where a module moved into the engine's sub-packages, both names are listed: ``--compare`` measures a base
revision from before the move with this file."""
OTHER = "other (segment, batch loop)"
MODES = ("prompt-aware", "prompt-agnostic, question in the prompt", "prompt-agnostic, bare document")
WARM = "warm cached call, 20 chunks, question given"
#: What ``--compare`` measures: the two modes of the target, and the warm cached call.
COMPARED = (*MODES[:2], WARM)


class PartClock:
    """Exclusive seconds per part of a compress call, and inside the models, timed from outside the engine.

    The CSE backbone's forward passes (or its slim pass's) are timed with torch forward hooks, the CTD's ``generate`` by
    wrapping the method on that model instance, and each part's functions by wrappers put in place of the function in
    every loaded ``tpc_core`` module that holds it (methods: on their class). A stack of open frames makes each time
    exclusive: a frame's time less its children's is its own. ``seconds["model"]`` is the model time; the other keys sum
    to the engine's own time. Nothing in ``tpc_core`` keeps time.
    """

    def __init__(self, compressor: Any, now: Callable[[], float] = time.perf_counter) -> None:
        self.now = now
        self.seconds: dict[str, float] = {}
        self._stack: list[list[Any]] = []  # [part, started, children's seconds]
        self._compressor = compressor
        self._restore: list[Callable[[], None]] = []
        self._ctd_seen: set[int] = set()
        encoder = compressor.encoder
        # The backbone, and the encoder's slim pass where a tree has one (it runs the layers without the backbone's
        # forward): one of them runs each pass.
        for model in [encoder.model] + [module for module in (getattr(encoder, "slim", None),) if module is not None]:
            pre = model.register_forward_pre_hook(lambda *_: self.enter("model"))
            post = model.register_forward_hook(lambda *_: self.leave())
            self._restore += [pre.remove, post.remove]
        for part, targets in PARTS.items():
            for target in targets:
                self._wrap(part, target)

    def enter(self, part: str) -> None:
        self._stack.append([part, self.now(), 0.0])

    def leave(self) -> None:
        part, started, children = self._stack.pop()
        spent = self.now() - started
        self.seconds[part] = self.seconds.get(part, 0.0) + spent - children
        if self._stack:
            self._stack[-1][2] += spent

    def timed(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` with its calls timed as ``part``."""
        clock = self

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            clock.enter(part)
            try:
                return function(*args, **kwargs)
            finally:
                clock.leave()

        wrapper.__wrapped__ = function  # type: ignore[attr-defined]
        return wrapper

    def _wrap(self, part: str, target: str) -> None:
        import importlib

        module_name, qualname = target.split(":")
        try:
            owner: Any = importlib.import_module(module_name)
        except ImportError:
            return
        *path, name = qualname.split(".")
        for attribute in path:
            owner = getattr(owner, attribute, None)
        original = getattr(owner, name, None) if owner is not None else None
        if original is None:
            return
        wrapped = self.timed(part, original)
        if path:  # a method: on its class
            setattr(owner, name, wrapped)
            self._restore.append(lambda: setattr(owner, name, original))
            return
        for module in [m for key, m in sys.modules.items() if key.split(".")[0] == "tpc_core" and m is not None]:
            for attribute, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attribute, wrapped)
                    self._restore.append(lambda m=module, a=attribute: setattr(m, a, original))

    def watch_ctd(self) -> None:
        """Time the CTD's generate calls too: every causal LM's ``generate`` (the CTD is the only one a call runs)."""
        from transformers.generation.utils import GenerationMixin

        if self._ctd_seen:
            return
        original = GenerationMixin.generate
        GenerationMixin.generate = self.timed("model", original)  # kept for the run, as the CTD is
        self._ctd_seen.add(id(GenerationMixin))

    def call(self, function: Callable[[], Any]) -> tuple[float, dict[str, float]]:
        """Wall seconds of ``function()`` and the seconds of each part during it (the model's under "model";
        what no part holds under :data:`OTHER`)."""
        self.seconds = {}
        self.enter(OTHER)
        started = self.now()
        try:
            function()
        finally:
            self.leave()
        return self.now() - started, dict(self.seconds)

    def close(self) -> None:
        """Put back every wrapped function and remove the hooks."""
        for restore in reversed(self._restore):
            restore()
        self._restore = []


def measure(clock: PartClock, compressor: Any, text: str | list[str], question: str | None, repeats: int,
            **options: Any) -> dict[str, Any]:
    """Median call, model and own milliseconds over ``repeats`` calls (after two warm-ups), and each part's."""
    compressor.compress(text, question=question, rate=0.2, **options)
    clock.watch_ctd()
    compressor.compress(text, question=question, rate=0.2, **options)
    totals = []
    models = []
    owns = []
    parts = {}
    for _ in range(repeats):
        seconds, spent = clock.call(lambda: compressor.compress(text, question=question, rate=0.2, **options))
        model = spent.pop("model", 0.0)
        totals.append(seconds)
        models.append(model)
        owns.append(seconds - model)
        for part in [*PARTS, OTHER]:
            parts.setdefault(part, []).append(spent.get(part, 0.0))
    ms = lambda values: 1000 * statistics.median(values)
    return {"ms": ms(totals), "model_ms": ms(models), "own_ms": ms(owns),
            "parts_ms": {part: ms(values) for part, values in parts.items()},
            "task_source": compressor.compress(text, question=question, rate=0.2, **options).task_source}


def make_inputs(tokens: int) -> dict[str, Any]:
    """Each mode's input and question, from the data root (``$TPC_DATA``): the prompt of real dev contexts
    (:func:`benchmarks.harness.timing_inputs.build_prompt`), the same inside LongBench's multi-document QA template
    (the question written in the prompt, as users send it), the bare prompt (no request written: the CTD must write
    one), and the cache suite's retrieval set for the warm call (20 chunks of qa_dev ``train`` contexts of about
    ``tokens / 20`` MiniLM tokens each, and the first one's question). JSON-serialisable: ``--compare`` makes them
    once, in this tree, and both trees' workers read them (``--inputs``)."""
    # lazy: a --compare base revision runs this file as its worker, without evaluation or synthesis
    from benchmarks.harness.timing_inputs import build_prompt
    from data_access.loaders import load_qa_dev
    from evaluation.budget import minilm_token_counter
    from evaluation.chunks import retrieval_set
    from synthesis.templates import QA_DEV_TEMPLATES, fill_template

    counter = minilm_token_counter()
    text, question = build_prompt(counter, tokens)
    chunks, first = retrieval_set(load_qa_dev(split="train"), counter, 20, max(tokens // 20, 20))
    templated = fill_template(QA_DEV_TEMPLATES["multi_doc_qa"], text, question)
    return {MODES[0]: [text, question], MODES[1]: [templated, None], MODES[2]: [text, None],
            WARM: [[chunk.text for chunk in chunks], first]}


def run_modes(args: argparse.Namespace, modes: tuple[str, ...]) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """Load the model and measure ``modes``: the compressor, each mode's prompt and each mode's figures."""
    import torch

    from tpc_core import TPCCompressor

    if args.threads or args.clock == "cpu":
        torch.set_num_threads(1 if args.clock == "cpu" else args.threads)
    compressor = TPCCompressor.from_pretrained(args.model)
    inputs = json.loads(Path(args.inputs).read_text(encoding="utf-8")) if args.inputs else make_inputs(args.tokens)
    clock = PartClock(compressor, time.thread_time if args.clock == "cpu" else time.perf_counter)
    try:
        rows = {mode: measure(clock, compressor, *inputs[mode], args.repeats) for mode in modes if mode != WARM}
        if WARM in modes:  # every chunk served from the cache ("memory"; the warm-ups fill it)
            from tpc_core.cache import resolve_cache

            rows[WARM] = measure(clock, compressor, *inputs[WARM], args.repeats,
                                 cache=resolve_cache("memory"))
    finally:
        clock.close()
    return compressor, inputs, rows


def worker(args: argparse.Namespace) -> None:
    """One measurement for ``--compare``: JSON on the last line of stdout."""
    started_load = os.getloadavg()
    _, _, rows = run_modes(args, COMPARED)
    print(json.dumps({"rows": rows, "load": [started_load, os.getloadavg()]}))


def compare(args: argparse.Namespace) -> None:
    """Base revision and current tree, alternated in subprocesses; medians over rounds and their ratio."""
    root = Path(__file__).resolve().parents[1]
    base = Path(tempfile.mkdtemp(prefix="tpc-overhead-base-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(base), args.compare], cwd=root, check=True,
                   capture_output=True)
    try:
        # The same measuring code in both trees: this file replaces the base's copy (the base's tpc_core is measured).
        shutil.copy(Path(__file__), base / "benchmarks" / "engine_overhead.py")
        inputs = base / "engine_overhead_inputs.json"  # one set of inputs, made here, for both trees
        inputs.write_text(json.dumps(make_inputs(args.tokens)), encoding="utf-8")
        command = [sys.executable, "-m", "benchmarks.engine_overhead", "--worker", "--tokens", str(args.tokens),
                   "--repeats", str(args.repeats), "--model", args.model, "--inputs", str(inputs)]
        command += ["--threads", str(args.threads)] if args.threads else []
        command += ["--clock", args.clock]
        runs: dict[str, list[dict[str, Any]]] = {"base": [], "current": []}
        loads = [os.getloadavg()]
        for _ in range(args.rounds):
            for name, tree in (("base", base), ("current", root)):
                done = subprocess.run(command, cwd=tree, check=True, capture_output=True, text=True,
                                      env={**os.environ, "PYTHONPATH": str(tree)})
                runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
                loads.append(os.getloadavg())
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=root, check=False, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
    print(f"--compare {args.compare} (base) vs the working tree (current), clock {args.clock}: {args.tokens} tokens, "
          f"{args.rounds} "
          f"alternated rounds of {args.repeats} calls each, medians of the rounds' medians; load averages (1, 5, 15 "
          f"min) from {_load(loads[0])} to {_load(loads[-1])} (highest 1-min {max(load[0] for load in loads):.2f})")
    median = lambda name, mode, key, part=None: statistics.median(
        run["rows"][mode][key] if part is None else run["rows"][mode][key][part] for run in runs[name])
    for mode in COMPARED:
        print(f"\n{mode}\n\n| ms | base | current | current / base |\n|---|---|---|---|")
        for label, key in (("call", "ms"), ("model passes", "model_ms"), ("**engine's own**", "own_ms")):
            before = median("base", mode, key)
            after = median("current", mode, key)
            print(f"| {label} | {before:.1f} | {after:.1f} | {after / before:.2f} |")
        for part in [*PARTS, OTHER]:
            before = median("base", mode, "parts_ms", part)
            after = median("current", mode, "parts_ms", part)
            ratio = f"{after / before:.2f}" if before > 0.05 else "—"
            print(f"| · {part} | {before:.1f} | {after:.1f} | {ratio} |")


def _load(load: Any) -> str:
    return "/".join(f"{value:.2f}" for value in load)


def report(args: argparse.Namespace) -> None:
    """One process: the modes' table and each mode's parts."""
    import torch

    from evaluation.methods.forward_floor import MiniLMForward

    load_before = os.getloadavg()
    modes = (*MODES[:2], WARM) if args.quick else (*MODES, WARM)
    compressor, inputs, rows = run_modes(args, modes)
    counter = compressor.token_counter
    print(f"prompt: {counter(inputs[MODES[0]][0])} tokens (MiniLM tokenizer; {counter(inputs[MODES[1]][0])} with the "
          f"template); torch threads: {torch.get_num_threads()}; medians over {args.repeats} calls; "
          f"clock: {args.clock}")
    print("\n| mode | call ms | model ms | **own ms** | outside models | × prompt-aware | description from |")
    print("|---|---|---|---|---|---|---|")
    aware = rows[MODES[0]]["ms"]
    for mode in modes:
        row = rows[mode]
        print(f"| {mode} | {row['ms']:.1f} | {row['model_ms']:.1f} | {row['own_ms']:.1f} | "
              f"{(row['ms'] - row['model_ms']) / row['ms']:.1%} | {row['ms'] / aware:.2f} | {row['task_source']} |")
    if not args.quick:  # same tokens, nothing but forward passes
        floor = 1000 * MiniLMForward(compressor.device, compressor.dtype).median_seconds(inputs[MODES[0]][0],
                                                                                          args.repeats)
        print(f"| MiniLM forward floor | {floor:.1f} | {floor:.1f} | — | — | {floor / aware:.2f} | — |")
        print(f"{args.model} prompt-aware / MiniLM forward floor: {aware / floor:.2f}× "
              f"({'within' if aware / floor <= FLOOR_LIMIT else 'over'} the {FLOOR_LIMIT:.2f}× limit)")
    print("\nThe engine's own ms by part (exclusive; medians, so they need not sum to the own time exactly)\n")
    print("| part | " + " | ".join(modes) + " |\n|---|" + "---|" * len(modes))
    for part in [*PARTS, OTHER]:
        print(f"| {part} | " + " | ".join(f"{rows[mode]['parts_ms'][part]:.1f}" for mode in modes) + " |")
    print(f"\nload average (1, 5, 15 min): {_load(load_before)} before, {_load(os.getloadavg())} after; "
          f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="tpc-mini")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--inputs", help=argparse.SUPPRESS)  # --compare's workers: the inputs made by the parent
    parser.add_argument("--compare", metavar="REV", help="a git revision to measure against, alternated")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds of --compare")
    parser.add_argument("--quick", action="store_true", help=f"a {QUICK_TOKENS}-token prompt, two modes, no floor")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: perf_counter; cpu: the main thread's CPU time, one torch thread and no tokenizer "
                             "threads (steadier on a shared machine; what a quiet machine's wall time would be)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--split", action="store_true",
                        help="the engine-v5 definition: call minus encoder forwards, no part wrappers, median of 5 "
                             "after one warm-up, with the warm one-thread call and short documents")
    parser.add_argument("--out", help="with --split: a folder to write split.{md,json} to")
    parser.add_argument("--split-repeats", type=int, default=5, help="with --split: timed calls per row")
    parser.add_argument("--corpus-docs", type=int, default=512, help="with --split: short passages")
    parser.add_argument("--corpus-repeats", type=int, default=2, help="with --split: timed corpus runs")
    args = parser.parse_args(argv)
    if args.clock == "cpu":  # the tokenizer's own threads would be CPU time this clock does not see
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
    if args.quick:
        args.tokens = QUICK_TOKENS
        args.repeats = 1
        args.rounds = 1
    if args.split:
        from benchmarks.engine_split import split_report  # lazy: the split's own module, torch loaded there

        split_report(args, make_inputs(args.tokens), MODES[:2], WARM)
    elif args.worker:
        worker(args)
    elif args.compare:
        compare(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
