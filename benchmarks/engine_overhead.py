"""Engine speed on this machine: seconds per ~10k-token prompt and the share of time spent outside the models.

Usage:
    python -m benchmarks.engine_overhead [--tokens 10000] [--repeats 3] [--model tpc-mini]

"Model time" is the wall time inside the CSE forward passes and the CTD ``generate`` calls (both are
measured by the engine itself); everything else — splitting, tokenising, windowing, selection, budget
re-counting, result building — is overhead. Three rows, one process: prompt-aware; prompt-agnostic on the
same text inside LongBench's multi-document QA template (the question is written in the prompt, as users
send it); prompt-agnostic on the bare text (no request written: the CTD generates one). A fourth row, "MiniLM
forward floor", is the median time of plain forward passes of the MiniLM backbone over the same prompt's tokens
(510-token windows, batch 8; :mod:`benchmarks.protocol.methods.forward_floor`), and a last line prints prompt-aware / floor
against the speed floor's limit of 1.15×. Prints a markdown table with each row's time over the prompt-aware
time; asserts nothing.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from benchmarks.protocol.methods.forward_floor import MiniLMForward
from benchmarks.protocol.timing_inputs import build_prompt
from synthesis.templates import QA_DEV_TEMPLATES, fill_template

FLOOR_LIMIT = 1.15  # prompt-aware tpc-mini may take at most this many MiniLM forward floors


class ModelClock:
    """Seconds spent inside the engine's models, timed from outside the engine.

    The CSE backbone's forward passes are timed with torch forward hooks; the CTD's ``generate`` (the whole
    decode loop, as before) by wrapping the method on that model instance. Nothing in ``tpc_core`` keeps time.
    """

    def __init__(self, compressor) -> None:  # noqa: ANN001 (a TPCCompressor)
        self.seconds = 0.0
        self._started = 0.0
        model = compressor.encoder.model
        model.register_forward_pre_hook(lambda *_: self._start())
        model.register_forward_hook(lambda *_: self._stop())
        self._compressor = compressor
        self._wrapped: set[int] = set()

    def _start(self) -> None:
        self._started = time.perf_counter()

    def _stop(self) -> None:
        self.seconds += time.perf_counter() - self._started

    def watch_ctd(self) -> None:
        """Time the CTD's generate calls too (once the CTD is loaded)."""
        if not self._compressor.task_descriptor_loaded:
            return
        descriptor = self._compressor.task_descriptor
        if id(descriptor.model) in self._wrapped:
            return
        generate = descriptor.model.generate

        def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            started = time.perf_counter()
            try:
                return generate(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        descriptor.model.generate = timed
        self._wrapped.add(id(descriptor.model))


def measure(compressor, text: str, question: str | None, repeats: int) -> dict[str, float]:
    """Median wall time, model time and overhead share over ``repeats`` runs (after one warm-up)."""
    clock = ModelClock(compressor)
    compressor.compress(text, question=question, rate=0.2)
    clock.watch_ctd()
    totals, models = [], []
    for _ in range(repeats):
        before = clock.seconds
        started = time.perf_counter()
        compressor.compress(text, question=question, rate=0.2)
        totals.append(time.perf_counter() - started)
        models.append(clock.seconds - before)
    total, model = statistics.median(totals), statistics.median(models)
    return {"seconds": total, "model_seconds": model, "overhead_share": (total - model) / total,
            "end_to_end_over_model": total / model}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="tpc-mini")
    args = parser.parse_args()
    import torch  # lazy: loads torch

    from tpc_core import TPCCompressor  # lazy: loads torch

    compressor = TPCCompressor.from_pretrained(args.model)
    counter = compressor.token_counter
    text, question = build_prompt(counter, args.tokens)
    # Prompt-agnostic input as users send it: the question written inside the prompt (LongBench's multi-document
    # QA template), and a bare document with no request at all (the CTD must write one).
    templated = fill_template(QA_DEV_TEMPLATES["multi_doc_qa"], text, question)
    backbone = MiniLMForward(compressor.device, compressor.dtype)  # plain MiniLM: the compressor's device and dtype
    print(f"prompt: {counter(text)} tokens (MiniLM tokenizer; {counter(templated)} with the template); "
          f"torch threads: {torch.get_num_threads()}")
    print("| mode | s / prompt | model s | outside models | end-to-end / model | × prompt-aware | description from |")
    print("|---|---|---|---|---|---|---|")
    # Same tokens, nothing but forward passes; timed just before prompt-aware, the row it is compared with.
    floor = backbone.median_seconds(text, args.repeats)
    aware_seconds = None
    for mode, prompt, q in (("prompt-aware", text, question), ("prompt-agnostic, question in the prompt", templated,
                                                                None),
                            ("prompt-agnostic, bare document", text, None)):
        row = measure(compressor, prompt, q, args.repeats)
        aware_seconds = aware_seconds or row["seconds"]
        source = compressor.compress(prompt, question=q, rate=0.2).task_source
        print(f"| {mode} | {row['seconds']:.2f} | {row['model_seconds']:.2f} | {row['overhead_share']:.1%} | "
              f"{row['end_to_end_over_model']:.3f} | {row['seconds'] / aware_seconds:.2f} | {source} |")
    print(f"| MiniLM forward floor | {floor:.2f} | {floor:.2f} | — | — | {floor / aware_seconds:.2f} | — |")
    ratio = aware_seconds / floor
    print(f"{args.model} prompt-aware / MiniLM forward floor: {ratio:.2f}× "
          f"({'within' if ratio <= FLOOR_LIMIT else 'over'} the {FLOOR_LIMIT:.2f}× limit)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
