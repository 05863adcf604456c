"""The open-ended prompt generator: deterministic, spans cover exactly the request's words, held-out parts
never leak into "seen", every axis is drawn, chat templates carry their real tokens, prompts that ask nothing have
no spans, and the material keeps the evidence verbatim."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthesis import AXES, HELD_OUT_PARTS, Generated, generate, generate_without
from synthesis.parts import CASINGS, VOCABULARIES, cased
from synthesis.shells import CHAT_TEMPLATES, SHELL_POSITIONS, Slots, render_shell

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

_PARAGRAPHS = [
    "Bridges\nThe Old Bridge opened in 1932 after six years of work. It is 300 metres long and carries two lanes.",
    "Tunnels\nThe harbour tunnel opened in 1950. Engineers from three countries built it under the river bed.",
    "Roads\nThe coast road is older than both. It was paved in 1911 and widened in 1964 for heavier lorries.",
    "Ferries\nBefore the bridge, a ferry crossed every hour. "
    "The last ferry ran on 3 May 1932, a week after the opening.",
    "Tolls\nA toll of one penny was charged until 1951. The toll house still stands at the northern end of the bridge.",
]
_NQ_CONTEXT = "\n\n".join(f"Document [{k}] (Title: Topic {k}) Passage number {k} says the value is {k * 7}. "
                          f"It was recorded in {1900 + k}." for k in range(1, 9))


def _row(number: int, *, nq: bool = False, options: bool = False) -> dict:
    row = {"id": f"row-{number}", "question": "when did the old bridge open", "answers": ["1932"],
           "context": "\n\n".join(_PARAGRAPHS), "meta": {},
           "supporting_sentences": ["The Old Bridge opened in 1932 after six years of work."]}
    if nq:
        row.update(context=_NQ_CONTEXT, question="what value does passage 3 give",
                   supporting_sentences=["Passage number 3 says the value is 21."], meta={"gold_doc_index": 2})
    if options:
        row.update(question="When did it open?\nA. 1911\nB. 1932",
                   meta={"question_only": "When did it open?", "options": ["A. 1911", "B. 1932"]})
    return row


_ROWS = [_row(0), _row(1, nq=True), _row(2, options=True)]
_DOCUMENT = " ".join(_PARAGRAPHS).replace("\n", " ")


def _normal(text: str) -> str:
    return " ".join(text.split())


def _draws(count: int, mode: str = "all") -> list[Generated]:
    return [generate(_ROWS[n % len(_ROWS)], seed=5, index=n, components=mode, pool=_ROWS) for n in range(count)]


def _check_spans(generated: Generated) -> None:
    """The spans are ordered, disjoint, inside the prompt, trimmed, and together are exactly the request's words."""
    position = 0
    for start, end in generated.request_spans:
        assert position <= start < end <= len(generated.prompt)
        written = generated.prompt[start:end]
        assert written == written.strip()
        for label, _ in VOCABULARIES.values():  # never the wrapper label
            assert not any(written.startswith(f"{cased(label, c)}:") for c in CASINGS)
        assert not re.search(r"<\|[a-z_]+\|>|\[/?INST\]|<</?SYS>>|<(?:start|end)_of_turn>", written)
        position = end
    joined = " ".join(generated.prompt[a:b] for a, b in generated.request_spans)
    assert joined == generated.request


def test_same_seed_row_and_index_give_the_same_prompt_and_others_differ():
    first = generate(_ROWS[0], seed=13, index=2, components="seen", pool=_ROWS)
    assert first == generate(_ROWS[0], seed=13, index=2, components="seen", pool=_ROWS)
    others = {generate(_ROWS[0], seed=seed, index=2, components="seen", pool=_ROWS).prompt for seed in range(20)}
    assert len(others) >= 18
    assert generate_without("d1", _DOCUMENT, seed=4) == generate_without("d1", _DOCUMENT, seed=4)


def test_spans_cover_exactly_the_request_in_every_draw():
    for generated in _draws(400):
        assert generated.request_spans and generated.request
        _check_spans(generated)


def test_seen_never_draws_a_held_out_part_and_held_out_always_shows_one():
    for generated in _draws(300, "seen"):
        assert generated.components["held_out"] == ""
        for axis, parts in HELD_OUT_PARTS.items():
            assert generated.components[axis] not in parts
    for generated in [*_draws(300, "held_out"),
                      *(generate_without(f"d{n}", _DOCUMENT, seed=2, components="held_out") for n in range(60))]:
        named = [part.split("=") for part in generated.components["held_out"].split(",")]
        assert named and all(generated.components[axis] == part and part in HELD_OUT_PARTS[axis]
                             for axis, part in named)
    for generated in (generate_without(f"d{n}", _DOCUMENT, seed=2, components="seen") for n in range(60)):
        assert generated.components["shell"] not in HELD_OUT_PARTS["shell"]


def test_every_part_of_every_axis_is_drawn():
    drawn: dict[str, set[str]] = defaultdict(set)
    for generated in [*_draws(2500), *(generate_without(f"d{n}", _DOCUMENT, seed=3) for n in range(400))]:
        for axis, value in generated.components.items():
            drawn[axis].update(value.split("+") if axis == "header" else [value])
    for axis in ("shell", "vocabulary", "casing", "position", "request_style", "instructions", "material_questions",
                 "distractor_place", "system", "length", "no_request", "passage_style", "header"):
        missing = set(AXES[axis]) - drawn[axis]
        assert not missing, f"{axis}: never drawn {sorted(missing)}"
    assert len(drawn["distractor"]) > len(AXES["distractor"])  # single notes and pairs


_TOKENS = {"chatml": ("<|im_start|>user\n", "<|im_end|>", "<|im_start|>assistant\n"),
           "llama3": ("<|begin_of_text|>", "<|start_header_id|>user<|end_header_id|>", "<|eot_id|>",
                      "<|start_header_id|>assistant<|end_header_id|>"),
           "llama2": ("<s>[INST] ", " [/INST]"), "mistral": ("<s>[INST] ", " [/INST]"),
           "gemma": ("<bos><start_of_turn>user\n", "<end_of_turn>", "<start_of_turn>model\n"),
           "phi3": ("<|user|>\n", "<|end|>", "<|assistant|>\n"), "user_assistant": ("User: ", "Assistant:"),
           "human_ai": ("Human: ", "AI:")}


@pytest.mark.parametrize("shell", sorted(CHAT_TEMPLATES))
@pytest.mark.parametrize("position", ["turn_start", "turn_end", "between", "own_turn"])
def test_chat_templates_write_their_real_special_tokens(shell, position):
    slots = Slots(request=(("Who built the tunnel?", True),), labelled=False, vocabulary=("Question", "Context"),
                  casing="title", material="First half.\n\nSecond half.", position=position,
                  system="You are helpful." if shell != "gemma" else None)
    prompt, spans = render_shell(shell, slots, random.Random(1))
    assert all(token in prompt for token in _TOKENS[shell])
    assert [prompt[a:b] for a, b in spans] == ["Who built the tunnel?"]
    if position == "own_turn":  # the material in an earlier user turn, the request alone in the last
        assert prompt.index("Second half.") < prompt.index("Who built the tunnel?")
    if shell == "llama2":
        assert "<<SYS>>\nYou are helpful.\n<</SYS>>" in prompt
    if shell in ("llama3", "chatml", "phi3"):
        assert prompt.count("You are helpful.") == 1 and "system" in prompt


def test_a_shell_refuses_a_position_it_does_not_have():
    slots = Slots(request=(("Who?", True),), labelled=False, vocabulary=("Question", "Context"), casing="title",
                  material="Text.", position="subject")
    with pytest.raises(ValueError, match="no position"):
        render_shell("json", slots, random.Random(1))
    with pytest.raises(ValueError, match="unknown shell"):
        render_shell("nope", slots, random.Random(1))
    assert "subject" in SHELL_POSITIONS["email_thread"]


def test_generated_chat_prompts_carry_the_tokens_of_their_template():
    seen = set()
    for generated in _draws(600):
        shell = generated.components["shell"]
        if shell in CHAT_TEMPLATES:
            seen.add(shell)
            assert all(token in generated.prompt for token in _TOKENS[shell] if token != "<s>[INST] " or
                       generated.prompt.startswith("<s>"))
    assert seen == set(CHAT_TEMPLATES)


def test_prompts_that_ask_nothing_have_no_spans_and_no_request():
    kinds = set()
    for number in range(200):
        generated = generate_without(f"doc-{number}", _DOCUMENT, seed=7, components="all")
        kinds.add(generated.kind)
        assert generated.request_spans == () and generated.request == ""
        assert generated.question is None
    assert kinds == {f"no_request_{kind}" for kind in AXES["no_request"]}


def test_the_material_keeps_the_evidence_verbatim_and_the_prompt_keeps_the_material():
    for generated in _draws(400):
        row = next(r for r in _ROWS if r["id"] == generated.source_id)
        assert generated.evidence == tuple(row["supporting_sentences"])
        assert all(_normal(e) in _normal(generated.material) for e in generated.evidence)
        if generated.material_escaped:
            prompt = json.loads(generated.prompt) if generated.components["shell"] == "json" else None
            assert prompt is None or generated.material in prompt.values()
        elif generated.components["position"] == "between":  # cut in two at a blank line, the request between
            assert all(_normal(half) in _normal(generated.prompt) for half in generated.material.split("\n\n"))
        else:
            assert _normal(generated.material) in _normal(generated.prompt)


def test_json_prompts_parse_and_hold_the_request_as_a_value():
    found = 0
    for generated in _draws(600):
        if generated.components["shell"] == "json":
            values = json.loads(generated.prompt).values()
            assert all(any(generated.prompt[a:b] in value for value in values) for a, b in generated.request_spans)
            found += 1
    assert found


def test_a_key_value_row_and_an_unknown_mode_are_refused():
    with pytest.raises(ValueError, match="key-value"):
        generate({**_ROWS[0], "question": 'Key: "a1"'}, seed=1)
    with pytest.raises(ValueError, match="components"):
        generate(_ROWS[0], seed=1, components="unseen")  # type: ignore[arg-type]


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789'-", min_size=1, max_size=9)
_SENTENCE = st.lists(_WORD, min_size=3, max_size=14).map(lambda words: " ".join(words) + ".")


@st.composite
def _rows(draw: st.DrawFn) -> dict:
    paragraphs = draw(st.lists(st.lists(_SENTENCE, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=6))
    context = draw(st.sampled_from(("\n\n", "\n"))).join(paragraphs)
    sentences = [s + "." for p in paragraphs for s in p.split(". ") if s]
    evidence = draw(st.lists(st.sampled_from(sentences), max_size=2, unique=True))
    question = " ".join(draw(st.lists(_WORD, min_size=2, max_size=12)))
    end = draw(st.sampled_from(("", "?", " ?")))
    return {"id": draw(st.text(min_size=1, max_size=6)), "question": question + end, "answers": [draw(_WORD)],
            "context": context, "supporting_sentences": [e.rstrip(".") + "." for e in evidence], "meta": {}}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(row=_rows(), seed=st.integers(0, 10**6), index=st.integers(0, 5),
       mode=st.sampled_from(("seen", "held_out", "all")))
def test_span_invariant_holds_for_any_row(row, seed, index, mode):
    generated = generate(row, seed=seed, index=index, components=mode, pool=[row, *_ROWS])
    _check_spans(generated)
    assert generated.request
    found = [e for e in row["supporting_sentences"] if _normal(e) in _normal(row["context"])]
    assert all(_normal(e) in _normal(generated.material) for e in found)


@pytest.mark.skipif(not (DATA / "qa_dev.jsonl").is_file(), reason="needs ../shared/data")
def test_real_train_rows_keep_their_evidence_and_mostly_stay_short():
    rows = [json.loads(line) for line in (DATA / "qa_dev.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == "train" and not r["question"].startswith("Key:")]
    lengths = []
    for number, row in enumerate(rows):
        generated = generate(row, seed=13, index=number, components="all", pool=rows)
        _check_spans(generated)
        present = [e for e in row["supporting_sentences"] if _normal(e) in _normal(row["context"])]
        assert all(_normal(e) in _normal(generated.material) for e in present)
        lengths.append(len(generated.prompt.split()))
    lengths.sort()
    assert lengths[len(lengths) // 2] < 900  # most prompts are a few paragraphs (words, not tokens)
