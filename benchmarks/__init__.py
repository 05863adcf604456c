"""Benchmark suites: TPC against the compressors a user would otherwise pick (see BENCHMARKS.md); one command
line for all of them: ``python -m benchmarks SUITE [ARGS ...]`` (:mod:`benchmarks.cli`)."""
