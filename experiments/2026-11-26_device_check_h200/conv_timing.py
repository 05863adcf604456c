"""On a device: compress_messages against prompt-aware compress of the same documents (and prompt-agnostic compress
of the templated prompt) on the carried qa_dev rows; median ms of 5 after a warm-up, per conversation, one process."""
import json
import statistics
import sys
import time

import torch

from benchmarks.conversations import SHAPES, build_conversation, conversation_tokens
from data_access.loaders import load_qa_dev
from synthesis.templates import fill_template
from tpc_core import TPCCompressor

device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
compressor = TPCCompressor.from_pretrained("tpc-mini", device=device)
counter = compressor.token_counter
samples = load_qa_dev(split="train")[:20]


def timed(call):
    call()
    times = []
    for _ in range(5):
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        call()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


rows = []
for number, sample in enumerate(samples):
    messages, documents = build_conversation(sample, SHAPES[number % len(SHAPES)])
    budget = int(0.2 * conversation_tokens(messages, counter))
    prompt = fill_template(sample.template, sample.context, sample.question)
    rows.append({
        "id": sample.id, "tokens": conversation_tokens(messages, counter),
        "messages_ms": timed(lambda: compressor.compress_messages(messages, target_tokens=budget)),
        "aware_ms": timed(lambda: compressor.compress(documents, question=sample.question, rate=0.2)),
        "agnostic_ms": timed(lambda: compressor.compress(prompt, rate=0.2, describe_bare=False)),
    })
summary = {key: round(statistics.median(r[key] for r in rows), 1) for key in ("messages_ms", "aware_ms", "agnostic_ms")}
summary.update(device=device, conversations=len(rows), median_tokens=statistics.median(r["tokens"] for r in rows),
               torch=torch.__version__)
print(json.dumps(summary))
json.dump({"summary": summary, "rows": rows}, open(sys.argv[2], "w"), indent=1)
