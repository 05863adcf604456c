#!/bin/bash
# Device latency, base (d419b9d, before issue 37) and current, alternated in one call on one machine.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devcarry/*.whl || exit 3
python3 .devcarry/restore_minilm.py .devcarry/minilm_q8 /tmp/site || exit 4
export TPC_QA_DEV=$PWD/.devcarry/qa_dev.jsonl PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
root=$PWD
for round in 1 2; do
  for tree in base current; do
    dir=$root; [ $tree = base ] && dir=$root/.devcarry/base
    (cd $dir && PYTHONPATH=/tmp/site:$dir timeout 170 python3 -m benchmarks.device_check --device cuda --prompts 4 \
        --out $OUT/$tree-$round > $OUT/$tree-$round.log 2>&1; echo "$tree round $round rc=$?")
    grep -A7 "^## Latency" $OUT/$tree-$round/device_check.md
  done
done
