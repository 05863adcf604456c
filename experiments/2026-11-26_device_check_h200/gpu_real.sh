#!/bin/bash
# Device run 3 (issue 31 session): tpc-mini with all-MiniLM-L6-v2 rebuilt from a carried int8 copy (the real
# weights, per-row absmax int8, max relative error 0.4%), device_check on CUDA, then conversation timings.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devcarry/*.whl || exit 3
python3 .devcarry/restore_minilm.py .devcarry/minilm_q8 /tmp/site || exit 4
export PYTHONPATH=/tmp/site:$PWD TPC_QA_DEV=$PWD/.devcarry/qa_dev.jsonl PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
timeout ${DC_TIMEOUT:-300} python3 -m benchmarks.device_check --device cuda --out $OUT/device_check_real 2>&1 | tee $OUT/device_check_real.log
echo "device_check rc=$?"
timeout 150 python3 .devcarry/conv_timing.py cuda $OUT/conv_timing_cuda.json 2>&1 | tail -3
echo "conv_timing rc=$?"
