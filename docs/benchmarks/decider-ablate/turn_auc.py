"""The cheap check before a decider retrain: how well a LOW containment score over the first stage's top 5 picks
UNANSWERABLE turns among answerable and partial ones (AUC; 0.5 = chance), on the MTRAG test split and MTRAG-UN dev.
Hits: the decider's evidence cache (runs/i24-decider/evidence.jsonl, the last turn's hybrid top 10, written by
`train decider`). Usage: turn_auc.py MODEL UNIT OUT.json [REWRITES]   (UNIT: sentence | passage; REWRITES: an LLM
rewrite cache (`train rewrites`): the system's own standalone rewrite is scored instead of the last turn where the
cache holds one, so MTRAG-UN turns keep their last turn)."""

import json
import sys
import time
from pathlib import Path

from sklearn.metrics import roc_auc_score
from tqdm import tqdm

from local_rag.mtrag import DOMAINS, default_mtrag_dir
from local_rag.records import Hit
from local_rag.rerank import load_reranker
from local_rag.settings import RerankerConfig
from local_rag.train.data import own_rewrites
from local_rag.train.decider import load_examples

model, unit, out_file = sys.argv[1:4]
rewrites = own_rewrites(sys.argv[4]) if len(sys.argv) > 4 else {}
KEY = json.dumps([["bm25", "dense"], ["lastturn"], {"fallback": "rrf", "k": 60, "method": "rrf", "model": "",
                  "weights": {"bm25": 0.5}}, 10], sort_keys=True)
hits = {}
for line in Path("runs/i24-decider/evidence.jsonl").read_text().splitlines():
    row = json.loads(line)
    if row["key"] == KEY:
        hits[row["id"]] = [Hit(**h) for h in row["hits"][:5]]
sets = load_examples(default_mtrag_dir(), 0, DOMAINS)
ce = load_reranker(RerankerConfig(model=model, unit=unit, max_length=128 if unit == "sentence" else 256, device="cpu"),
                   Path("models"))
out = {"model": model, "unit": unit, "rewrites": sys.argv[4] if rewrites else None}
for name in ("test", "dev"):
    rows = [e for e in sets[name] if e.gold in ("UNANSWERABLE", "ANSWERABLE", "PARTIAL") and hits.get(e.id)]
    start = time.perf_counter()
    scores = [ce.score_hits(rewrites.get(e.id, e.conversation.last_user_turn), hits[e.id]) for e in tqdm(rows, desc=name)]
    out[name + "_rewritten"] = sum(e.id in rewrites for e in rows)
    y = [e.gold == "UNANSWERABLE" for e in rows]
    out[name] = {"turns": len(rows), "unanswerable": sum(y), "seconds_per_turn": round((time.perf_counter() - start) / len(rows), 3)}
    for agg, f in (("max", max), ("mean", lambda s: sum(s) / len(s)), ("top1", lambda s: s[0])):
        out[name][f"auc_low_{agg}"] = round(1 - roc_auc_score(y, [f(s) for s in scores]), 3)
Path(out_file).write_text(json.dumps(out, indent=2) + "\n")
print(json.dumps(out, indent=2))
