"""Benchmark suite: TPC against the compressors a user would otherwise pick (see BENCHMARKS.md)."""
