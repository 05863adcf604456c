"""The HTML view of a result (tpc_core.engine.output.render), parsed back with the standard library's html.parser.

Most tests build CompressionResult values by hand: the renderer is a pure function of the result, so its
structure is tested without a model; one test renders a real compression of the shipped MiniLM, and the CLI's
``--html`` runs the real command.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tpc_core.engine.output.render import render_html
from tpc_core.engine.output.result import CompressionResult, SentenceRecord
from tpc_core.engine.values import TaskSource

ROOT = Path(__file__).resolve().parents[4]
VOID = {"meta", "br", "img", "link", "input", "hr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    @property
    def content(self) -> str:
        return "".join(self.text)


class Collector(HTMLParser):
    """Every element in document order, each with all the text inside it (character references decoded)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.open: list[Element] = []

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {name: value or "" for name, value in attrs})
        self.elements.append(element)
        if tag not in VOID:
            self.open.append(element)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1].tag == tag, f"</{tag}> closes <{self.open[-1].tag if self.open else None}>"
        self.open.pop()

    def handle_data(self, data):
        for element in self.open:
            element.text.append(data)


def parse(markup: str) -> list[Element]:
    collector = Collector()
    collector.feed(markup)
    collector.close()
    assert not collector.open, f"unclosed: {[e.tag for e in collector.open]}"
    return collector.elements


def with_class(elements: list[Element], name: str) -> list[Element]:
    return [e for e in elements if name in e.classes]


def result_of(documents: list[str], kept: list[list[bool]], scores: list[list[float | None]] | None = None, *,
              description: str | None = "Who signed it?", source: str | None = TaskSource.QUESTION,
              scored: bool = True) -> CompressionResult:
    """A result over ``documents`` whose sentences are their lines (the text between them is the newline)."""
    records = []
    for d, document in enumerate(documents):
        start = 0
        for i, line in enumerate(document.split("\n")):
            if line:
                score = scores[d][i] if scores is not None else None
                tokens = len(line.split())
                records.append(SentenceRecord(d, len([r for r in records if r.doc_index == d]), start,
                                              start + len(line), line, score, tokens, kept[d][i]))
            start += len(line) + 1
    kept_tokens = sum(r.tokens for r in records if r.kept)
    return CompressionResult(
        compressed_prompt="\n".join(r.text for r in records if r.kept), compressed_documents=[],
        origin_tokens=sum(r.tokens for r in records), compressed_tokens=kept_tokens, budget=kept_tokens + 1,
        task_description=description, sentences=records, task_source=source,
        document_origin_tokens=[sum(r.tokens for r in records if r.doc_index == d) for d in range(len(documents))],
        document_compressed_tokens=[sum(r.tokens for r in records if r.doc_index == d and r.kept)
                                    for d in range(len(documents))],
        scored=scored, documents=documents)


def alpha(element: Element) -> float:
    return float(re.search(r"rgba\([^)]*,\s*([0-9.]+)\)", element.attrs["style"]).group(1))


DOC = "The treaty was signed in 1648.\n\tIt ended the war & the <siege>.\nCrops failed \"twice\".\n"
KEPT = [[True, False, True, False]]
SCORES = [[0.61, 0.20, 0.35, None]]


def test_one_span_per_sentence_in_order_with_its_fate_score_and_tokens():
    result = result_of([DOC], KEPT, SCORES)
    spans = with_class(parse(render_html(result)), "tpc-s")
    assert [(int(s.attrs["data-doc"]), int(s.attrs["data-index"])) for s in spans] == \
        [(r.doc_index, r.index) for r in result.sentences]
    for span, record in zip(spans, result.sentences, strict=True):
        assert span.content == record.text
        assert ("tpc-kept" in span.classes, "tpc-dropped" in span.classes) == (record.kept, not record.kept)
        assert span.attrs["data-kept"] == ("true" if record.kept else "false")
        assert float(span.attrs["data-score"]) == record.score
        assert f"score {record.score:.3f}" in span.attrs["title"]
        assert f"{record.tokens} tokens" in span.attrs["title"] and span.attrs["data-tokens"] == str(record.tokens)


def test_the_document_text_comes_back_exactly_with_what_lies_between_sentences():
    documents = [DOC, "  leading blanks\n\n\nand a last line without newline", "\r\nwindows\r\nlines\r\n"]
    kept = [[True, False, True, False], [True, False, False, True], [False, True, True, False]]
    result = result_of(documents, kept)
    texts = with_class(parse(render_html(result)), "tpc-text")
    assert [t.content for t in texts] == documents
    assert "white-space: pre-wrap" in render_html(result)


def test_shading_follows_the_score_within_kept_and_within_dropped():
    scores = [[0.9, 0.1, 0.5, 0.3], [0.7, 0.2, 0.4]]
    result = result_of(["a\nb\nc\nd", "e\nf\ng"], [[True, False, True, False], [True, False, True]], scores)
    spans = with_class(parse(render_html(result)), "tpc-s")
    for fate in (True, False):
        shaded = sorted(((r.score, alpha(s)) for s, r in zip(spans, result.sentences) if r.kept == fate))
        alphas = [a for _, a in shaded]
        assert alphas == sorted(alphas) and len(set(alphas)) == len(alphas), shaded


def test_equal_scores_and_missing_scores_render_without_error():
    equal = result_of(["a\nb\nc"], [[True, False, True]], [[0.4, 0.4, 0.4]])
    spans = with_class(parse(render_html(equal)), "tpc-s")
    assert len({alpha(s) for s in spans if "tpc-kept" in s.classes}) == 1
    mixed = result_of(["a\nb"], [[True, False]], [[None, 0.3]])
    first, second = with_class(parse(render_html(mixed)), "tpc-s")
    assert "tpc-unscored" in first.classes and "data-score" not in first.attrs and "style" not in first.attrs
    assert float(second.attrs["data-score"]) == 0.3


def test_header_holds_description_source_counts_and_a_legend():
    result = result_of([DOC], KEPT, SCORES, description="When was the treaty signed?", source=TaskSource.GENERATED)
    elements = parse(render_html(result))
    [task] = with_class(elements, "tpc-task")
    [source] = with_class(elements, "tpc-source")
    [tokens] = with_class(elements, "tpc-tokens")
    assert task.content == "When was the treaty signed?"
    assert source.attrs["data-source"] == "generated" and source.content.startswith("generated")
    assert (tokens.attrs["data-origin"], tokens.attrs["data-compressed"], tokens.attrs["data-budget"]) == \
        (str(result.origin_tokens), str(result.compressed_tokens), str(result.budget))
    assert f"{result.origin_tokens} → {result.compressed_tokens} tokens (budget {result.budget})" in tokens.content
    assert f"ratio {result.ratio:.2f}x" in tokens.content and "kept 2 of 3 sentences" in tokens.content
    [legend] = with_class(elements, "tpc-legend")
    assert "kept" in legend.content and "dropped" in legend.content and "0.200" in legend.content


def test_prompt_and_description_are_escaped_never_markup():
    attack = '<script>alert(1)</script>\n"><img src=x onerror=alert(2)>\n</span></div>closing tags'
    result = result_of([attack], [[True, False, True]], [[0.5, 0.4, 0.3]],
                       description="<script>alert(3)</script>", source='x"><script>alert(4)</script>')
    markup = render_html(result, standalone=True)
    elements = parse(markup)
    assert not [e for e in elements if e.tag in {"script", "img", "iframe", "link"}]
    assert "<script" not in markup.lower() and "&lt;script&gt;alert(1)" in markup
    assert [t.content for t in with_class(elements, "tpc-text")] == [attack]
    assert with_class(elements, "tpc-task")[0].content == "<script>alert(3)</script>"
    assert with_class(elements, "tpc-source")[0].attrs["data-source"] == 'x"><script>alert(4)</script>'


def test_no_external_resources_and_styles_are_scoped():
    markup = render_html(result_of([DOC], KEPT, SCORES), standalone=True)
    elements = parse(markup)
    assert not [e for e in elements if {"src", "href"} & set(e.attrs)]
    assert "http" not in markup and "@import" not in markup and "url(" not in markup
    [style] = [e for e in elements if e.tag == "style" and ".tpc-result" in e.content]
    selectors = re.findall(r"(?m)^\s*([^@{}\s][^{}]*)\{", style.content)
    assert selectors and all(s.strip().startswith(".tpc-result") for s in selectors), selectors


def test_several_documents_are_labelled_one_alone_is_not():
    result = result_of(["a one\nb two", "c three", "d four\ne five"], [[True, False], [False], [True, True]],
                       [[0.3, 0.2], [0.1], [0.5, 0.4]])
    elements = parse(render_html(result))
    docs = [e for e in elements if e.tag == "section" and "tpc-doc" in e.classes]
    assert [d.attrs["data-doc"] for d in docs] == ["0", "1", "2"]
    labels = with_class(elements, "tpc-doc-label")
    assert [label.content.split(" · ")[0] for label in labels] == ["Document 1", "Document 2", "Document 3"]
    assert f"{result.document_origin_tokens[2]} → {result.document_compressed_tokens[2]} tokens" in labels[2].content
    two = parse(render_html(result_of(["a", "b"], [[True], [False]], [[0.2], [0.1]])))
    assert [label.content.split(" · ")[0] for label in with_class(two, "tpc-doc-label")] == \
        ["Document 1", "Document 2"]
    single = parse(render_html(result_of([DOC], KEPT, SCORES)))
    assert not with_class(single, "tpc-doc-label") and len(with_class(single, "tpc-doc")) == 1


def test_an_unscored_result_shows_everything_kept_without_shading():
    result = result_of([DOC], [[True] * 4], None, description=None, source=None, scored=False)
    elements = parse(render_html(result))
    spans = with_class(elements, "tpc-s")
    assert len(spans) == 3 and all({"tpc-kept", "tpc-unscored"} <= s.classes for s in spans)
    assert not [s for s in spans if "style" in s.attrs or "data-score" in s.attrs]
    assert "nothing was scored" in with_class(elements, "tpc-task")[0].content
    assert "not scored" in with_class(elements, "tpc-legend")[0].content


@pytest.mark.parametrize("documents", [[], [""], ["", ""]])
def test_an_empty_result_renders(documents):
    result = CompressionResult(compressed_prompt="", compressed_documents=["" for _ in documents], origin_tokens=0,
                               compressed_tokens=0, budget=0, task_description=None, documents=documents)
    for markup in (render_html(result), render_html(result, standalone=True)):
        elements = parse(markup)
        assert not with_class(elements, "tpc-s") and with_class(elements, "tpc-empty")
        assert [t.content for t in with_class(elements, "tpc-text")] == documents
        assert "ratio 1.00x" in with_class(elements, "tpc-tokens")[0].content


def test_nothing_kept_reads_all_removed():
    result = result_of(["a\nb"], [[False, False]], [[0.2, 0.1]])
    result = replace(result, compressed_tokens=0)
    assert "all removed" in with_class(parse(render_html(result)), "tpc-tokens")[0].content


def test_a_result_without_its_documents_lays_the_sentences_out():
    full = result_of(["one\ntwo", "three"], [[True, False], [True]], [[0.5, 0.1], [0.3]])
    bare = replace(full, documents=[])
    elements = parse(render_html(bare))
    assert [s.content for s in with_class(elements, "tpc-s")] == ["one", "two", "three"]
    assert [t.content for t in with_class(elements, "tpc-text")] == ["one two", "three"]
    assert "does not hold its input text" in with_class(elements, "tpc-note")[0].content


def test_result_methods_delegate_and_standalone_is_a_page():
    result = result_of([DOC], KEPT, SCORES)
    assert result._repr_html_() == result.to_html() == render_html(result)
    page = result.to_html(standalone=True)
    assert page.startswith("<!doctype html>") and page.count(result.to_html()) == 1
    elements = parse(page)
    assert any(e.tag == "meta" and e.attrs.get("charset") == "utf-8" for e in elements)
    assert [e.content for e in elements if e.tag == "title"] == ["TPC compression: what was kept"]


def test_render_does_not_import_torch():
    code = "import sys, tpc_core.engine.output.render, tpc_core.engine.output.result; assert 'torch' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_a_real_compression_renders(tpc_mini):
    text = (ROOT / "examples" / "data" / "declaration_of_independence.txt").read_text(encoding="utf-8")
    documents = text.split("\n\n")[:3]
    question = "Which unalienable rights does the Declaration name?"
    result = tpc_mini.compress(documents, question=question, rate=0.3)
    assert result.scored and any(not s.kept for s in result.sentences)
    elements = parse(result._repr_html_())
    spans = with_class(elements, "tpc-s")
    assert [s.content for s in spans] == [r.text for r in result.sentences]
    assert [s.attrs["data-kept"] == "true" for s in spans] == [r.kept for r in result.sentences]
    assert [float(s.attrs["data-score"]) for s in spans] == [r.score for r in result.sentences]
    assert [t.content for t in with_class(elements, "tpc-text")] == documents
    assert with_class(elements, "tpc-task")[0].content == question
    assert with_class(elements, "tpc-source")[0].attrs["data-source"] == "question"
    kept_text = "".join(s.content for s in spans if s.attrs["data-kept"] == "true")
    assert "Life, Liberty and the pursuit of Happiness" in kept_text


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "tpc_core", *args], input=stdin, capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


@pytest.mark.slow
def test_cli_html_writes_the_page_beside_the_normal_output(tmp_path):
    path, page = tmp_path / "doc.txt", tmp_path / "view.html"
    text = "The Eiffel Tower is in Paris. It was finished in 1889. Bananas are <yellow>. The Wall is in China."
    path.write_text(text, encoding="utf-8")
    done = run_cli("compress", str(path), "--question", "When was the Eiffel Tower finished?",
                   "--target-tokens", "16", "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert "It was finished in 1889." in done.stdout and f"written to {page}" in done.stderr
    markup = page.read_text(encoding="utf-8")
    assert markup.startswith("<!doctype html>") and "&lt;yellow&gt;" in markup
    elements = parse(markup)
    assert [t.content for t in with_class(elements, "tpc-text")] == [text]
    kept = [s.content for s in with_class(elements, "tpc-kept")]
    assert "It was finished in 1889." in kept and "Bananas are <yellow>." not in kept


def test_cli_html_path_errors_before_any_model_loads(tmp_path, monkeypatch, capsys):
    from tpc_core import cli

    def no_model(*args, **kwargs):
        raise AssertionError("the model was loaded before the --html path was checked")

    monkeypatch.setattr("tpc_core.compressor.TPCCompressor.from_pretrained", no_model)
    path = tmp_path / "doc.txt"
    path.write_text("Some text. More text.", encoding="utf-8")
    missing = tmp_path / "no_such_dir" / "out.html"
    assert cli.main(["compress", str(path), "--html", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"the directory {missing.parent} does not exist" in err
    assert cli.main(["compress", str(path), "--html", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    usage = run_cli("compress", "--help")
    assert "--html OUT.html" in usage.stdout and "standalone HTML page" in usage.stdout
