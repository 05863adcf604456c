"""Value objects returned by :class:`tpc_core.TPCCompressor`.

The field names ``compressed_prompt``, ``origin_tokens``, ``compressed_tokens`` and ``ratio`` follow the
convention LLMLingua users already know.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tpc_core.engine.output.sentence import SentenceRecord
from tpc_core.engine.values import Assembled

__all__ = ["COMPRESSION_STATUSES", "SentenceRecord", "CompressionResult", "to_result"]

#: What an index-time job does with a result (:attr:`CompressionResult.status`).
COMPRESSION_STATUSES = ("compressed", "unchanged", "kept_whole", "empty")


@dataclass(frozen=True)
class CompressionResult:
    """The outcome of one compression.

    Attributes:
        compressed_prompt: Kept sentences, verbatim and in their original order, re-joined with the
            original separators; documents joined by ``document_separator``.
        compressed_documents: The compressed text of each input document ("" when a document lost
            every sentence).
        origin_tokens: Token count of the input as sent (its documents joined by ``document_separator``).
        compressed_tokens: Token count of ``compressed_prompt`` (separators included), at most ``budget``.
        budget: The token budget the selection had to respect.
        task_description: The question used for scoring: the user's, the request sentences found in the
            prompt, or the description the CTD wrote (``None`` when nothing was scored).
        task_source: Where ``task_description`` came from, a :class:`tpc_core.engine.values.TaskSource` (it compares
            equal to its string): ``"question"`` (the caller's), ``"extracted"`` (the prompt's own request sentences, no
            generation), ``"matched"`` (the prompt sentences that the CTD's description restates, used as written,
            ``agnostic.match_share``; a written summary request keeps the coverage settings), ``"generated"`` (the CTD;
            such prompts are selected with the checkpoint's coverage settings), ``"fallback"`` (the CTD's text was not
            grounded in the prompt, so the checkpoint's neutral ``agnostic.fallback_description`` is used, with
            coverage) or ``"coverage"`` (no request written and no CTD: coverage alone selects); ``None`` when nothing
            was scored.
        sentences: Every sentence of the input with its score and whether it was kept.
        document_origin_tokens: Token count of each input document.
        document_compressed_tokens: Token count of each compressed document.
        oversized_sentences: Sentences larger than the whole budget, skipped (not shortened to fit); the engine
            also warns about them.
        truncated_sentences: Sentences longer than the splitter's ``max_sentence_chars`` (2,000 characters by
            default), which it cut at word boundaries into pieces scored and kept one by one, and of which the
            output keeps some pieces but not all: the output holds part of each such sentence (it may start or end
            mid-sentence). The engine also warns about them.
        scored: Whether the sentences were scored. ``False`` when no model ran: the input was blank, or the
            budget covered all of it (then every sentence is kept and ``task_description``/``task_source`` are
            ``None``).
        documents: The input documents, as given (what :meth:`to_html` shows around the sentences).
        cache_hits: Documents of this prompt found in the sentence cache (``cache=``): not split, counted or
            encoded again. 0 without a cache.
        cache_misses: Documents looked up in the cache and not found (or found damaged); those the model read are
            stored. 0 without a cache.
        request_sentences: How many sentences write the user's request (prompt-agnostic mode, where the prompt
            writes one): every one is kept verbatim, whatever the budget.
        over_budget: Tokens by which ``compressed_tokens`` exceeds ``budget``: only where the request alone is
            larger than the budget (the request wins, with a warning); 0 otherwise.
    """

    compressed_prompt: str
    compressed_documents: list[str]
    origin_tokens: int
    compressed_tokens: int
    budget: int
    task_description: str | None
    sentences: list[SentenceRecord] = field(default_factory=list)
    task_source: str | None = None
    document_origin_tokens: list[int] = field(default_factory=list)
    document_compressed_tokens: list[int] = field(default_factory=list)
    oversized_sentences: int = 0
    truncated_sentences: int = 0
    scored: bool = False
    documents: list[str] = field(default_factory=list, repr=False)
    cache_hits: int = 0
    cache_misses: int = 0
    request_sentences: int = 0
    over_budget: int = 0

    @property
    def ratio(self) -> float:
        """Compression ratio ``origin_tokens / compressed_tokens`` (``inf`` when nothing is kept)."""
        if self.compressed_tokens == 0:
            return float("inf") if self.origin_tokens else 1.0
        return self.origin_tokens / self.compressed_tokens

    @property
    def rate(self) -> float:
        """Kept fraction of tokens ``compressed_tokens / origin_tokens`` (1.0 for empty input)."""
        return self.compressed_tokens / self.origin_tokens if self.origin_tokens else 1.0

    @property
    def status(self) -> str:
        """What an index-time job (``tpc compress-corpus``, the document transformers) does with this result.

        ``"empty"``: the input is blank; ``"unchanged"``: nothing was removed (the budget covered the input, or
        every sentence was kept); ``"kept_whole"``: no sentence fits the budget, so the input is kept as it is
        (TPC does not shorten a sentence to fit, and an index never loses a row silently); ``"compressed"``.
        """
        if not self.sentences:
            return "empty"
        if not self.scored or self.compressed_documents == self.documents:
            return "unchanged"
        if not self.compressed_prompt:
            return "kept_whole"
        return "compressed"

    def kept_sentences(self, doc_index: int | None = None) -> list[SentenceRecord]:
        """The kept sentences, optionally of one document, in original order."""
        return [s for s in self.sentences if s.kept and (doc_index is None or s.doc_index == doc_index)]

    def document_score(self, doc_index: int) -> float | None:
        """Highest sentence score of a document (``None`` if it was not scored)."""
        scores = [s.score for s in self.sentences if s.doc_index == doc_index and s.score is not None]
        return max(scores) if scores else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict, with ``ratio`` and ``rate`` included; ``documents`` (the caller's own input,
        often large) is left out, and ``task_source`` is its string."""
        data = asdict(self)
        data.pop("documents", None)
        data["task_source"] = str(self.task_source) if self.task_source is not None else None
        data["ratio"] = self.ratio if self.compressed_tokens else None
        data["rate"] = self.rate
        return data

    def to_html(self, *, standalone: bool = False) -> str:
        """This result as HTML: the prompt as sent, kept sentences highlighted, dropped ones dimmed.

        See :func:`tpc_core.engine.output.render.render_html`.

        Args:
            standalone: A complete ``<!doctype html>`` page (for a file) instead of a fragment.
        """
        from tpc_core.engine.output.render import render_html  # lazily: most results are never shown

        return render_html(self, standalone=standalone)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: a result shown in a notebook renders itself."""
        return self.to_html()


def to_result(assembled: Assembled, separator: str) -> CompressionResult:
    """The public value: every sentence with its score and fate, the compressed prompt and its counts."""
    selected = assembled.selected
    joined = assembled.joined
    scored = selected.scored
    prompt = selected.scored.segmented
    records = []
    kept = [set(doc_kept) for doc_kept in joined.kept]
    for k, (d, i) in enumerate(prompt.flat):
        start, end = prompt.spans[d][i]
        records.append(SentenceRecord(d, i, start, end, prompt.documents[d][start:end],
                                      scored.scores[k] if scored.scores is not None else None,
                                      prompt.counts[d][i], i in kept[d]))
    return CompressionResult(
        compressed_prompt=joined.prompt(separator), compressed_documents=list(joined.texts),
        origin_tokens=prompt.origin_tokens if any(prompt.spans) else 0, compressed_tokens=joined.total,
        budget=prompt.budget, task_description=scored.task.description if scored.task is not None else None,
        task_source=scored.task.source if scored.task is not None else None, sentences=records,
        document_origin_tokens=list(prompt.document_tokens), document_compressed_tokens=list(joined.tokens),
        oversized_sentences=selected.oversized, truncated_sentences=_partly_kept(prompt.cut, kept),
        scored=scored.scores is not None, documents=list(prompt.documents),
        request_sentences=len(scored.task.request) if scored.task is not None else 0,
        over_budget=max(0, joined.total - prompt.budget))


def _partly_kept(cut: tuple[tuple[tuple[int, int], ...], ...], kept: list[set[int]]) -> int:
    """How many sentences the splitter cut into pieces keep some of their pieces but not all."""
    partly = 0
    for doc_cut, doc_kept in zip(cut, kept):
        for first, last in doc_cut:
            pieces = sum(index in doc_kept for index in range(first, last + 1))
            partly += 0 < pieces <= last - first
    return partly
