"""What only the benchmark suites need around the protocol: the timing prompts
(:mod:`~benchmarks.harness.timing_inputs`), a throwaway local Redis (:mod:`~benchmarks.harness.cache_redis_server`),
the recall runs' shared loop (:mod:`~benchmarks.harness.recall_runs`) and the stock chat templates
(:mod:`~benchmarks.harness.stock_templates`)."""
