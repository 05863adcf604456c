"""Sentence labels from human-written summaries: ROUGE-1/2 recall, the greedy ROUGE oracle, soft gains.

``python -m training.salience.labels --out runs/salience/labels.jsonl.gz --rate 0.2`` labels every document set
of ``summ_train`` (see :mod:`training.salience.data`): its sentences (the library's splitter), their MiniLM
token counts, the greedy oracle under ``floor(rate x document tokens)`` and two soft labels per sentence. A
manifest (input sha256, settings, per-dataset oracle ROUGE) is written beside the labels. Re-running the
command resumes: ids already in the output are skipped, and a line torn by a killed run is dropped first.

ROUGE here: lower-cased ``\\w+`` word tokens, clipped n-gram counts (each reference n-gram counts at most as
often as the candidate has it). Recall = clipped overlap / the reference's n-grams. The benchmark's
:func:`evaluation.metrics.rouge_n_recall` tokenises with ``[a-z0-9]+`` instead; the two differ only on
underscores and non-ASCII letters.

The oracle (the classic greedy ROUGE oracle of extractive summarisation) repeatedly adds the sentence that most
raises ROUGE-1 + ROUGE-2 recall of the summary among those that still fit the budget, and stops when none
raises it. Bigrams are counted within sentences, so the order sentences are added in does not matter. Gains are
compared as exact integers (ties: the earlier sentence), so the choice is reproducible on any machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import re
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpc_core.engine.selection.budget import resolve_budget, top_k_within_budget
from training.common.cli import start_cli
from training.salience.data import (
    DEFAULT_LABELS,
    DEFAULT_SUMM_TRAIN,
    README_SHA256,
    Sentence,
    held_out_split,
    is_permissive,
    licence_of,
    minilm_counter,
    permissive_split,
    read_summ_rows,
    row_subset,
    sentence_spans,
    sha256_of,
)

__all__ = [
    "DocumentLabels",
    "greedy_oracle",
    "held_out_split",
    "label_document",
    "main",
    "marginal_gains",
    "ngram_counts",
    "permissive_split",
    "rouge_recall",
    "standalone_scores",
    "summarise_records",
    "word_tokens",
]

logger = logging.getLogger(__name__)
_WORD = re.compile(r"\w+")
Gram = tuple[str, ...]


def word_tokens(text: str) -> list[str]:
    """Lower-cased ``\\w+`` runs of ``text``.

    >>> word_tokens("The cat's 2 hats.")
    ['the', 'cat', 's', '2', 'hats']
    """
    return _WORD.findall(text.lower())


def ngram_counts(tokens: Sequence[str], n: int) -> Counter[Gram]:
    """Multiset of the ``n``-grams of ``tokens`` (empty when there are fewer than ``n``).

    Raises:
        ValueError: ``n`` below 1.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def rouge_recall(candidate: str, reference: str, n: int) -> float:
    """ROUGE-``n`` recall of ``reference`` by ``candidate``: clipped n-gram overlap / the reference's n-grams.

    Args:
        candidate: The text that should contain the reference's content (a compressed document).
        reference: The human summary.
        n: 1 for ROUGE-1, 2 for ROUGE-2.

    Returns:
        A value in [0, 1]; 0.0 when the reference has words but fewer than ``n`` of them.

    Raises:
        ValueError: ``n`` below 1, or a reference with no word token.

    Example:
        >>> rouge_recall("the cat sat", "the cat sat on the mat", 1)  # the, cat, sat of 6 words
        0.5
    """
    reference_tokens = word_tokens(reference)
    if not reference_tokens:
        raise ValueError("the reference has no word token: nothing to recall")
    reference_grams = ngram_counts(reference_tokens, n)
    total = sum(reference_grams.values())
    if total == 0:
        return 0.0
    return sum((ngram_counts(word_tokens(candidate), n) & reference_grams).values()) / total


class _Target:
    """A summary's unigrams and bigrams; ROUGE-1 + ROUGE-2 recall kept as integers over a common denominator.

    ``R1 + R2 = (o1 * t2 + o2 * t1) / (t1 * t2)`` for overlaps ``o`` and reference totals ``t``; a one-word
    summary has no bigram, so its score is ``o1 / t1``.
    """

    def __init__(self, summary: str) -> None:
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError("empty summary: a label needs a human summary to recall")
        tokens = word_tokens(summary)
        if not tokens:
            raise ValueError(f"the summary {summary[:40]!r} has no word token to recall")
        unigrams = len(tokens)
        bigrams = len(tokens) - 1
        self.reference = (ngram_counts(tokens, 1), ngram_counts(tokens, 2))
        self.weights = (bigrams, unigrams) if bigrams else (1, 0)
        self.scale = unigrams * bigrams if bigrams else unigrams

    def grams(self, sentence: str) -> tuple[Counter[Gram], Counter[Gram]]:
        """The sentence's unigrams and bigrams that occur in the summary (the others never score)."""
        tokens = word_tokens(sentence)
        return tuple(  # type: ignore[return-value]
            Counter({gram: count for gram, count in ngram_counts(tokens, n).items() if gram in reference})
            for n, reference in ((1, self.reference[0]), (2, self.reference[1]))
        )

    def gain(self, current: Sequence[Counter[Gram]], grams: Sequence[Counter[Gram]]) -> int:
        """Scaled rise of the score when ``grams`` join the clipped counts ``current``."""
        total = 0
        for reference, have, add, weight in zip(self.reference, current, grams, self.weights):
            if weight:
                total += weight * sum(max(0, min(reference[g], have[g] + c) - have[g]) for g, c in add.items())
        return total

    def loss(self, current: Sequence[Counter[Gram]], grams: Sequence[Counter[Gram]]) -> int:
        """Scaled fall of the score when ``grams`` (part of ``current``) leave it."""
        total = 0
        for reference, have, remove, weight in zip(self.reference, current, grams, self.weights):
            if weight:
                total += weight * sum(min(reference[g], have[g]) - min(reference[g], have[g] - c)
                                      for g, c in remove.items())
        return total


def _check_sentences(sentences: Sequence[str], counts: Sequence[int] | None = None) -> None:
    if isinstance(sentences, str):
        raise TypeError("sentences must be a list of strings, not one string")
    if not sentences:
        raise ValueError("empty document: no sentence to label")
    if counts is not None:
        if len(counts) != len(sentences):
            raise ValueError(f"{len(sentences)} sentences but {len(counts)} token counts")
        bad = [count for count in counts if isinstance(count, bool) or not isinstance(count, int) or count < 0]
        if bad:
            raise ValueError(f"token counts must be non-negative ints, got {bad[0]!r}")


def greedy_oracle(sentences: Sequence[str], summary: str, budget_tokens: int, counts: Sequence[int]) -> list[int]:
    """The greedy ROUGE oracle: sentences whose union best recalls ``summary`` within ``budget_tokens``.

    Repeatedly adds the sentence that most raises ROUGE-1 + ROUGE-2 recall of the summary, among the sentences
    whose count still fits the remaining budget; stops when no such sentence raises the score. Ties go to the
    earlier sentence.

    Args:
        sentences: The document's sentences, in order.
        summary: The human summary.
        budget_tokens: Most tokens the chosen sentences may hold together (at least 1).
        counts: Token count of each sentence.

    Returns:
        The chosen sentence indices, ascending.

    Raises:
        ValueError: An empty document or summary, a budget below 1, or counts that do not match the sentences.

    Example:
        >>> sentences = ["Cats purr.", "Dogs bark loudly.", "Cats purr and sleep."]
        >>> greedy_oracle(sentences, "cats purr and sleep", 4, [2, 3, 4])
        [2]
    """
    _check_sentences(sentences, counts)
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 1:
        raise ValueError(f"budget_tokens must be an int >= 1, got {budget_tokens!r}")
    target = _Target(summary)
    grams = [target.grams(sentence) for sentence in sentences]
    current: tuple[Counter[Gram], Counter[Gram]] = (Counter(), Counter())
    remaining = budget_tokens
    chosen = []
    candidates = [index for index in range(len(sentences)) if counts[index] <= budget_tokens]
    while candidates:
        best = -1
        best_gain = 0
        still = []
        for index in candidates:
            # Both filters are permanent: the room only shrinks, and a sentence's gain never grows as the set
            # grows (clipped counts are concave), so a sentence dropped here could never be chosen later.
            if counts[index] > remaining:
                continue
            gain = target.gain(current, grams[index])
            if gain <= 0:
                continue
            still.append(index)
            if gain > best_gain:
                best = index
                best_gain = gain
        if best < 0:
            break
        chosen.append(best)
        remaining -= counts[best]
        for reference_grams, added in zip(current, grams[best]):
            reference_grams.update(added)
        candidates = [index for index in still if index != best]
    return sorted(chosen)


def marginal_gains(sentences: Sequence[str], summary: str, selected: Sequence[int]) -> list[float]:
    """Each sentence's marginal ROUGE-1 + ROUGE-2 recall gain given the set ``selected`` (a soft label).

    A chosen sentence gets what the set loses without it; any other sentence what the set would gain with it.
    Both are in recall units (R1 + R2), so 0 means "adds nothing the set does not already have".

    Raises:
        ValueError: An empty document or summary, or an index out of range.

    Example:
        >>> marginal_gains(["a b", "a", "c"], "a b", [0])  # R1+R2 of "a b" is 2; "a" adds nothing; "c" nothing
        [2.0, 0.0, 0.0]
    """
    _check_sentences(sentences)
    wrong = [index for index in selected if not 0 <= index < len(sentences)]
    if wrong:
        raise ValueError(f"selected index {wrong[0]} is out of range for {len(sentences)} sentences")
    target = _Target(summary)
    grams = [target.grams(sentence) for sentence in sentences]
    current: tuple[Counter[Gram], Counter[Gram]] = (Counter(), Counter())
    for index in set(selected):
        for reference_grams, added in zip(current, grams[index]):
            reference_grams.update(added)
    members = set(selected)
    return [(target.loss(current, grams[index]) if index in members else target.gain(current, grams[index]))
            / target.scale for index in range(len(sentences))]  # fmt: skip


def _f1(overlap: int, candidate_total: int, reference_total: int) -> float:
    if overlap == 0:
        return 0.0
    precision = overlap / candidate_total
    recall = overlap / reference_total
    return 2 * precision * recall / (precision + recall)


def standalone_scores(sentences: Sequence[str], summary: str) -> list[float]:
    """Each sentence alone against the summary: ROUGE-1 F1 + ROUGE-2 F1 (a soft label independent of the set).

    F1 weighs recall by precision, so a long sentence does not score for its length alone.

    Raises:
        ValueError: An empty document or summary.

    Example:
        >>> [round(s, 3) for s in standalone_scores(["a b", "x y z"], "a b c")]  # "a b": R1 F1 0.8 + R2 F1 2/3
        [1.467, 0.0]
    """
    _check_sentences(sentences)
    target = _Target(summary)
    totals = [sum(target.reference[0].values()), sum(target.reference[1].values())]
    scores = []
    for sentence in sentences:
        tokens = word_tokens(sentence)
        score = 0.0
        for n, reference in ((1, target.reference[0]), (2, target.reference[1])):
            grams = ngram_counts(tokens, n)
            if totals[n - 1]:
                score += _f1(sum((grams & reference).values()), sum(grams.values()), totals[n - 1])
        scores.append(score)
    return scores


@dataclass(frozen=True)
class DocumentLabels:
    """Labels of one document set at one budget.

    Attributes:
        sentences: Each sentence's document index and character span.
        counts: MiniLM tokens of each sentence.
        budget: ``floor(rate x sum(counts))``.
        oracle: Indices chosen by :func:`greedy_oracle`, ascending.
        gains_marginal: :func:`marginal_gains` given the oracle set.
        gains_standalone: :func:`standalone_scores`.
        oracle_rouge1: ROUGE-1 recall of the summary by the oracle sentences joined by newlines.
        oracle_rouge2: The same for ROUGE-2.
        lead_rouge1: ROUGE-1 recall by the leading sentences that fit the budget (the engine's greedy rule).
        lead_rouge2: The same for ROUGE-2.
    """

    sentences: tuple[Sentence, ...]
    counts: tuple[int, ...]
    budget: int
    oracle: tuple[int, ...]
    gains_marginal: tuple[float, ...]
    gains_standalone: tuple[float, ...]
    oracle_rouge1: float
    oracle_rouge2: float
    lead_rouge1: float
    lead_rouge2: float


def label_document(documents: Sequence[str], summary: str, rate: float, *, splitter: str = "nupunkt",
                   counter: Any = None) -> DocumentLabels:  # fmt: skip
    """Split, count and label one document set at ``rate`` of its tokens.

    Args:
        documents: The source documents (one string each).
        summary: Their human summary.
        rate: Budget as a share of the documents' tokens, in (0, 1].
        splitter: A :func:`tpc_core.segmentation.get_splitter` name.
        counter: A token counter with ``count_many`` (default: :func:`training.salience.data.minilm_counter`).

    Raises:
        ValueError: Empty documents or summary, a rate outside (0, 1], or a budget of 0 tokens.
    """
    _Target(summary)  # a bad summary fails before any model loads
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
        raise ValueError(f"rate must be in (0, 1], got {rate!r}")

    sentences = sentence_spans(documents, splitter)
    texts = [documents[s.document][s.start : s.end] for s in sentences]
    counts = list((counter or minilm_counter()).count_many(texts))
    budget = resolve_budget(sum(counts), rate=rate)
    if budget < 1:
        raise ValueError(f"rate {rate} of {sum(counts)} tokens is a budget of 0 tokens: raise the rate")
    oracle = greedy_oracle(texts, summary, budget, counts)
    lead = top_k_within_budget([-float(index) for index in range(len(texts))], counts, budget)
    oracle_text, lead_text = ("\n".join(texts[index] for index in kept) for kept in (oracle, lead))
    return DocumentLabels(
        sentences=tuple(sentences), counts=tuple(counts), budget=budget, oracle=tuple(oracle),
        gains_marginal=tuple(marginal_gains(texts, summary, oracle)),
        gains_standalone=tuple(standalone_scores(texts, summary)),
        oracle_rouge1=rouge_recall(oracle_text, summary, 1), oracle_rouge2=rouge_recall(oracle_text, summary, 2),
        lead_rouge1=rouge_recall(lead_text, summary, 1), lead_rouge2=rouge_recall(lead_text, summary, 2),
    )  # fmt: skip


def label_record(row: Mapping[str, Any], rate: float, *, splitter: str = "nupunkt",
                 counter: Any = None) -> dict[str, Any]:
    """One output record for a summ_train row (no text: spans point into the row's ``documents``)."""
    started = time.perf_counter()
    try:
        labels = label_document(row["documents"], row["summary"], rate, splitter=splitter, counter=counter)
    except ValueError as error:
        raise ValueError(f"row {row['id']!r}: {error}") from error
    dataset = row["meta"]["dataset"]
    return {
        "id": row["id"], "dataset": dataset, "subset": row_subset(row), "licence": licence_of(dataset),
        "permissive": is_permissive(dataset), "rate": rate, "splitter": splitter,
        "spans": [[s.document, s.start, s.end] for s in labels.sentences], "counts": list(labels.counts),
        "document_tokens": sum(labels.counts), "budget": labels.budget, "oracle": list(labels.oracle),
        "oracle_tokens": sum(labels.counts[index] for index in labels.oracle),
        "gains_marginal": [round(value, 5) for value in labels.gains_marginal],
        "gains_standalone": [round(value, 5) for value in labels.gains_standalone],
        "oracle_rouge1": labels.oracle_rouge1, "oracle_rouge2": labels.oracle_rouge2,
        "lead_rouge1": labels.lead_rouge1, "lead_rouge2": labels.lead_rouge2,
        "seconds": round(time.perf_counter() - started, 4),
    }  # fmt: skip


# ------------------------------------------------------------------------------------------------ the CLI


def _read_labels(path: Path) -> list[dict[str, Any]]:
    """Records of a labels file; a torn tail (killed run) is cut off and the file rewritten without it."""
    if not path.exists():
        return []
    lines: list[str] = []
    torn = False
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                if not line.endswith("\n"):
                    torn = True
                    break
                json.loads(line)
                lines.append(line)
    except (EOFError, OSError, zlib.error, json.JSONDecodeError, UnicodeDecodeError):
        torn = True
    if torn:
        logger.warning("%s ends in a torn record (an interrupted run): keeping its %d whole records", path, len(lines))
        partial = path.with_name(path.name + ".repair")
        with gzip.open(partial, "wt", encoding="utf-8") as handle:
            handle.writelines(lines)
        partial.replace(path)
    return [json.loads(line) for line in lines]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def summarise_records(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per subset (and ``"all"``): documents, mean sentences / tokens / budget, oracle size, ROUGE, seconds."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["subset"], []).append(record)
    groups = dict(sorted(groups.items()))
    groups["all"] = list(records)
    table = {}
    for name, rows in groups.items():
        table[name] = {
            "documents": len(rows),
            "sentences": _mean([len(r["counts"]) for r in rows]),
            "document_tokens": _mean([r["document_tokens"] for r in rows]),
            "budget": _mean([r["budget"] for r in rows]),
            "oracle_sentences": _mean([len(r["oracle"]) for r in rows]),
            "oracle_budget_share": _mean([r["oracle_tokens"] / r["budget"] for r in rows]),
            "oracle_rouge1": _mean([r["oracle_rouge1"] for r in rows]),
            "oracle_rouge2": _mean([r["oracle_rouge2"] for r in rows]),
            "lead_rouge1": _mean([r["lead_rouge1"] for r in rows]),
            "lead_rouge2": _mean([r["lead_rouge2"] for r in rows]),
            "seconds_total": sum(r["seconds"] for r in rows),
        }
    return table


def summary_markdown(table: Mapping[str, Mapping[str, float]], rate: float) -> str:
    """The per-subset table as markdown."""
    lines = [
        f"| subset | docs | sentences | doc tokens | budget (rate {rate}) | oracle sentences | oracle tokens / budget "
        "| oracle R1 | oracle R2 | lead R1 | lead R2 | labelling s |",
        "|---|" + "---:|" * 11,
    ]
    for name, row in table.items():
        label = f"**{name}**" if name == "all" else name
        lines.append(
            f"| {label} | {row['documents']} | {row['sentences']:.0f} | {row['document_tokens']:,.0f} | "
            f"{row['budget']:,.0f} | {row['oracle_sentences']:.1f} | {row['oracle_budget_share']:.2f} | "
            f"{row['oracle_rouge1']:.3f} | {row['oracle_rouge2']:.3f} | {row['lead_rouge1']:.3f} | "
            f"{row['lead_rouge2']:.3f} | {row['seconds_total']:.0f} |"
        )
    return "\n".join(lines)


def _git_state() -> dict[str, Any]:
    """The checkout's commit, and whether this package's files differ from it (``None``s outside git)."""
    here = str(Path(__file__).resolve().parent)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=here)
        status = subprocess.run(["git", "status", "--porcelain", "--", "."], capture_output=True, text=True,
                                check=True, cwd=here)  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return {"code_commit": None, "code_modified": None}
    return {"code_commit": commit.stdout.strip(), "code_modified": bool(status.stdout.strip())}


def _evenly_spaced(rows: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    if limit is None or limit >= len(rows):
        return rows
    return [rows[index * len(rows) // limit] for index in range(limit)]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.salience.labels", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--input", type=Path, default=DEFAULT_SUMM_TRAIN, help="summ_train.jsonl(.gz)")
    parser.add_argument("--out", type=Path, default=DEFAULT_LABELS, help="labels (.jsonl.gz)")
    parser.add_argument("--rate", type=float, default=0.2, help="budget = floor(rate x document tokens)")
    parser.add_argument("--splitter", default="nupunkt", help="tpc_core.segmentation splitter name")
    parser.add_argument("--limit", type=int, default=None, help="label N rows spread evenly over the file")
    parser.add_argument("--log-every", type=int, default=100, help="progress line every N documents")
    args = parser.parse_args(argv)
    if not 0 < args.rate <= 1:
        parser.error(f"--rate must be in (0, 1], got {args.rate}")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if not args.out.name.endswith(".jsonl.gz"):
        parser.error("--out must end in .jsonl.gz")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Label summ_train (resumable); write the labels, a manifest and a markdown table beside them."""
    args = parse_args(argv)
    start_cli()
    stem = args.out.name.removesuffix(".jsonl.gz")
    manifest_path = args.out.with_name(stem + ".manifest.json")
    table_path = args.out.with_name(stem + ".summary.md")
    try:
        rows = _evenly_spaced(list(read_summ_rows(args.input)), args.limit)
        input_sha = sha256_of(args.input)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    settings = {"input_sha256": input_sha, "rate": args.rate, "splitter": args.splitter}
    manifest: dict[str, Any] = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    clash = {key: manifest[key] for key in settings if key in manifest and manifest[key] != settings[key]}
    if clash and args.out.exists():
        print(f"error: {args.out} was made with {clash}, not {settings}: pass another --out", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = {record["id"] for record in _read_labels(args.out)}
    todo = [row for row in rows if row["id"] not in done]
    logger.info("%d rows, %d already labelled, %d to do (rate %s, input sha256 %s)", len(rows),
                len(rows) - len(todo), len(todo), args.rate, input_sha[:16])  # fmt: skip
    counter = minilm_counter()
    started = time.perf_counter()
    by_subset = Counter(row_subset(row) for row in todo)
    with gzip.open(args.out, "at", encoding="utf-8") as handle:
        for position, row in enumerate(todo, 1):
            handle.write(json.dumps(label_record(row, args.rate, splitter=args.splitter, counter=counter)) + "\n")
            handle.flush()  # a killed run loses at most the record being written (repaired on resume)
            if position % args.log_every == 0 or position == len(todo):
                elapsed = time.perf_counter() - started
                logger.info("%d/%d labelled (%s), %.0f s, %.2f s/doc, about %.0f s left", position, len(todo),
                            row_subset(row), elapsed, elapsed / position,
                            elapsed / position * (len(todo) - position))
    wall = time.perf_counter() - started
    records = _read_labels(args.out)
    table = summarise_records(records)
    manifest.update(settings)
    manifest.update({
        "input": str(args.input), "input_sha256_matches_readme": input_sha == README_SHA256,
        "output": str(args.out), "records": len(records), "token_counter": "sentence-transformers/all-MiniLM-L6-v2 "
        "WordPiece (tpc_core.engine.tokens.resolve_token_counter; no special tokens, no truncation)",
        "budget": "floor(rate x sum of sentence tokens)", "rouge_tokens": r"lower-cased \w+",
        "oracle": "greedy ROUGE-1+2 recall, stops when no fitting sentence raises it",
        **_git_state(),
        "labelling_seconds_total": round(sum(record["seconds"] for record in records), 1),
        "runs": [*manifest.get("runs", []), {"finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                             "labelled": len(todo), "wall_seconds": round(wall, 1),
                                             "subsets": dict(by_subset),
                                             "command": "python -m training.salience.labels " + " ".join(
                                                 sys.argv[1:] if argv is None else argv)}],
        "per_subset": table,
    })  # fmt: skip
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    table_path.write_text(f"Oracle labels at rate {args.rate} ({len(records)} documents, {args.input.name} sha256 "
                          f"{input_sha[:16]}…)\n\n{summary_markdown(table, args.rate)}\n")  # fmt: skip
    print(table_path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
