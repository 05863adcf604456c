"""HTML view of a :class:`~tpc_core.engine.output.result.CompressionResult`: the prompt as sent, what was kept, and why.

Users tune a compressor by looking at what it kept. :func:`render_html` shows every input document verbatim,
with the text between sentences preserved, kept sentences highlighted, dropped ones dimmed, and each sentence
shaded by its score relative to the others in the same result. It is a pure function of the result: no model,
no torch, no external resources (no CDN, no JavaScript), so it works offline, in a notebook
(``CompressionResult._repr_html_``) and as a standalone page (``tpc compress FILE --html OUT.html``).

Everything that comes from the prompt or the task description is escaped: a prompt is untrusted input.

The view reads a result through a small protocol (:class:`ShownResult`) and its sentences as
:class:`~tpc_core.engine.output.sentence.SentenceRecord` values, so it never imports ``result``: ``result`` imports it,
never the other way round.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tpc_core.engine.output.sentence import SentenceRecord

__all__ = ["ShownResult", "render_html"]


class ShownResult(Protocol):
    """What the view reads of a result (:class:`tpc_core.engine.output.result.CompressionResult` is one); it writes
    nothing."""

    @property
    def documents(self) -> Sequence[str]: ...

    @property
    def sentences(self) -> Sequence[SentenceRecord]: ...

    @property
    def scored(self) -> bool: ...

    @property
    def task_description(self) -> str | None: ...

    @property
    def task_source(self) -> object: ...

    @property
    def origin_tokens(self) -> int: ...

    @property
    def compressed_tokens(self) -> int: ...

    @property
    def budget(self) -> int: ...

    @property
    def ratio(self) -> float: ...

    @property
    def oversized_sentences(self) -> int: ...

    @property
    def document_origin_tokens(self) -> Sequence[int]: ...

    @property
    def document_compressed_tokens(self) -> Sequence[int]: ...


# A sentence and where it lies in the document shown (its own span, or where a rebuilt document put it).
_Placed = tuple[SentenceRecord, int, int]

# Backgrounds are translucent and text colour is inherited, so the same colours read on a notebook's light and
# dark themes; the class names are prefixed and every rule is scoped under .tpc-result so a notebook's CSS and
# ours leave each other alone.
_STYLE = """
.tpc-result { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.55;
  max-width: 72rem; }
.tpc-result .tpc-header { border: 1px solid rgba(127, 127, 127, 0.35); border-radius: 6px;
  padding: 0.6rem 0.8rem; margin-bottom: 0.8rem; background: rgba(127, 127, 127, 0.06); }
.tpc-result .tpc-title { font-weight: 600; font-size: 1.05em; margin-bottom: 0.35rem; }
.tpc-result .tpc-meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 0.8rem;
  margin: 0 0 0.5rem 0; }
.tpc-result .tpc-meta dt { font-weight: 600; opacity: 0.75; }
.tpc-result .tpc-meta dd { margin: 0; }
.tpc-result .tpc-task { font-style: italic; }
.tpc-result .tpc-none { opacity: 0.7; }
.tpc-result .tpc-legend { display: flex; flex-wrap: wrap; gap: 0.4rem 1.1rem; font-size: 0.88em;
  opacity: 0.9; }
.tpc-result .tpc-swatch { padding: 0 1.6em 0 0.35em; border-radius: 3px; }
.tpc-result .tpc-doc { margin: 0 0 0.9rem 0; }
.tpc-result .tpc-doc-label { font-weight: 600; font-size: 0.88em; opacity: 0.75;
  border-bottom: 1px solid rgba(127, 127, 127, 0.35); margin-bottom: 0.3rem; padding-bottom: 0.1rem; }
.tpc-result .tpc-text { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.97em; }
.tpc-result .tpc-s { border-radius: 3px; padding: 0.05em 0; -webkit-box-decoration-break: clone;
  box-decoration-break: clone; }
.tpc-result .tpc-kept { border-bottom: 2px solid rgba(217, 119, 6, 0.85); }
.tpc-result .tpc-kept.tpc-unscored { border-bottom-color: rgba(127, 127, 127, 0.45); }
.tpc-result .tpc-dropped { opacity: 0.55; }
@supports (color: color-mix(in srgb, currentColor 50%, transparent)) {
  .tpc-result .tpc-dropped { opacity: 1; color: color-mix(in srgb, currentColor 52%, transparent); }
}
.tpc-result .tpc-note { font-size: 0.88em; opacity: 0.75; margin: 0.3rem 0; }
"""

# Kept sentences are amber, dropped ones slate; a score sets only the alpha, between these bounds, so the
# weakest kept sentence is still visibly highlighted and the strongest does not drown its text. Dropped text is
# dimmed through its colour (not opacity) where the browser can, so their shading stays as visible as the kept.
_KEPT_RGB = "255, 176, 0"
_DROPPED_RGB = "110, 130, 170"
_ALPHA = {True: (0.16, 0.7), False: (0.06, 0.5)}

# Words for people, keyed by tpc_core.engine.values.TaskSource's values (this module stays free of torch, which task
# imports).
_SOURCE_NOTES = {
    "question": "given by the caller",
    "extracted": "the prompt's own request sentences",
    "matched": "prompt sentences the task descriptor's text restates",
    "generated": "written by the task descriptor (CTD)",
    "fallback": "the checkpoint's neutral description (the CTD's text was not grounded in the prompt)",
    "coverage": "no description: coverage alone selected",
}


@dataclass(frozen=True)
class _ScoreRange:
    """The lowest and highest finite score of a result (``None`` when nothing was scored)."""

    low: float | None
    high: float | None

    def share(self, score: float | None) -> float | None:
        """Where ``score`` lies in the range, in [0, 1]; 0.5 when every score is equal (no division by zero)."""
        if score is None or self.low is None or self.high is None or not math.isfinite(score):
            return None
        if self.high <= self.low:
            return 0.5
        return min(1.0, max(0.0, (score - self.low) / (self.high - self.low)))


def _score_range(sentences: Sequence[SentenceRecord]) -> _ScoreRange:
    scores = [s.score for s in sentences if s.score is not None and math.isfinite(s.score)]
    return _ScoreRange(min(scores), max(scores)) if scores else _ScoreRange(None, None)


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _sentence_html(record: SentenceRecord, text: str, scores: _ScoreRange, scored: bool) -> str:
    """One sentence as a ``<span>``: class, data attributes, tooltip and score shading."""
    # An unscored result kept everything as given (empty input, or the budget covered it): show it as kept.
    kept = record.kept or not scored
    share = scores.share(record.score) if scored else None
    classes = ["tpc-s", "tpc-kept" if kept else "tpc-dropped"]
    attributes = [f'data-doc="{record.doc_index}"', f'data-index="{record.index}"',
                  f'data-kept="{"true" if kept else "false"}"', f'data-tokens="{record.tokens}"']
    tooltip = [f"{record.tokens} tokens", "kept" if kept else "dropped"]
    if share is None:
        classes.append("tpc-unscored")
    else:
        low, high = _ALPHA[kept]
        alpha = low + (high - low) * share
        rgb = _KEPT_RGB if kept else _DROPPED_RGB
        # repr keeps the exact float, so a reader of the HTML gets the score the engine computed.
        attributes.append(f'data-score="{record.score!r}"')
        attributes.append(f'style="background-color: rgba({rgb}, {alpha:.3f})"')
        tooltip.insert(0, f"score {record.score:.3f} ({share:.0%} of this result's range)")
    return (f'<span class="{" ".join(classes)}" {" ".join(attributes)} title="{_escape(" · ".join(tooltip))}">'
            f"{_escape(text)}</span>")


def _document_body(document: str, sentences: Sequence[_Placed], scores: _ScoreRange, scored: bool) -> str:
    """A document's text, verbatim: sentences as spans, the text between them as it was."""
    parts = []
    cursor = 0
    for record, record_start, record_end in sorted(sentences, key=lambda s: (s[1], s[2], s[0].index)):
        # Spans are clipped to the document and to what is already shown, so a malformed span can never
        # duplicate or lose text: the document's characters appear exactly once, in order.
        start = min(max(record_start, cursor), len(document))
        end = min(max(record_end, start), len(document))
        parts.append(_escape(document[cursor:start]))
        parts.append(_sentence_html(record, document[start:end], scores, scored))
        cursor = end
    parts.append(_escape(document[cursor:]))
    return "".join(parts)


def _documents(result: ShownResult) -> tuple[list[str], list[list[_Placed]], bool]:
    """Each document's text and sentences; rebuilt from the sentences where the result lacks the input.

    Returns:
        The documents, the sentences of each, and whether any document had to be rebuilt (a result made before
        ``documents`` existed, or from JSON without them).
    """
    count = max([len(result.documents), *(s.doc_index + 1 for s in result.sentences)], default=0)
    grouped: list[list[_Placed]] = [[] for _ in range(count)]
    for record in result.sentences:
        grouped[record.doc_index].append((record, record.start, record.end))
    documents = []
    rebuilt = False
    for doc_index, records in enumerate(grouped):
        if doc_index < len(result.documents):
            documents.append(result.documents[doc_index])
            continue
        # No input text: lay the sentences end to end, one space apart, and point their spans there.
        rebuilt = True
        text = ""
        placed = []
        for record, _, _ in sorted(records, key=lambda s: s[0].index):
            start = len(text) + (1 if text else 0)
            text = f"{text} {record.text}" if text else record.text
            placed.append((record, start, start + len(record.text)))
        documents.append(text)
        grouped[doc_index] = placed
    return documents, grouped, rebuilt


def _tokens_line(result: ShownResult) -> str:
    kept = sum(1 for s in result.sentences if s.kept)
    ratio = result.ratio
    ratio_text = "all removed" if math.isinf(ratio) else f"{ratio:.2f}x"
    return (f'<dd class="tpc-tokens" data-origin="{result.origin_tokens}" '
            f'data-compressed="{result.compressed_tokens}" data-budget="{result.budget}">'
            f"{result.origin_tokens} → {result.compressed_tokens} tokens (budget {result.budget}) · "
            f"ratio {ratio_text} · kept {kept} of {len(result.sentences)} sentences</dd>")


def _header_html(result: ShownResult, scores: _ScoreRange) -> str:
    if result.task_description is not None:
        task = f'<dd class="tpc-task">{_escape(result.task_description)}</dd>'
    elif result.scored:
        task = '<dd class="tpc-task tpc-none">none</dd>'
    else:
        why = "the prompt is empty" if not result.sentences else "the budget covered the whole prompt"
        task = f'<dd class="tpc-task tpc-none">none: nothing was scored ({why})</dd>'
    if result.task_source is None:
        source = '<dd class="tpc-source tpc-none">—</dd>'
    else:
        value = str(result.task_source)
        note = _SOURCE_NOTES.get(value)
        shown = f"{value} — {note}" if note else value
        source = f'<dd class="tpc-source" data-source="{_escape(value)}">{_escape(shown)}</dd>'
    rows = [f"<dt>Task</dt>{task}", f"<dt>Source</dt>{source}", f"<dt>Tokens</dt>{_tokens_line(result)}"]
    if result.oversized_sentences:
        rows.append(f'<dt>Skipped</dt><dd class="tpc-oversized">{result.oversized_sentences} sentence(s) larger '
                    "than the whole budget</dd>")
    return (f'<header class="tpc-header"><div class="tpc-title">TPC compression</div>'
            f'<dl class="tpc-meta">{"".join(rows)}</dl>{_legend_html(scores)}</header>')


def _legend_html(scores: _ScoreRange) -> str:
    shaded = scores.low is not None and scores.high is not None
    swatches = []
    for kept, rgb, label, note in ((True, _KEPT_RGB, "kept", "in the compressed prompt"),
                                   (False, _DROPPED_RGB, "dropped", "dimmed")):
        low, high = _ALPHA[kept]
        # When scores exist, each swatch is its own low-to-high ramp: the shading the sentences below use.
        fill = (f"linear-gradient(to right, rgba({rgb}, {low}), rgba({rgb}, {high}))" if shaded
                else f"rgba({rgb}, {(low + high) / 2:.2f})")
        swatches.append(f'<span><span class="tpc-swatch tpc-{label}" style="background: {fill}">{label}</span> '
                        f"{note}</span>")
    if shaded:
        swatches.append(f"<span>shade = score, from {scores.low:.3f} (light) to {scores.high:.3f} (strong)</span>")
    else:
        swatches.append("<span>not scored: no shading</span>")
    swatches.append("<span>hover a sentence for its score</span>")
    return f'<div class="tpc-legend">{"".join(swatches)}</div>'


def _fragment(result: ShownResult) -> str:
    scores = _score_range(result.sentences) if result.scored else _ScoreRange(None, None)
    documents, grouped, rebuilt = _documents(result)
    parts = [f"<style>{_STYLE}</style>", '<div class="tpc-result">', _header_html(result, scores)]
    if rebuilt:
        parts.append('<p class="tpc-note">This result does not hold its input text: sentences are shown one '
                     "space apart, without the text between them.</p>")
    if not documents or not any(documents):
        parts.append('<p class="tpc-note tpc-empty">The prompt is empty: nothing to show.</p>')
    several = len(documents) > 1
    for doc_index, (document, records) in enumerate(zip(documents, grouped)):
        label = ""
        if several:
            origin = (result.document_origin_tokens[doc_index]
                      if doc_index < len(result.document_origin_tokens) else None)
            compressed = (result.document_compressed_tokens[doc_index]
                          if doc_index < len(result.document_compressed_tokens) else None)
            counts = f" · {origin} → {compressed} tokens" if origin is not None and compressed is not None else ""
            label = f'<div class="tpc-doc-label">Document {doc_index + 1}{counts}</div>'
        body = _document_body(document, records, scores, result.scored)
        parts.append(f'<section class="tpc-doc" data-doc="{doc_index}">{label}'
                     f'<div class="tpc-text">{body}</div></section>')
    parts.append("</div>")
    return "".join(parts)


def render_html(result: ShownResult, *, standalone: bool = False) -> str:
    """Render a compression result as HTML: the prompt as sent, kept sentences highlighted, dropped ones dimmed.

    Every document is shown in order with the text between sentences preserved (``white-space: pre-wrap``).
    Kept sentences are highlighted and dropped ones dimmed; each is shaded by its score, normalised to the
    lowest..highest score of this result so the differences are visible. Each sentence is a
    ``<span class="tpc-s tpc-kept|tpc-dropped">`` with a ``title`` tooltip (score, tokens) and
    ``data-doc``/``data-index``/``data-kept``/``data-tokens`` attributes, plus ``data-score`` when scored.
    An unscored result (empty input, or a budget that covered everything) shows every sentence as kept,
    without shading. All text from the prompt and the task description is escaped.

    Args:
        result: The result to show.
        standalone: Wrap the fragment in a complete UTF-8 ``<!doctype html>`` page with a ``<title>``
            (for a file); otherwise return a fragment for a notebook or another page.

    Returns:
        The HTML, self-contained: one scoped ``<style>``, no scripts, no external resources.

    Example:
        >>> r = compressor.compress(text, question="Who signed it?", rate=0.3)  # doctest: +SKIP
        >>> Path("kept.html").write_text(render_html(r, standalone=True), encoding="utf-8")  # doctest: +SKIP
    """
    fragment = _fragment(result)
    if not standalone:
        return fragment
    return ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="color-scheme" content="light dark">\n'
            "<title>TPC compression: what was kept</title>\n"
            "<style>body { margin: 1.5rem; }</style>\n"
            f"</head>\n<body>\n{fragment}\n</body>\n</html>\n")
