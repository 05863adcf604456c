"""Accuracy and speed of the sentence splitters in ``tpc_core.segmentation``.

Three measurements, for every backend that runs here, with soft-wrap joining on and off:

* **Crafted set**: tricky English (abbreviations, decimals, ellipses, URLs, e-mails, lists, code, markdown,
  quotes, hard-wrapped prose, titles), CJK without spaces and HTML-ish text, with gold sentences written
  by hand. Reports exact-span precision/recall/F1 (a predicted span counts only if both ends match a gold
  sentence) and the share of examples split exactly right.
* **qa_dev.jsonl** (real data): the share of gold ``supporting_sentences`` that come out as a union of
  whole spans (no span starts before a gold start and runs past it, same for the end: "intact"); the same
  where a span may run over punctuation only ("words": KV gold drops the trailing comma, some gold drops
  the final period); and the share that are exactly one span ("exact"). "wrapped" repeats this after
  hard-wrapping the prose sources (HotpotQA, NQ, meetings) at 80 columns, which is what soft-wrap joining
  is for.
* **Speed**: CPU milliseconds per 10k words on the first 150k words (~200k tokens) of the qa_dev contexts
  (best of three warm runs; CPU time because the machine is shared) and the wall time for all 150k words.

Run: ``python -m benchmarks.segmentation_accuracy [--data PATH]``.
"""

from __future__ import annotations

import argparse
import bisect
import json
import re
import textwrap
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from data_access.loaders import default_qa_dev_path
from tpc_core.segmentation import SPLITTER_NAMES, SentenceSplitter, Span, get_splitter

__all__ = [
    "CRAFTED",
    "Agreement",
    "Example",
    "RealData",
    "crafted_scores",
    "gold_agreement",
    "gold_spans",
    "load_real_data",
    "locate",
    "main",
]

DEFAULT_DATA = default_qa_dev_path()
SPEED_WORDS = 150_000
WRAP_WIDTH = 80
WRAPPED_SOURCES = ("hotpotqa", "nq_open", "BAMBOO/meetingqa")


@dataclass(frozen=True)
class Example:
    """One labelled text: ``sentences`` are its gold sentences, in order, copied verbatim from ``text``."""

    name: str
    text: str
    sentences: tuple[str, ...]


def _ex(name: str, text: str, *sentences: str) -> Example:
    return Example(name, text, sentences)


CRAFTED: tuple[Example, ...] = (
    _ex("titles", "Dr. Smith met Mr. Jones at 5 p.m. on Main St. in Springfield. They talked for an hour.",
        "Dr. Smith met Mr. Jones at 5 p.m. on Main St. in Springfield.", "They talked for an hour."),
    _ex("country abbrev", "The U.S. economy grew by 3.5% last year. The U.K. did not.",
        "The U.S. economy grew by 3.5% last year.", "The U.K. did not."),
    _ex("e.g. i.e.", "Use a tool, e.g. a hammer, i.e. something heavy. Then strike.",
        "Use a tool, e.g. a hammer, i.e. something heavy.", "Then strike."),
    _ex("decimals", "Pi is about 3.14159 and e is 2.718. Both are irrational.",
        "Pi is about 3.14159 and e is 2.718.", "Both are irrational."),
    _ex("ellipsis", "He paused... Then he spoke again. Wait... what?",
        "He paused...", "Then he spoke again.", "Wait... what?"),
    _ex("ellipsis lowercase", "I think... maybe we should go. Now.", "I think... maybe we should go.",
        "Now."),
    _ex("url", "Visit https://example.com/docs/v1.2/index.html for details. It has examples.",
        "Visit https://example.com/docs/v1.2/index.html for details.", "It has examples."),
    _ex("email", "Contact john.doe@example.org or jane@ex.co.uk today. We reply fast.",
        "Contact john.doe@example.org or jane@ex.co.uk today.", "We reply fast."),
    _ex("numbered list", "Steps:\n1. Install the package.\n2. Run the tests.\n3. Ship it.",
        "Steps:", "1. Install the package.", "2. Run the tests.", "3. Ship it."),
    _ex("bullets", "Features:\n- Fast. Very fast.\n- Small\n* Simple to use",
        "Features:", "- Fast.", "Very fast.", "- Small", "* Simple to use"),
    _ex("roman list", "i. first point\nii. second point\niii. third point",
        "i. first point", "ii. second point", "iii. third point"),
    _ex("code block",
        "Run this:\n\n```python\nx = compute(1.5)\nprint(x)  # prints e.g. 3.0\n```\n\n"
        "The output is 3.0. Done.",
        "Run this:", "```python", "x = compute(1.5)", "print(x)  # prints e.g. 3.0", "```",
        "The output is 3.0.", "Done."),
    _ex("unfenced code", "import os\nimport sys\nprint(os.getcwd())\nThis prints the directory.",
        "import os", "import sys", "print(os.getcwd())", "This prints the directory."),
    _ex("markdown headings",
        "# Introduction\nThis paper studies compression. We propose TPC.\n## Method\nWe train a model.",
        "# Introduction", "This paper studies compression.", "We propose TPC.", "## Method",
        "We train a model."),
    _ex("markdown table", "| Model | Acc. |\n|---|---|\n| TPC v1.0 | 91.2 |\nThe table shows results.",
        "| Model | Acc. |", "|---|---|", "| TPC v1.0 | 91.2 |", "The table shows results."),
    _ex("quotes", "\"Is it ready?\" she asked. \"Yes,\" he said. \"It is.\"",
        "\"Is it ready?\" she asked.", "\"Yes,\" he said.", "\"It is.\""),
    _ex("curly quotes", "He said, “We won.” Then he left.", "He said, “We won.”", "Then he left."),
    _ex("figure ref", "The model works (see Fig. 3). It is fast.", "The model works (see Fig. 3).",
        "It is fast."),
    _ex("parenthesised sentence", "He left. (He was tired.) We stayed.", "He left.", "(He was tired.)",
        "We stayed."),
    _ex("cjk", "今天天气很好。我们去公园吧！你呢？", "今天天气很好。", "我们去公园吧！", "你呢？"),
    _ex("japanese", "東京は日本の首都です。人口は多いです。", "東京は日本の首都です。", "人口は多いです。"),
    _ex("cjk quotes", "他说：“我明天来。”她点头。", "他说：“我明天来。”", "她点头。"),
    _ex("html paragraphs",
        "<P> A ZIP Code has five digits . ZIP + 4 adds four more . </P> <P> It began in 1963 . </P>",
        "<P> A ZIP Code has five digits .", "ZIP + 4 adds four more .", "</P> <P> It began in 1963 .",
        "</P>"),
    _ex("html list", "<Li> 1.1 Early history </Li> <Li> 1.2 ZIP + 4 </Li>",
        "<Li> 1.1 Early history </Li> <Li> 1.2 ZIP + 4 </Li>"),
    _ex("more titles", "Mrs. Brown and Prof. Green visited St. Louis. Gen. Lee was not there.",
        "Mrs. Brown and Prof. Green visited St. Louis.", "Gen. Lee was not there."),
    _ex("initials", "J. K. Rowling wrote Harry Potter. It sold well.", "J. K. Rowling wrote Harry Potter.",
        "It sold well."),
    _ex("years", "The population was 403 at the 2010 census. It grew in 2020.",
        "The population was 403 at the 2010 census.", "It grew in 2020."),
    _ex("exclamations", "Wow! That is great! Really?! Yes.", "Wow!", "That is great!", "Really?!", "Yes."),
    _ex("no punctuation", "this text has no punctuation at all and just keeps going",
        "this text has no punctuation at all and just keeps going"),
    _ex("hard-wrapped",
        "Compression reduces the cost of long prompts by removing\nsentences that are not needed to answer "
        "the\nquestion. It works well in practice.",
        "Compression reduces the cost of long prompts by removing\nsentences that are not needed to answer "
        "the\nquestion.", "It works well in practice."),
    _ex("hard-wrapped capital",
        "The study was conducted by a team of researchers from the\nUniversity of California and published "
        "last year. The\nresults were confirmed by Google researchers later.",
        "The study was conducted by a team of researchers from the\nUniversity of California and published "
        "last year.", "The\nresults were confirmed by Google researchers later."),
    _ex("wrapped abbreviation", "The method was first described by Smith et al.\nin 2019 and later extended.",
        "The method was first described by Smith et al.\nin 2019 and later extended."),
    _ex("title then paragraph",
        "Scott Derrickson\nScott Derrickson (born July 16, 1966) is an American director. He lives in Los "
        "Angeles, California.",
        "Scott Derrickson", "Scott Derrickson (born July 16, 1966) is an American director.",
        "He lives in Los Angeles, California."),
    _ex("plain heading", "Introduction\nLarge language models are expensive. Compression helps.",
        "Introduction", "Large language models are expensive.", "Compression helps."),
    _ex("meeting",
        "Mark Drakeford AM: I thank Mike Hedges for that question. With colleagues, I have chaired "
        "two summits.\n\nMike Hedges AM: Thank you.",
        "Mark Drakeford AM: I thank Mike Hedges for that question.",
        "With colleagues, I have chaired two summits.", "Mike Hedges AM: Thank you."),
    _ex("citations", "Prior work (Smith et al., 2021; Lee et al. 2020) studied this. We extend it.",
        "Prior work (Smith et al., 2021; Lee et al. 2020) studied this.", "We extend it."),
    _ex("abbrev ends sentence", "He moved to the U.S. He likes it.", "He moved to the U.S.", "He likes it."),
    _ex("etc", "We bought apples, pears, etc. The store was busy.", "We bought apples, pears, etc.",
        "The store was busy."),
    _ex("versions", "Install version 2.0.1 or later. Python 3.11 is required.",
        "Install version 2.0.1 or later.", "Python 3.11 is required."),
    _ex("money and time", "It costs $4.99 at 10 a.m. sharp. Prices rise at noon.",
        "It costs $4.99 at 10 a.m. sharp.", "Prices rise at noon."),
    _ex("question in quotes", "Did he say \"stop\"? I think so.", "Did he say \"stop\"?", "I think so."),
    _ex("json lines", "{\"a1\": \"b2\",\n \"c3\": \"d4\"}", "{\"a1\": \"b2\",", "\"c3\": \"d4\"}"),
    _ex("sections", "Section 3.2 describes the method. Section 4 reports results.",
        "Section 3.2 describes the method.", "Section 4 reports results."),
    _ex("crlf", "First line.\r\nSecond line here.\r\n\r\nThird.", "First line.", "Second line here.",
        "Third."),
    _ex("colon then lowercase", "The three colors are:\nred, green and blue.",
        "The three colors are:\nred, green and blue."),
    _ex("no. vol.", "No. 5 is the winner. Vol. 2 follows.", "No. 5 is the winner.", "Vol. 2 follows."),
    _ex("semicolon", "It rained; we stayed in. Next day was sunny.", "It rained; we stayed in.",
        "Next day was sunny."),
    _ex("legal", "Pursuant to Sec. 5(a) of the Act, the Co. must file. Failure results in fines.",
        "Pursuant to Sec. 5(a) of the Act, the Co. must file.", "Failure results in fines."),
    _ex("emoji", "I love it 😀! Do you?", "I love it 😀!", "Do you?"),
    _ex("ph.d.", "She has a Ph.D. in physics. Her thesis won awards.", "She has a Ph.D. in physics.",
        "Her thesis won awards."),
    _ex("p.m. ends sentence", "The meeting is at 3 p.m. Please be on time.", "The meeting is at 3 p.m.",
        "Please be on time."),
    _ex("pp.", "See pp. 10-12 for details. Then continue.", "See pp. 10-12 for details.", "Then continue."),
    _ex("score", "He scored 9.5/10. Amazing.", "He scored 9.5/10.", "Amazing."),
    _ex("file name", "The file is named report.final.v2.pdf and is large. Open it.",
        "The file is named report.final.v2.pdf and is large.", "Open it."),
    _ex("mr. and mrs.", "Mr. and Mrs. Smith arrived. They sat.", "Mr. and Mrs. Smith arrived.", "They sat."),
    _ex("corp. in parens", "In 2019 the company (Acme Corp.) grew. Sales doubled.",
        "In 2019 the company (Acme Corp.) grew.", "Sales doubled."),
    _ex("q and a", "Q: What is TPC? A: A compressor.", "Q: What is TPC?", "A: A compressor."),
    _ex("vs.", "The vote was 5 vs. 4. The bill passed.", "The vote was 5 vs. 4.", "The bill passed."),
    _ex("plain list lines",
        "Shopping list for the week\nTwo cups of flour\nOne cup of sugar\nThree fresh eggs",
        "Shopping list for the week", "Two cups of flour", "One cup of sugar", "Three fresh eggs"),
    _ex("verse",
        "The woods are lovely, dark and deep,\nBut I have promises to keep,\nAnd miles to go before I sleep.",
        "The woods are lovely, dark and deep,", "But I have promises to keep,",
        "And miles to go before I sleep."),
    _ex("wrapped title abbrev",
        "The first results of the trial were presented in the spring by Dr.\nSmith at the annual meeting in "
        "Boston.",
        "The first results of the trial were presented in the spring by Dr.\nSmith at the annual meeting in "
        "Boston."),
)


def gold_spans(example: Example) -> list[Span]:
    """Find each gold sentence in order; checks that the gold itself covers the whole text."""
    spans: list[Span] = []
    position = 0
    for sentence in example.sentences:
        start = example.text.index(sentence, position)
        if example.text[position:start].strip():
            raise ValueError(f"{example.name}: gold skips {example.text[position:start]!r}")
        spans.append((start, start + len(sentence)))
        position = start + len(sentence)
    if example.text[position:].strip():
        raise ValueError(f"{example.name}: gold misses the tail {example.text[position:]!r}")
    return spans


def crafted_scores(splitter: SentenceSplitter) -> tuple[float, float, float, float, list[str]]:
    """Exact-span precision, recall, F1, share of examples exactly right, and the names of the misses."""
    true_positive = predicted = gold_total = exact = 0
    misses: list[str] = []
    for example in CRAFTED:
        gold = set(gold_spans(example))
        found = set(splitter.spans(example.text))
        true_positive += len(gold & found)
        predicted += len(found)
        gold_total += len(gold)
        if gold == found:
            exact += 1
        else:
            misses.append(example.name)
    precision = true_positive / max(predicted, 1)
    recall = true_positive / max(gold_total, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-12)
    return precision, recall, f1, exact / len(CRAFTED), misses


def locate(sentence: str, text: str) -> Span | None:
    """Find ``sentence`` in ``text`` ignoring differences in whitespace (first occurrence)."""
    start = text.find(sentence)
    if start >= 0:
        return start, start + len(sentence)
    words = sentence.split()
    if not words:
        return None
    match = re.search(r"\s+".join(map(re.escape, words)), text)
    return match.span() if match else None


@dataclass(frozen=True)
class Agreement:
    """How a splitter's spans agree with gold sentences located in real contexts (shares in [0, 1])."""

    intact: float  # no span straddles the gold start or end: the gold is a union of whole spans
    intact_words: float  # same, but a span may run over punctuation only ("key": "value"<,>)
    exact: float  # the gold sentence is exactly one span
    located: int  # gold sentences found in their context (the others are skipped)


def gold_agreement(splitter: SentenceSplitter, samples: Iterable[tuple[str, Sequence[str]]]) -> Agreement:
    """Measure how often gold sentences survive segmentation whole."""
    intact = intact_words = exact = located = 0
    for context, sentences in samples:
        spans = splitter.spans(context)
        starts = [start for start, _ in spans]
        span_set = set(spans)
        for sentence in sentences:
            gold = locate(sentence.strip(), context)
            if gold is None:
                continue
            located += 1
            cuts = [_straddle(context, position, spans, starts) for position in gold]
            intact += not any(cuts)
            intact_words += not any(cut == "words" for cut in cuts)
            exact += gold in span_set
    share = max(located, 1)
    return Agreement(intact / share, intact_words / share, exact / share, located)


_WORD = re.compile(r"\w")


def _straddle(text: str, position: int, spans: Sequence[Span], starts: Sequence[int]) -> str | None:
    """How a span runs across the gold boundary ``position``: None, "punctuation" or "words"."""
    index = bisect.bisect_right(starts, position) - 1
    if index < 0 or not spans[index][0] < position < spans[index][1]:
        return None
    start, end = spans[index]
    if _WORD.search(text, start, position) and _WORD.search(text, position, end):
        return "words"
    return "punctuation"


def hard_wrap(text: str, width: int = WRAP_WIDTH) -> str:
    """Wrap every line of ``text`` at ``width`` columns, keeping existing line breaks."""
    return "\n".join(
        "\n".join(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)) or line
        for line in text.split("\n")
    )


def words_per_second_corpus(rows: Sequence[dict], words: int = SPEED_WORDS) -> str:
    """The first ``words`` words of the non-synthetic contexts, with their layout kept."""
    corpus = "\n\n".join(row["context"] for row in rows if not row["source"].startswith("kv"))
    cut = [match.end() for _, match in zip(range(words), re.finditer(r"\S+", corpus))][-1]
    return corpus[:cut]


def time_splitter(splitter: SentenceSplitter, corpus: str, repeats: int = 3) -> tuple[float, float]:
    """Best wall and best CPU seconds over ``repeats`` warm runs (CPU time is steadier when shared)."""
    splitter.spans(corpus[:10_000])  # warm up (model load, caches)
    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        wall = time.perf_counter()
        cpu = time.process_time()
        splitter.spans(corpus)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu


Samples = list[tuple[str, Sequence[str]]]  # (context, gold sentences)


@dataclass(frozen=True)
class RealData:
    """qa_dev prepared for the measurements."""

    samples: Samples
    wrapped: Samples  # the prose sources, hard-wrapped
    by_source: dict[str, Samples]
    speed_corpus: str


def load_real_data(path: Path) -> RealData:
    """Read ``qa_dev.jsonl`` and derive the wrapped set, the per-source groups and the speed corpus."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_source: dict[str, Samples] = {}
    for row in rows:
        group = row["source"].split()[0].split("_")[0]
        by_source.setdefault(group, []).append((row["context"], row["supporting_sentences"]))
    return RealData(
        samples=[(row["context"], row["supporting_sentences"]) for row in rows],
        wrapped=[(hard_wrap(row["context"]), row["supporting_sentences"]) for row in rows
                 if row["source"].startswith(WRAPPED_SOURCES)],
        by_source=by_source,
        speed_corpus=words_per_second_corpus(rows),
    )


HEADER = (f"{'splitter':<9}{'join':>5} | {'crafted P':>9}{'R':>6}{'F1':>6}{'ex.acc':>7} | "
          f"{'qa intact':>9}{'(words)':>8}{'exact':>6} | {'wrap intact':>11}{'exact':>6} | "
          f"{'cpu ms/10k w':>12}{'wall s/150k w':>14}")


def measure_row(name: str, join: bool, splitter: SentenceSplitter, data: RealData) -> str:
    """One line of the main table."""
    precision, recall, f1, exact_examples, _ = crafted_scores(splitter)
    qa = gold_agreement(splitter, data.samples)
    wrap = gold_agreement(splitter, data.wrapped)
    wall, cpu = time_splitter(splitter, data.speed_corpus)
    n_words = len(data.speed_corpus.split())
    return (f"{name:<9}{'on' if join else 'off':>5} | {precision:9.3f}{recall:6.3f}{f1:6.3f}"
            f"{exact_examples:7.3f} | {qa.intact:9.3f}{qa.intact_words:8.3f}{qa.exact:6.3f} | "
            f"{wrap.intact_words:11.3f}{wrap.exact:6.3f} | "
            f"{cpu * 1000 * 10_000 / n_words:12.1f}{wall:14.3f}")


def main(argv: Sequence[str] | None = None) -> None:
    """Print the accuracy and speed table, then intact shares by source and the crafted misses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="qa_dev.jsonl with supporting_sentences"
    )
    data = load_real_data(parser.parse_args(argv).data)
    located = gold_agreement(get_splitter("line"), data.samples).located
    print(f"crafted: {len(CRAFTED)} examples, {sum(len(e.sentences) for e in CRAFTED)} gold sentences | "
          f"qa_dev: {len(data.samples)} samples, {located} gold sentences located | wrapped: "
          f"{len(data.wrapped)} prose samples at {WRAP_WIDTH} cols | speed: "
          f"{len(data.speed_corpus.split())} words of qa_dev contexts")
    print(HEADER)
    available: dict[str, SentenceSplitter] = {}
    for name in SPLITTER_NAMES:
        for join in (True, False) if name != "line" else (False,):
            try:
                splitter = get_splitter(name, join_wrapped_lines=join)
            except RuntimeError as error:
                print(f"{name:<9} unavailable: {error}")
                break
            available.setdefault(name, splitter)
            print(measure_row(name, join, splitter, data))
    print("(wrap intact ignores spans that run over punctuation only, like qa intact (words))")

    print("\nqa intact (words) by source, join on:")
    print(f"{'splitter':<9}" + "".join(f"{group[-12:]:>13}" for group in data.by_source))
    for name, splitter in available.items():
        scores = [gold_agreement(splitter, samples).intact_words for samples in data.by_source.values()]
        print(f"{name:<9}" + "".join(f"{score:13.3f}" for score in scores))
    print("\ncrafted misses, join on:")
    for name, splitter in available.items():
        print(f"  {name}: {', '.join(crafted_scores(splitter)[4]) or '-'}")


if __name__ == "__main__":
    main()
