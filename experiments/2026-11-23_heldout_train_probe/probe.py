import json, sys, time, dataclasses
from collections import defaultdict
from benchmarks.protocol.budget import minilm_token_counter
from benchmarks.protocol.evaluate import compress_one
from data_access.loaders import load_qa_dev
from benchmarks.protocol.methods.base import AGNOSTIC
from training.evaluate import select_samples, in_family, loaded_tpc_method
from tpc_core import TPCCompressor

ids = json.load(open('training/results/2026-11-23/validation_ids.json'))
samples = select_samples(load_qa_dev(None, split='train'), ids)
counter = minilm_token_counter()
comp = TPCCompressor.from_pretrained(sys.argv[1] if len(sys.argv) > 1 else 'tpc_core/checkpoints/tpc-mini', device='cpu', trust_config_paths=True)
import os, dataclasses
if os.environ.get('MATCH'):
    object.__setattr__(comp.config, 'agnostic', dataclasses.replace(comp.config.agnostic, match_share=float(os.environ['MATCH'])))
    print('match_share', comp.config.agnostic.match_share)
families = sys.argv[2].split(',') if len(sys.argv) > 2 else ['longbench', 'json_wrapper', 'xml_tags', 'task_then_documents']
from benchmarks.protocol.methods.base import Compressed, Method
class Oracle(Method):
    def compress(self, text, question, budget, *, sample_id=''):
        s = by_id[sample_id]
        r = comp.compress(text, question=s.question, target_tokens=max(budget, 1), token_counter=self.counter)
        return Compressed(r.compressed_prompt, {'task_description': r.task_description, 'task_source': r.task_source})
out = []
for fam in families:
    ss = samples if fam == 'longbench' else in_family(samples, fam)
    by_id = {s.id: s for s in ss}
    for mode in __import__('os').environ.get('MODES','agnostic,oracle').split(','):
        m = loaded_tpc_method(counter, comp, 'tpc', False) if mode == 'agnostic' else Oracle(counter)
        m.name = 'tpc'
        t = time.time()
        recs = [compress_one(m, s, AGNOSTIC, counter, rate=0.2, target_tokens=None) for s in ss]
        per = defaultdict(list)
        for r in recs:
            if r['evidence_recall'] is not None:
                per[r['source']].append(r['evidence_recall']); per['ALL'].append(r['evidence_recall'])
            out.append({'family': fam, 'mode': mode, 'id': r['sample_id'], 'source': r['source'], 'recall': r['evidence_recall'],
                        'desc': (r.get('info') or {}).get('task_description'), 'src': (r.get('info') or {}).get('task_source')})
        print(fam, mode, f"{time.time()-t:.0f}s", {k: (round(sum(v)/len(v),3), len(v)) for k, v in sorted(per.items())}, flush=True)
json.dump(out, open(sys.argv[3] if len(sys.argv) > 3 else 'runs/diag/out.json', 'w'), indent=1)
