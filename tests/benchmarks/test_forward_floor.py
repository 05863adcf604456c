"""The MiniLM forward floor: windows, batches, the speed-suite row and its ratio line."""

from __future__ import annotations

import pytest

from benchmarks.run import SPEED_METHODS, parse_args
from benchmarks.timing import build_timed_method
from evaluation.budget import minilm_token_counter
from evaluation.methods.forward_floor import (
    BATCH_SIZE,
    FLOOR_METHOD,
    WINDOW_TOKENS,
    MiniLMForward,
    token_windows,
)
from evaluation.report import speed_ratio_lines


def test_token_windows_are_consecutive_and_framed() -> None:
    ids = list(range(100, 100 + 2 * WINDOW_TOKENS + 7))
    windows = token_windows(ids, 101, 102)
    assert [len(window) for window in windows] == [WINDOW_TOKENS + 2, WINDOW_TOKENS + 2, 9]
    assert all(window[0] == 101 and window[-1] == 102 for window in windows)
    assert [token for window in windows for token in window[1:-1]] == ids  # every token once, in order
    assert token_windows([], 101, 102) == []


def test_batches_cover_the_prompt_in_512_position_windows() -> None:
    backbone = MiniLMForward("cpu")
    text = " ".join(f"word{index % 50}" for index in range(3000))
    tokens = minilm_token_counter()(text)
    batches = backbone.batches(text)
    windows = -(-tokens // WINDOW_TOKENS)
    assert len(batches) == -(-windows // BATCH_SIZE)
    assert all(ids.shape[0] <= BATCH_SIZE and ids.shape[1] <= WINDOW_TOKENS + 2 for ids, _ in batches)
    assert sum(int(mask.sum()) for _, mask in batches) == tokens + 2 * windows
    backbone.forward(batches[-1:])  # runs


def test_floor_is_a_speed_row_only() -> None:
    assert FLOOR_METHOD in SPEED_METHODS
    chosen = parse_args(["--suite", "speed", "--methods", f"tpc-aware,{FLOOR_METHOD}"]).methods
    assert chosen == ["tpc-aware", FLOOR_METHOD]
    with pytest.raises(SystemExit):
        parse_args(["--suite", "dev", "--methods", FLOOR_METHOD])
    row = build_timed_method(FLOOR_METHOD, minilm_token_counter())
    assert row.unavailable_reason() is None and row.compress("One. Two.", None, 1).text == "One. Two."


def test_speed_ratio_lines() -> None:
    def rows(first: float, second: float) -> list[dict[str, float]]:
        return [{"length": 1024, "seconds_median": first}, {"length": 4096, "seconds_median": second}]

    results = [{"method": "tpc-aware", "rows": rows(0.6, 2.2)}, {"method": FLOOR_METHOD, "rows": rows(0.5, 2.0)},
               {"method": "tpc-aware[x]", "skipped": "no"}]  # fmt: skip
    assert speed_ratio_lines(results, ["tpc-aware", "tpc-aware[x]"], FLOOR_METHOD) == [
        f"tpc-aware / {FLOOR_METHOD}: 1k 1.20×, 4k 1.10×"
    ]
    assert speed_ratio_lines(results[:1], ["tpc-aware"], FLOOR_METHOD) == []
    lengths = [{"method": "a", "rows": [{"length": n, "seconds_median": 1.0} for n in (1000, 4000, 10000)]},
               {"method": "b", "rows": [{"length": n, "seconds_median": 2.0} for n in (1000, 4000, 10000)]}]
    assert speed_ratio_lines(lengths, ["b"], "a") == ["b / a: 1k 2.00×, 4k 2.00×, 10k 2.00×"]
