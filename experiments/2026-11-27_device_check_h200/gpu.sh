#!/bin/bash
# Device run (issue 37): tpc-mini with all-MiniLM-L6-v2 rebuilt from a carried int8 copy of the real weights,
# benchmarks.device_check on CUDA (bf16), then conversation timings. Carried: the nupunkt wheel, minilm_q8/,
# 42 qa_dev train rows.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devcarry/*.whl || exit 3
python3 .devcarry/restore_minilm.py .devcarry/minilm_q8 /tmp/site || exit 4
export PYTHONPATH=/tmp/site:$PWD TPC_QA_DEV=$PWD/.devcarry/qa_dev.jsonl PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__)" | tee -a $OUT/gpu.txt
timeout ${DC_TIMEOUT:-330} python3 -m benchmarks.device_check --device cuda --out $OUT/device_check 2>&1 | tee $OUT/device_check.log | tail -60
echo "device_check rc=$?"
timeout 120 python3 .devcarry/conv_timing.py cuda $OUT/conv_timing_cuda.json 2>&1 | tail -3
echo "conv_timing rc=$?"
