"""The warm-under-load benchmark's summary and table (pure functions; the benchmark itself is timed by hand)."""

from __future__ import annotations

from benchmarks.warm_under_load import summary, table


def test_summary_takes_medians_and_the_loaded_over_quiet_ratio():
    times = {"1 (default)": {"warm_quiet": [0.010, 0.020, 0.030], "warm_loaded": [0.040, 0.050, 0.060],
                             "cold_quiet": [1.0]}}
    row = summary(times)["1 (default)"]
    assert row["warm_quiet"] == 20.0
    assert row["warm_loaded"] == 50.0
    assert row["cold_quiet"] == 1000.0
    assert row["loaded_over_quiet"] == 2.5


def test_table_shows_each_setting_and_the_load_averages():
    payload = {"chunks": 20, "tokens": 9313, "rate": 0.2, "rounds": 1, "calls": 3, "busy": 2, "torch_threads": 2,
               "summary": {"1 (default)": {"warm_quiet": 14.0, "warm_loaded": 21.0, "loaded_over_quiet": 1.5,
                                           "cold_quiet": 900.0}},
               "load_average": [("warm_quiet", 0.5, 0.6), ("warm_loaded", 0.6, 2.1)]}
    text = table(payload)
    assert "| 1 (default) | 14.0 | 21.0 | 1.50 | 900 |" in text
    assert "warm_loaded 0.60->2.10" in text
