#!/bin/bash
# One device run (issue 31 session): the device check of benchmarks.device_check on CUDA with the stand-in base
# (MiniLM's weights are not on the device machine), agreement prompts from the carried qa_dev file.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devcarry/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD TPC_QA_DEV=$PWD/.devcarry/qa_dev.jsonl PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
python3 -c "import torch, transformers, peft; print('torch', torch.__version__, 'transformers', transformers.__version__, 'peft', peft.__version__, 'cuda', torch.cuda.is_available())" | tee -a $OUT/gpu.txt
timeout ${DC_TIMEOUT:-400} python3 -m benchmarks.device_check --device cuda --stand-in --out $OUT/device_check ${DC_ARGS} 2>&1 | tee $OUT/device_check.log
echo "device_check rc=$?"
