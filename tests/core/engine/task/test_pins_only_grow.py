"""Every sentence the structural request finder pins stays pinned: over a corpus of real prompts (the frameworks'
stock templates over ``qa_dev`` rows, ``real_requests`` requests in the everyday shapes, the golden cases), the
shipped tpc-mini pins at least the sentences recorded in ``tests/data/structural_pins.json`` (recorded with the
finder that placed requests from structure alone, by ``python -m benchmarks.request_pins``).

Needs the shared data (``$TPC_DATA``); skipped without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

RECORDED = Path(__file__).resolve().parents[3] / "data" / "structural_pins.json"


@pytest.mark.slow
def test_every_structurally_pinned_sentence_stays_pinned(tpc_mini) -> None:
    from benchmarks.request_pins import corpus, digest, pins  # lazy: needs the shared data

    try:
        prompts = corpus()
    except (FileNotFoundError, OSError) as error:
        pytest.skip(f"no shared data: {error}")
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    checked = 0
    lost = {}
    for record in prompts:
        reference = recorded.get(record["id"])
        if reference is None or reference["sha256"] != digest(record["prompt"]):
            continue
        missing = {tuple(span) for span in reference["pinned"]} - {tuple(span) for span in pins(tpc_mini,
                                                                                             record["prompt"])}
        if missing:
            lost[record["id"]] = sorted(missing)
        checked += 1
    assert checked >= 0.9 * len(recorded), f"only {checked} of {len(recorded)} recorded prompts rebuilt"
    assert sum(bool(r["pinned"]) for r in recorded.values()) > 0.5 * len(recorded)
    assert lost == {}
