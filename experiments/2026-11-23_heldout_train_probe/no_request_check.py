import json, sys, os, dataclasses, time
from collections import Counter
from tpc_core import TPCCompressor
rs = [json.loads(l) for l in open('runs/curation/ctd_formats/ctd.jsonl')]
v = [r for r in rs if r['split'] == 'validation' and not r.get('request_spans')]
n = int(sys.argv[1]); v = [v[(i * len(v)) // n] for i in range(n)]
comp = TPCCompressor.from_pretrained('tpc_core/checkpoints/tpc-mini', device='cpu', trust_config_paths=True)
object.__setattr__(comp.config, 'agnostic', dataclasses.replace(comp.config.agnostic, match_share=float(sys.argv[2])))
c = Counter()
for r in v:
    t = time.time()
    res = comp.compress(r['prompt'], question=None, rate=0.3)
    c[(r['kind'], res.task_source)] += 1
    if res.task_source in ('matched', 'extracted'):
        print(r['kind'], r['family'], res.task_source, repr(res.task_description[:120]), flush=True)
print(sorted(c.items()))
