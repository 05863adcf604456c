"""Prompt layouts: every layout writes the request verbatim where its span says, seen and held-out
layouts are disjoint, and the layout-recall check deals its prompts evenly."""

from __future__ import annotations

import json
import random

import pytest

from benchmarks.layout_recall import layout_prompts, summarise_layouts
from data_access.loaders import Sample
from synthesis.layouts import HELD_OUT_LAYOUTS, LAYOUTS, SEEN_LAYOUTS, render

_MATERIAL = ('Document 1: Bridges\nThe "Old" bridge opened in 1932.\nIt is 300 m long.\n\n'
             "Document 2: Tunnels\nThe tunnel opened in 1950.\n\nDocument 3: Roads\nThe road is older.")


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_each_layout_writes_the_request_and_the_material_where_it_says(layout):
    request = 'When did the "Old" bridge open?'
    rendered = render(layout, request, _MATERIAL, random.Random(7))
    start, end = rendered.span
    written = rendered.prompt[start:end]
    if layout == "json":  # a JSON string: quotes escaped, and the whole prompt parses
        assert json.loads(f'"{written}"') == request
        assert json.loads(rendered.prompt)["context"] == _MATERIAL
    else:
        assert written == request
        for line in ("The tunnel opened in 1950.", "It is 300 m long."):
            assert line in rendered.prompt
    assert rendered.prompt.count(written) == 1


def test_layouts_are_deterministic_for_a_seed_and_refuse_unknown_names():
    first = render("email", "Who?", _MATERIAL, random.Random(3))
    assert first == render("email", "Who?", _MATERIAL, random.Random(3))
    with pytest.raises(ValueError, match="unknown layout"):
        render("nope", "Who?", _MATERIAL, random.Random(3))


def test_seen_and_held_out_layouts_split_the_list():
    assert set(SEEN_LAYOUTS) | HELD_OUT_LAYOUTS == set(LAYOUTS)
    assert not set(SEEN_LAYOUTS) & HELD_OUT_LAYOUTS
    assert len(HELD_OUT_LAYOUTS) >= 6 and len(SEEN_LAYOUTS) >= 6


def _sample(k: int) -> Sample:
    return Sample(id=f"s{k}", dataset="qa_dev", source="nq", context=_MATERIAL, question="when did the bridge open",
                  answers=("1932",), template="{context}\n\nQuestion: {input}\nAnswer:", metric="qa_f1",
                  max_new_tokens=8, supporting_sentences=('The "Old" bridge opened in 1932.',))


def test_layout_prompts_deal_every_layout_as_often_and_keep_the_familiar_template():
    samples = [_sample(k) for k in range(len(LAYOUTS))]
    prompts = layout_prompts(samples, 2, seed=1)
    layouts = [layout for _, layout, _ in prompts]
    assert layouts.count("familiar") == len(samples)
    assert {layouts.count(name) for name in LAYOUTS} == {2}
    familiar = next(p for _, layout, p in prompts if layout == "familiar")
    assert familiar.endswith("Question: when did the bridge open\nAnswer:")
    assert all("When did the bridge open?" in p for _, layout, p in prompts if layout not in ("familiar", "json"))


def test_summary_groups_familiar_seen_and_held_out():
    held = sorted(HELD_OUT_LAYOUTS)[0]
    rows = [{"layout": layout, "evidence_recall": recall, "found": found, "source": "extracted", "over_budget": 0,
             "seconds": 1.0}
            for layout, recall, found in (("familiar", 1.0, True), (SEEN_LAYOUTS[0], 0.5, True), (held, 0.0, False),
                                          (held, None, True))]
    summary = summarise_layouts(rows)
    assert summary["groups"]["familiar"]["evidence_recall"] == 1.0
    assert summary["groups"]["seen"]["evidence_recall"] == 0.5
    assert summary["groups"]["held_out"] == {**summary["groups"]["held_out"], "evidence_recall": 0.0,
                                             "recall_samples": 1, "request_found": 0.5, "prompts": 2}
    assert summary["layouts"][held]["group"] == "held_out"
