"""The user's request is never lost: whatever the material, the request and the layout, prompt-agnostic
compression with the shipped tpc-mini keeps the request verbatim (property-tested), and over the budget when it
must."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.harness.stock_templates import EVERYDAY_SHAPES, STOCK_TEMPLATES, fill
from synthesis.layouts import LAYOUTS, render
from tests.notice_helpers import compress_warning_when_oversized, oversized

FACTS = (
    "The lease starts on 1 May 2024 and runs for twelve months.", "Rent of 1,200 euros is due on the first day.",
    "The tenant pays for water and electricity.", "The landlord repairs the roof and the heating.",
    "A deposit of two months' rent is held by the agency.", "Pets are allowed with written consent.",
    "The Eiffel Tower was finished in 1889 for the World's Fair.", "Bananas grow in tropical regions.",
    "The council approved the new budget on Monday.", "Roads were closed for a day after the storm.",
    "The museum opens at nine and closes at six.", "Tickets cost twelve euros for adults.",
)
REQUESTS = (
    "When is the rent due?", "who repairs the heating", "Summarize the obligations of the tenant.",
    "Please list every cost the tenant pays.", "Read the lease. Then say who keeps the deposit.",
    "Which of these does the tenant pay?\nA. Water\nB. The roof\nC. The heating",
    "Is it true that pets are allowed without consent?",
)
TEMPLATES = {**{f"stock:{k}": v for k, v in STOCK_TEMPLATES.items()},
             **{f"shape:{k}": v for k, v in EVERYDAY_SHAPES.items()}}


@st.composite
def materials(draw: st.DrawFn) -> str:
    paragraphs = draw(st.lists(st.lists(st.sampled_from(FACTS), min_size=2, max_size=5), min_size=2, max_size=6))
    return "\n\n".join(" ".join(sentences) for sentences in paragraphs)


def _written(prompt: str, request: str) -> list[str]:
    """The request's lines as the prompt writes them (a JSON layout escapes line breaks)."""
    lines = [line for line in request.splitlines() if line.strip()]
    return lines if all(line in prompt for line in lines) else [request.replace("\n", "\\n")]


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(material=materials(), request=st.sampled_from(REQUESTS),
       layout=st.sampled_from(sorted(LAYOUTS) + sorted(TEMPLATES)), rate=st.floats(0.05, 0.5),
       seed=st.integers(0, 10_000))
@pytest.mark.slow
def test_the_written_request_survives_in_every_layout(tpc_mini, material, request, layout, rate, seed) -> None:
    if layout in TEMPLATES:
        prompt, written = fill(TEMPLATES[layout], material, request)
    else:
        rendered = render(layout, request, material, random.Random(seed))
        prompt, written = rendered.prompt, request
    result = compress_warning_when_oversized(tpc_mini, prompt, rate=rate)
    for line in _written(prompt, written):
        assert line in result.compressed_prompt, (layout, line, result.compressed_prompt)
    assert result.request_sentences > 0 and result.task_source == "extracted"
    assert result.over_budget == max(0, result.compressed_tokens - result.budget)


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(material=materials(), rate=st.floats(0.1, 0.5))
@pytest.mark.slow
def test_a_bare_document_pins_nothing_and_stays_within_budget(tpc_mini, material, rate) -> None:
    result = compress_warning_when_oversized(tpc_mini, material, rate=rate, describe_bare=False)
    assert result.request_sentences == 0 and result.over_budget == 0
    assert result.compressed_tokens <= result.budget


def test_a_request_larger_than_the_budget_is_kept_whole_over_it(tpc_mini) -> None:
    material = "\n\n".join(" ".join(FACTS[k:k + 4]) for k in range(0, 12, 4))
    prompt = f"{material}\n\nPlease list every cost the tenant pays, who repairs the roof and who holds the deposit."
    # every fact is larger than a 5-token budget: skipped, and said so
    with pytest.warns(UserWarning, match=r"is kept whole, \d+ token\(s\) over"), oversized():
        result = tpc_mini.compress(prompt, target_tokens=5)
    assert result.compressed_prompt == ("Please list every cost the tenant pays, who repairs the roof and who holds "
                                        "the deposit.")
    assert result.over_budget == result.compressed_tokens - 5 > 0


def test_the_request_is_kept_for_any_token_counter(tpc_mini) -> None:
    material = "\n\n".join(" ".join(FACTS[k:k + 3]) for k in range(0, 12, 3))
    prompt, written = fill(STOCK_TEMPLATES["langchain_rag"], material, "Who repairs the roof?")
    result = tpc_mini.compress(prompt, rate=0.3, token_counter=len)
    assert written in result.compressed_prompt
    assert result.compressed_tokens == len(result.compressed_prompt) <= result.budget


@pytest.mark.parametrize("question", ["who repairs the heating", "Summarize the obligations of the tenant.",
                                      "Question: When is the rent due?"])
def test_compress_messages_keeps_the_question_of_a_single_user_turn(tpc_mini, question) -> None:
    material = "\n\n".join(" ".join(FACTS[k:k + 3]) for k in range(0, 12, 3))
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": f"{material}\n\n{question}"}]
    result = tpc_mini.compress_messages(messages, rate=0.3, return_result=True)
    assert question in result.messages[-1]["content"]
    assert len(result.messages[-1]["content"]) < len(messages[-1]["content"])  # the material was compressed
