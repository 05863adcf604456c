"""Diag: head variants on the cached encodings: check found (held-out train) + CTD held-out families."""
import json, glob, sys, time
from safetensors.torch import load_file
from training.request_head import EncodedPrompt, prompt_scores, fit_head, RequestHeadConfig, written_request_outcomes, held_for_threshold
from benchmarks.protocol.request_outcomes import summarise
recs={r["id"]:r for r in map(json.loads, open("runs/curation/instructions/records.jsonl"))}
def load(stem):
    out={}
    for meta in sorted(glob.glob(f"runs/tpc-mini/request_head/encoded/{stem}.*.json")):
        m=load_file(meta[:-5]+".safetensors")["embeddings"]; s=0
        for row in json.load(open(meta)):
            n=len(row["sentences"]); out[row["record_id"]]=EncodedPrompt(row["record_id"],row["family"],row["kind"],row["sentences"],m[s:s+n],row["labels"]); s+=n
    return out
fit=[*load("fit").values(), *load("layout_fit").values(), *[p for p in load("instruction_fit").values() if p.record_id in recs and recs[p.record_id]["role"]=="fit"]]
# only ids in the current config (ctd fit ids from the v3 key)... use all cached
pick=[*load("threshold").values(), *load("layout_threshold").values(), *[p for p in load("instruction_threshold").values() if p.record_id in recs]]
val=list(load("validation").values())
check=[p for p in load("instruction_check").values() if p.record_id in recs and recs[p.record_id]["role"]=="check"]
print(len(fit),len(pick),len(val),len(check), flush=True)
base=RequestHeadConfig("x","y","z")
for spec in sys.argv[1:]:
    kw=dict(kv.split("=") for kv in spec.split(",")) if spec else {}
    cfg=RequestHeadConfig("x","y","z", hidden=int(kw.get("hidden",64)), iterations=int(kw.get("it",300)), l2=float(kw.get("l2",1e-4)))
    t0=time.time(); head=fit_head(fit,cfg); 
    for t,n in [(0.6,0.3),(0.7,0.3),(0.8,0.3),(0.85,0.4)]:
        v=prompt_scores(val,head,t,8,n); p=prompt_scores(pick,head,t,8,n)
        c=summarise(written_request_outcomes(check,list(recs.values()),head,t,8,n))
        print(spec,t,n,"| pick",p["score"],p["no_request_kept_empty"],"| val found",v["request_found"],"kept",v["no_request_kept_empty"],"| check",c["all"]["found"],c["all"]["no_request_kept_empty"], "min fam", min((v2["found"],k) for k,v2 in c["by_family"].items() if "found" in v2), round(time.time()-t0), flush=True)
