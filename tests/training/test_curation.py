"""Stage 1 (data curation): prompts, parsers, converters on the real train split, generators, the CLI."""

from __future__ import annotations

import json
import random
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal

import pytest

from training.common.config import from_dict, load_config, parse_override
from training.common.jsonl import read_jsonl
from training.curation.__main__ import main
from training.curation.config import CurationConfig
from training.curation.converters import locate_gold_spans, qa_row_to_ctd, qa_row_to_mcqr
from training.curation.ctd import (
    CTDRules,
    choose_template,
    clean_query,
    extract_template_candidates,
    fill_template,
    query_problem,
    template_problem,
)
from training.curation.generators import (
    CachedGenerator,
    GenerationError,
    LocalHFSettings,
    OpenAICompatibleGenerator,
    OpenAISettings,
)
from training.curation.mcqr import parse_mcqr_answer, parse_multihop_answer
from training.curation.prompts import PROMPT_1, PROMPT_2, PROMPT_3, render_prompt_2, render_prompt_3
from training.curation.sentences import sentences_of

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "qa_dev.jsonl"
PAPER = Path(__file__).resolve().parents[3] / "shared" / "paper" / "tpc-icml2025.tex"


def needs_data(test):
    """Reads ../shared/data: skipped without it, and marked for CI's run on a clone without it (.ci/run)."""
    return pytest.mark.shared_data(pytest.mark.skipif(not DATA.is_file(), reason="qa_dev.jsonl not available")(test))


# ------------------------------------------------------------------------------------------ prompts


def _paper_prompt(number: int) -> str:
    tex = PAPER.read_text(encoding="utf-8")
    body = tex.split(f"\\textbf{{Prompt {number}:}}\\\\", 1)[1].split("}}\n\\end{minipage}", 1)[0]
    body = body.replace("\\texttt{\\{text\\}}", "{text}").replace("\\texttt{\\{question\\}}", "{question}")
    body = body.replace("\\{", "{").replace("\\}", "}").replace("\\\\", "\n")
    return " ".join(body.split())


@pytest.mark.shared_data
@pytest.mark.skipif(not PAPER.is_file(), reason="paper source not available")
@pytest.mark.parametrize("number", [1, 2, 3])
def test_prompts_are_verbatim_from_the_paper(number: int) -> None:
    ours = {1: PROMPT_1, 2: PROMPT_2.format(), 3: PROMPT_3}[number]
    assert " ".join(ours.split()) == _paper_prompt(number)


def test_prompt_rendering_keeps_literal_placeholders_and_numbers_sentences() -> None:
    rendered = render_prompt_2("Some {odd} text.", "What is it?")
    assert "placeholders {text} and {question}" in rendered
    assert rendered.endswith("Text: Some {odd} text.\nQuestion: What is it?\nTemplates:")
    prompt3 = render_prompt_3(["A b.", "C d."])
    assert prompt3.endswith("Now, solve this example:\n[[1]] A b. [[2]] C d.\nQuestions:")


# ------------------------------------------------------------------------------------------ MCQR parser

TOY = """Question 1: Who is John married to?
Answer 1: John is married to Mary, as stated in [[1]].
Question 2: How many children does Mary have?
Answer 2: Mary has two children, as stated in [[3]].

Combining the questions to create a multi-hop question:
1. John is married to Mary, as stated in [[1]].
2. Mary has two children, as stated in [[3]].
Final question: How many children does John have?
Necessary sentences: [[1]], [[3]]"""

WELL_FORMED = [
    (TOY, "How many children does John have?", (0, 2)),
    ("**Final Question:** Who founded the firm that bought X?\n**Necessary sentences:** [[2]], [[4]]",
     "Who founded the firm that bought X?", (1, 3)),
    ("Final question: Who founded the firm that bought X?\nNecessary sentences: [2] and [5] (they name him)",
     "Who founded the firm that bought X?", (1, 4)),
    ("Final question: Who founded the firm that bought X?\nNecessary sentences: sentences 1 and 3, see above",
     "Who founded the firm that bought X?", (0, 2)),
    ("Final question: What happened after the war ended?\nNecessary sentences: 2-4", None, (1, 2, 3)),
    ("Final question: What happened after the war ended? Necessary sentences: [[1]], [[2]]", None, (0, 1)),
    ("Final question:\nWhat happened after the war ended?\n\nNecessary sentences:\n- [[1]]\n- [[5]]\n\nDone.",
     "What happened after the war ended?", (0, 4)),
    ("Necessary sentences: [[1]], [[3]]\nFinal question: How many children does John have?", None, (0, 2)),
    ("The final question is: Who looks after John's children?\nSupporting sentences are [[3]] and [[4]].",
     "Who looks after John's children?", (2, 3)),
    ("### Multi-hop question: Who looks after John's children?\nSentences needed: 3, 4", None, (2, 3)),
    ("Final question - Who looks after John's children?\nNecessary sentences (by number): [[3]] to [[5]]",
     None, (2, 3, 4)),
    ("Final question: Who looks after John's children? Answer: Jane.\nNecessary sentences: [[4]], [[3]], [[4]]",
     "Who looks after John's children?", (2, 3)),
    ("final question: summarise where John and Mary travel with their kids\nnecessary sentences: [[2]],[[3]]",
     "summarise where John and Mary travel with their kids", (1, 2)),
]


@pytest.mark.parametrize(("answer", "question", "positives"), WELL_FORMED)
def test_parser_reads_well_formed_variants(answer: str, question: str | None, positives: tuple[int, ...]) -> None:
    parsed = parse_multihop_answer(answer, 5)
    assert parsed.rejected == ()
    assert len(parsed.items) == 1
    if question is not None:
        assert parsed.items[0].question == question
    assert parsed.items[0].positives == positives


MALFORMED = [
    ("I am sorry, I cannot help with that.", "no_final_question"),
    ("", "no_final_question"),
    ("Question 1: Who? Answer 1: Mary [[1]].", "no_final_question"),
    ("Final question: How many children does John have?", "no_necessary_sentences"),
    ("Final question: How many children does John have?\nNecessary sentences: [[1]], [[9]]", "index_out_of_range"),
    ("Final question: How many children does John have?\nNecessary sentences: [[0]], [[2]]", "index_out_of_range"),
    ("Final question: How many children does John have?\nNecessary sentences: none of them", "no_positives"),
    ("Final question: What does [[2]] say about John?\nNecessary sentences: [[2]]", "question_cites_sentences"),
    ("Final question: What does sentence 2 say?\nNecessary sentences: [[2]]", "question_cites_sentences"),
    ("Final question:\n\nNecessary sentences: [[1]]", "empty_question"),
    ("Final question: Why?\nNecessary sentences: [[1]], [[2]]", "question_too_short"),
]


@pytest.mark.parametrize(("answer", "reason"), MALFORMED)
def test_parser_rejects_malformed_answers_with_a_reason(answer: str, reason: str) -> None:
    parsed = parse_multihop_answer(answer, 5)
    assert parsed.items == ()
    assert parsed.rejected == (reason,)


def test_parser_reads_several_blocks_and_enforces_min_positives() -> None:
    answer = (
        "Final question 1: Who is John's wife and where do they travel?\nNecessary sentences: [[1]], [[2]]\n\n"
        "Final question 2: Who looks after the children of John?\nNecessary sentences: [[4]]\n\n"
        "Final question 3: Who is John's wife and where do they travel?\nNecessary sentences: [[1]], [[2]]"
    )
    parsed = parse_multihop_answer(answer, 5, min_positives=2)
    assert [item.positives for item in parsed.items] == [(0, 1)]
    assert parsed.rejected == ("too_few_positives", "duplicate_question")


def test_negatives_are_sentences_cited_nowhere() -> None:
    sentences = [f"Sentence number {i}." for i in range(1, 11)]
    answer = TOY.replace("as stated in [[3]].", "as stated in [[3]]; also see sentence 7 and [[9]].")
    samples, rejected = parse_mcqr_answer(answer, sentences, max_negatives=4, rng=random.Random(0))
    assert rejected == []
    (sample,) = samples
    assert sample.positives == (0, 2)
    assert len(sample.negatives) == 4
    assert set(sample.negatives) <= {1, 3, 4, 5, 7, 9}  # 0-based; 0, 2, 6, 8 are cited
    again, _ = parse_mcqr_answer(answer, sentences, max_negatives=4, rng=random.Random(0))
    assert again == samples
    none_left, rejected = parse_mcqr_answer(TOY, ["a.", "b.", "c."][:3], max_negatives=4, rng=random.Random(0))
    assert none_left[0].negatives == (1,)
    all_cited, rejected = parse_mcqr_answer(TOY.replace("[[1]], [[3]]", "1-3"), ["a.", "b.", "c."],
                                            max_negatives=4, rng=random.Random(0))
    assert all_cited == [] and rejected == ["no_negatives"]


# ------------------------------------------------------------------------------------------ CTD validation


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Query: What drove the decline of the Hanseatic League?", "What drove the decline of the Hanseatic League?"),
        ('**Query:** "Summarize the main findings of the study."', "Summarize the main findings of the study."),
        ("1. Explain why the bridge collapsed.\n2. Another one.", "Explain why the bridge collapsed."),
        ("\n\n  List the key   dates in the text.  \n", "List the key dates in the text."),
    ],
)
def test_clean_query(raw: str, expected: str) -> None:
    assert clean_query(raw) == expected


def test_query_rules() -> None:
    rules = CTDRules(min_query_words=3, max_query_words=10)
    assert query_problem("What does the context say about tides?", rules) == "query_mentions_context"
    assert query_problem("Given these Contexts, list dates.", rules) == "query_mentions_context"
    assert query_problem("Contextual cues in tides?", rules) is None  # only the word itself is banned
    assert query_problem("Why?", rules) == "query_too_short"
    assert query_problem(" ".join(["word"] * 11), rules) == "query_too_long"
    assert query_problem("", rules) == "empty_query"
    assert query_problem("Fill {text} here please", rules) == "query_has_braces"


TEMPLATES_ANSWER = """Here are some templates:

**Template 1:**
```
Read the following article about tides carefully.
Article: {{ text }}
Using the article, answer: {question}
```

Template 2: "Given this passage: {text}\nPlease respond to: {question}"

3. Answer this question: {question}"""


def test_template_extraction_validation_and_filling() -> None:
    candidates = extract_template_candidates(TEMPLATES_ANSWER)
    assert candidates == [
        "Read the following article about tides carefully.\nArticle: {text}\nUsing the article, answer: {question}",
        "Given this passage: {text}\nPlease respond to: {question}",
    ]
    text = "The moon pulls the oceans toward it and this creates two bulges of water on opposite sides of Earth."
    rules = CTDRules()
    assert template_problem(candidates[0], text, rules) is None
    assert template_problem("Q: {question}", text, rules) == "template_missing_placeholders"
    assert template_problem("{text}\n{text}\n{question}", text, rules) == "template_repeats_text"
    leaky = "Note: the moon pulls the oceans toward it and this creates two bulges of water.\n{text}\n{question}"
    assert template_problem(leaky, text, rules) == "template_leaks_text"
    assert template_problem("x" * 2000 + "{text}{question}", text, rules) == "template_too_long"
    chosen, problem = choose_template(TEMPLATES_ANSWER, text, rules, random.Random(1))
    assert problem is None and chosen in candidates
    assert choose_template("no template here", text, rules, random.Random(1)) == (None, "template_missing_placeholders")
    filled = fill_template("T: {text}\nQ: {question}", "code {question} {x}", "why {text}?")
    assert filled == "T: code {question} {x}\nQ: why {text}?"


# ------------------------------------------------------------------------------------------ converters


@pytest.fixture(scope="module")
def qa_rows() -> list[dict]:
    if not DATA.is_file():
        pytest.skip("qa_dev.jsonl not available")
    return list(read_jsonl(DATA))


def _non_space(text: str, start: int, end: int) -> set[int]:
    return {i for i in range(start, end) if not text[i].isspace()}


@needs_data
def test_mcqr_converter_positives_contain_the_gold_sentences(qa_rows: list[dict]) -> None:
    train = [r for r in qa_rows if r["split"] == "train"]
    by_source: dict[str, dict] = {}
    for row in train:
        by_source.setdefault(row["source"], row)
    checked = 0
    for row in list(by_source.values()) + train[::15]:
        record, notes = qa_row_to_mcqr(row, rng=random.Random(0), max_negatives=8)
        assert record is not None, (row["id"], notes)
        context = row["context"]
        spans, sentences = sentences_of(context)
        assert record["sentences"] == sentences
        covered = set().union(*(_non_space(context, *spans[i]) for i in record["positives"]))
        for gold in row["supporting_sentences"]:
            for start, end in locate_gold_spans(context, gold):
                assert _non_space(context, start, end) <= covered, (row["id"], gold[:60])
                checked += 1
        # every positive really overlaps some gold sentence
        gold_chars = set().union(*(_non_space(context, s, e) for g in row["supporting_sentences"]
                                   for s, e in locate_gold_spans(context, g)))
        assert all(_non_space(context, *spans[i]) & gold_chars for i in record["positives"])
        assert not set(record["negatives"]) & set(record["positives"])
        assert 0 < len(record["negatives"]) <= 8
        answers = [a for a in row["answers"] if len(a) >= 4 and a.lower() not in {"yes", "no"}]
        for i in record["negatives"]:
            assert not any(a.lower() in sentences[i].lower() for a in answers)
    assert checked >= 20


@needs_data
def test_ctd_converter_and_dev_split_is_refused(qa_rows: list[dict]) -> None:
    mc = next(r for r in qa_rows if r["split"] == "train" and r["meta"].get("question_only"))
    record, template = qa_row_to_ctd(mc, rng=random.Random(3))
    assert record["task_description"].startswith(mc["meta"]["question_only"].strip())
    assert "\n" not in record["task_description"]
    for option in mc["meta"]["options"]:  # the options are part of what the prompt asks
        assert " ".join(str(option).split()) in record["task_description"]
    assert mc["context"] in record["prompt"] and mc["question"].strip() in record["prompt"]
    assert record["id"] == f"{mc['id']}:ctd" and template
    kv = next(r for r in qa_rows if r["split"] == "train" and r["task_type"] == "synthetic")
    kv_record, kv_template = qa_row_to_ctd(kv, rng=random.Random(3))
    assert kv_template == "lost_in_the_middle_kv"
    assert kv_record["task_description"].startswith('What is the value associated with the key "')
    dev = next(r for r in qa_rows if r["split"] == "dev")
    with pytest.raises(ValueError, match="only the 'train' split"):
        qa_row_to_ctd(dev, rng=random.Random(0))
    with pytest.raises(ValueError, match="only the 'train' split"):
        qa_row_to_mcqr(dev, rng=random.Random(0), max_negatives=4)


@needs_data
def test_cli_converts_train_split_and_resumes(tmp_path: Path, qa_rows: list[dict]) -> None:
    out = tmp_path / "run"
    args = ["--config", "training/configs/curation_qa_train.yaml", "--set", f"output_dir={out}",
            "--set", "max_records=25"]
    assert main(args) == 0
    ctd = list(read_jsonl(out / "ctd.jsonl"))
    mcqr = list(read_jsonl(out / "mcqr.jsonl"))
    stats = json.loads((out / "stats.json").read_text())
    assert stats["tasks"]["ctd"]["inputs"] == 25
    assert len(ctd) == stats["tasks"]["ctd"]["kept"] and len(mcqr) == stats["tasks"]["mcqr"]["kept"]
    assert set(ctd[0]) == {"id", "prompt", "task_description", "source"}
    assert set(mcqr[0]) == {"id", "question", "sentences", "positives", "negatives", "source"}
    dev_ids = {r["id"] for r in qa_rows if r["split"] != "train"}
    assert not {r["id"].split(":")[0] for r in ctd + mcqr} & dev_ids
    assert main(args + ["--set", "max_records=30"]) == 0  # resume: only 5 new inputs
    assert len(list(read_jsonl(out / "ctd.jsonl"))) == len(ctd) + json.loads(
        (out / "stats.json").read_text())["tasks"]["ctd"]["kept"] - stats["tasks"]["ctd"]["kept"]
    assert json.loads((out / "stats.json").read_text())["tasks"]["ctd"]["inputs"] == 30
    with pytest.raises(ValueError, match="different settings.*seed"):
        from training.curation.pipeline import run_curation

        run_curation(load_config("training/configs/curation_qa_train.yaml", CurationConfig,
                                 [f"output_dir={out}", "seed=99"]))


# ------------------------------------------------------------------------------------------ config


@dataclass
class _Inner:
    name: str = "x"
    rate: float = 0.5


@dataclass
class _Stage:
    output_dir: str
    steps: int = 3
    mode: Literal["fast", "slow"] = "fast"
    tags: list[str] = field(default_factory=list)
    limit: int | None = None
    inner: _Inner = field(default_factory=_Inner)


def test_load_config_generic(tmp_path: Path) -> None:
    path = tmp_path / "stage.yaml"
    path.write_text("output_dir: out\nsteps: 5\ntags: [a, b]\ninner:\n  rate: 1\n")
    cfg = load_config(path, _Stage, overrides=["inner.name=y", "limit=null", "mode=slow"])
    assert cfg == _Stage("out", 5, "slow", ["a", "b"], None, _Inner("y", 1.0))
    json_path = tmp_path / "stage.json"
    json_path.write_text(json.dumps({"output_dir": "o", "limit": 4}))
    assert load_config(json_path, _Stage).limit == 4
    assert parse_override("a.b=[1, 2]") == (["a", "b"], [1, 2])


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        ("output_dir: o\nstep: 3\n", [], "unknown key 'step'"),
        ("output_dir: o\ninner:\n  nme: z\n", [], "unknown key 'inner.nme'"),
        ("output_dir: o\nsteps: three\n", [], "'steps': expected an integer, got 'three'"),
        ("output_dir: o\nmode: medium\n", [], "'mode': expected one of 'fast', 'slow'"),
        ("output_dir: o\ntags: a\n", [], "'tags': expected a list"),
        ("steps: 1\n", [], "missing required key 'output_dir'"),
        ("output_dir: o\n", ["steps=true"], "'steps': expected an integer, got True"),
        ("output_dir: o\n", ["nonsense"], "--set expects key=value"),
        ("- a\n- b\n", [], "must be a mapping"),
        ("output_dir: [unclosed\n", [], "cannot parse config"),
    ],
)
def test_bad_generic_config_raises_clear_value_error(tmp_path: Path, text: str, overrides: list[str],
                                                     message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        load_config(path, _Stage, overrides=overrides)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"split": "dev"}, "split='dev'"),
        ({"generator": "local_hf"}, "needs local_hf.model"),
        ({"generator": "openai", "openai": {"model": "m", "base_url": "api.example"}}, "openai.base_url"),
        ({"source": "text_jsonl"}, "needs a generator"),
        ({"max_negatives": 0}, "max_negatives=0"),
        ({"tasks": ["ctd", "ctd"]}, "each once"),
        ({"tasks": ["cse"]}, "'tasks[0]'"),
        ({"openai": {"modle": "x"}}, "unknown key 'openai.modle'"),
        ({"ctd_rules": {"max_query_words": "many"}}, "'ctd_rules.max_query_words'"),
    ],
)
def test_bad_curation_config_raises_before_any_model_loads(changes: dict, message: str) -> None:
    base = {"input_path": str(DATA), "output_dir": "unused"}
    with pytest.raises(ValueError, match=re.escape(message)):
        from_dict(CurationConfig, {**base, **changes})


def test_cli_reports_bad_config_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("input_path: nowhere.jsonl\noutput_dir: o\ngenerator: local_hf\nlocal_hf: {model: /nope}\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["--config", str(path)])
    assert exit_info.value.code == 2
    assert "input_path='nowhere.jsonl' does not exist" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ HTTP generator


class _FakeLLM:
    """A real HTTP server on 127.0.0.1 speaking /v1/chat/completions; scripted failures first."""

    def __init__(self, failures: list[int] | None = None) -> None:
        self.failures = list(failures or [])
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                    status = fake.failures.pop(0) if fake.failures else 200
                if status != 200:
                    self.send_response(status)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    self.wfile.write(b'{"error": "try later"}')
                    return
                content = fake.answer(body["messages"][-1]["content"])
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @staticmethod
    def answer(prompt: str) -> str:
        if prompt.endswith("Query:"):
            topic = re.search(r"Long context: (\w+ \w+)", prompt).group(1)
            return f"Query: Explain what the text says about {topic}."
        if prompt.endswith("Templates:"):
            return ("1. Read the passage below.\n{text}\nNow answer: {question}\n\n"
                    "2. Question: {question}\nDocument: {text}\nAnswer the question using the document.")
        if prompt.endswith("Questions:"):
            return ("Question 1: Where?\nAnswer 1: as stated in [[1]].\n"
                    "Final question: What connects the first and the third sentence?\n"
                    "Necessary sentences: [[1]], [[3]]")
        return f"echo: {prompt}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# These tests talk to a local fake LLM server over HTTP: the one place the suite needs a socket (pytest-socket
# disables them everywhere else), and only to this machine.
LOCAL_SERVER = (pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"]))


def _local_server(test):
    for mark in LOCAL_SERVER:
        test = mark(test)
    return test


@pytest.fixture
def fake_llm():
    servers: list[_FakeLLM] = []

    def make(failures: list[int] | None = None) -> _FakeLLM:
        servers.append(_FakeLLM(failures))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


def _client(base_url: str, **kwargs) -> OpenAICompatibleGenerator:
    settings = {"model": "tiny", "api_key_env": "TPC_TEST_KEY", "backoff_s": 0.01, "max_retries": 3, "timeout_s": 5}
    return OpenAICompatibleGenerator(OpenAISettings(base_url=base_url, **{**settings, **kwargs}))


@_local_server
def test_openai_client_retries_429_and_cache_skips_second_run(fake_llm, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TPC_TEST_KEY", "sk-test")
    server = fake_llm(failures=[429])
    cache = tmp_path / "cache.sqlite"
    first = CachedGenerator(_client(server.base_url, concurrency=2), cache)
    assert first.generate(["alpha", "beta", "alpha"]) == ["echo: alpha", "echo: beta", "echo: alpha"]
    first.close()
    assert len(server.requests) == 3  # one 429, then alpha and beta once each
    assert {r["path"] for r in server.requests} == {"/v1/chat/completions"}
    assert all(r["auth"] == "Bearer sk-test" and r["model"] == "tiny" for r in server.requests)
    second = CachedGenerator(_client(server.base_url), cache)
    assert second.generate(["beta", "alpha"]) == ["echo: beta", "echo: alpha"]
    assert len(server.requests) == 3 and second.hits == 2 and second.misses == 0
    other_params = CachedGenerator(_client(server.base_url, temperature=0.7), cache)
    other_params.generate(["alpha"])
    assert len(server.requests) == 4  # different sampling parameters are a different cache entry


@_local_server
def test_openai_client_gives_up_and_keeps_partial_answers(fake_llm, tmp_path: Path) -> None:
    server = fake_llm(failures=[400])
    cached = CachedGenerator(_client(server.base_url, concurrency=1), tmp_path / "c.sqlite")
    with pytest.raises(GenerationError, match="HTTP 400.*not retried") as info:
        cached.generate(["bad", "good"])
    assert info.value.partial == {1: "echo: good"} and len(server.requests) == 2
    assert cached.generate(["good"]) == ["echo: good"] and len(server.requests) == 2
    busy = fake_llm(failures=[503, 503, 503])
    with pytest.raises(GenerationError, match="gave up after 3 attempts.*HTTP 503"):
        _client(busy.base_url, max_retries=2).generate(["x"])
    assert len(busy.requests) == 3


@_local_server
def test_openai_rate_limit_spaces_requests(fake_llm) -> None:
    import time

    server = fake_llm()
    client = _client(server.base_url, requests_per_minute=600, concurrency=3)  # one start per 0.1 s
    started = time.monotonic()
    client.generate(["a", "b", "c", "d"])
    assert time.monotonic() - started >= 0.29


@_local_server
def test_llm_pipeline_end_to_end_and_resume_without_requests(fake_llm, tmp_path: Path) -> None:
    server = fake_llm()
    texts = tmp_path / "texts.jsonl"
    body = ("Tidal forces shape coastal life. The moon pulls the oceans toward it. Two bulges of water form. "
            "Fishermen plan their trips around the tides. Some harbours dry out at low tide.")
    texts.write_text("\n".join(json.dumps({"id": f"t{i}", "text": f"Topic{i} here. " + body}) for i in range(3)))
    config = tmp_path / "llm.yaml"
    config.write_text(
        f"input_path: {texts}\nsource: text_jsonl\ngenerator: openai\noutput_dir: {tmp_path / 'out'}\n"
        f"min_context_chars: 10\nmax_negatives: 2\nbatch_size: 2\n"
        f"openai: {{base_url: '{server.base_url}', model: tiny, api_key_env: null, backoff_s: 0.01}}\n"
    )
    assert main(["--config", str(config)]) == 0
    ctd = list(read_jsonl(tmp_path / "out" / "ctd.jsonl"))
    mcqr = list(read_jsonl(tmp_path / "out" / "mcqr.jsonl"))
    expected = [f"Explain what the text says about Topic{i} here." for i in range(3)]
    assert [r["task_description"] for r in ctd] == expected
    assert all(r["prompt"].count(body) == 1 and r["task_description"] in r["prompt"] for r in ctd)
    assert [r["id"] for r in mcqr] == ["t0:mcqr:0:0", "t1:mcqr:0:0", "t2:mcqr:0:0"]
    assert mcqr[0]["positives"] == [0, 2] and len(mcqr[0]["negatives"]) == 2
    assert not set(mcqr[0]["negatives"]) & {0, 2}
    assert len(server.requests) == 9  # 3 texts x (Prompt 1, Prompt 2, Prompt 3)
    assert main(["--config", str(config), "--set", "overwrite=true"]) == 0  # fresh outputs, cached answers
    assert len(server.requests) == 9
    assert list(read_jsonl(tmp_path / "out" / "ctd.jsonl")) == ctd


# ------------------------------------------------------------------------------------------ local HF generator


@pytest.fixture
def one_torch_thread():
    """A 32-wide model gains nothing from threads, and on a shared 2-core box their spinning costs seconds."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = "user assistant system : what is the query text about tides moon sea long answer a b c".split()
    vocab = {tok: i for i, tok in enumerate(["<unk>", "<pad>", "<s>", "</s>", *words])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>",
                                        bos_token="<s>", eos_token="</s>")
    tokenizer.chat_template = (
        "{% for m in messages %}<s> {{ m['role'] }} : {{ m['content'] }} </s> {% endfor %}"
        "{% if add_generation_prompt %}<s> assistant : {% endif %}"
    )
    path = tmp_path_factory.mktemp("tiny-llama")
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=2, eos_token_id=3, pad_token_id=1)
    LlamaForCausalLM(config).save_pretrained(path)
    return path


def test_local_hf_generator_is_deterministic_and_cached(tiny_llama: Path, tmp_path: Path, one_torch_thread) -> None:
    from training.curation.generators import LocalHFGenerator

    generator = LocalHFGenerator(LocalHFSettings(model=str(tiny_llama), max_new_tokens=6, batch_size=2,
                                                 local_files_only=True))
    assert generator.chat_text("what is the query") == "<s> user : what is the query </s> <s> assistant : "
    prompts = ["what is the text about", "tides moon sea", "a b c long answer"]
    first = generator.generate(prompts)
    assert len(first) == 3 and all(isinstance(answer, str) and answer for answer in first)
    assert generator.generate(prompts) == first
    assert generator.generate(prompts[1:2]) == first[1:2]  # left padding does not change the answer
    calls: list[list[str]] = []
    real_generate = generator.generate
    generator.generate = lambda batch: calls.append(batch) or real_generate(batch)  # count, do not replace
    cached = CachedGenerator(generator, tmp_path / "hf.sqlite")
    assert cached.generate(prompts) == first and len(calls) == 1
    assert cached.generate(prompts) == first and len(calls) == 1
    assert cached.identity == f"local_hf:{tiny_llama}@default"


def test_local_hf_generator_needs_a_chat_template(tiny_llama: Path, tmp_path: Path) -> None:
    import shutil

    from training.curation.generators import LocalHFGenerator

    bare = tmp_path / "bare"
    shutil.copytree(tiny_llama, bare)
    config = json.loads((bare / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (bare / "tokenizer_config.json").write_text(json.dumps(config))
    for extra in bare.glob("chat_template.*"):
        extra.unlink()
    with pytest.raises(ValueError, match="no chat template"):
        LocalHFGenerator(LocalHFSettings(model=str(bare), local_files_only=True))
