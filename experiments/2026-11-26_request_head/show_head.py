import json, sys
from synthesis.layouts import HELD_OUT_LAYOUTS
s=json.load(open(sys.argv[1]))
print('thr', s['threshold'], s['neighbour_threshold'], 'CTD held-out', {k: s['held_out_families'][k] for k in ('request_found','exact','no_request_kept_empty')})
chk=s['instructions']['check']
print('all', chk['all'])
print(' '.join(f"{k}={v.get('found', v.get('no_request_kept_empty'))}" for k,v in chk['by_family'].items()))
seen=[(k,v) for k,v in chk['by_shape'].items() if k not in HELD_OUT_LAYOUTS]
held=[(k,v) for k,v in chk['by_shape'].items() if k in HELD_OUT_LAYOUTS]
def agg(items):
    n=sum(v['with_request'] for k,v in items); f=sum(v['found']*v['with_request'] for k,v in items); return round(f/n,3)
lay_seen=[(k,v) for k,v in seen if k not in ('after_document','chat_last_turn','question_first','few_shot')]
print('instruction shapes', agg([(k,v) for k,v in seen if (k,v) not in lay_seen]), 'seen layouts', agg(lay_seen), 'held layouts', agg(held))
print(' '.join(f"{k}={v['found']}" for k,v in chk['by_shape'].items()))
for k,v in s['held_out_by_family'].items(): print('   ctd', k, {x: v.get(x) for x in ('request_found','no_request_kept_empty','prompts')})
