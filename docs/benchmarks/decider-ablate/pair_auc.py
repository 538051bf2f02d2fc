"""How well a containment cross-encoder tells what holds the answer from what does not, on the examples of the MTRAG
**test** split (`train containment --split test`; never trained on): AUC over every positive and negative, and the
share of examples whose positive scores above its first (hardest) negative.
Usage: pair_auc.py MODEL_FOLDER EXAMPLES.jsonl OUT.json [MAX_LENGTH]"""

import json
import sys
from pathlib import Path

import numpy as np
from sentence_transformers import CrossEncoder
from sklearn.metrics import roc_auc_score

model_dir, pairs_file, out_file = sys.argv[1:4]
max_length = int(sys.argv[4]) if len(sys.argv) > 4 else 256
rows = [json.loads(line) for line in Path(pairs_file).read_text().splitlines()]
model = CrossEncoder(model_dir, max_length=max_length, device="cpu")
pos = model.predict([(r["query"], r["positive"]) for r in rows], batch_size=32, show_progress_bar=True)
flat = [(i, n) for i, r in enumerate(rows) for n in r["negatives"]]
neg = model.predict([(rows[i]["query"], n) for i, n in flat], batch_size=32, show_progress_bar=True)
first = np.array([next(s for (i, _), s in zip(flat, neg, strict=True) if i == k) for k in range(len(rows))])
out = {"model": model_dir, "examples": len(rows), "negatives": len(flat), "max_length": max_length,
       "auc": round(roc_auc_score([1] * len(rows) + [0] * len(flat), [*pos, *neg]), 3),
       "positive_above_first_negative": round(float((pos > first).mean()), 3),
       "mean_positive": round(float(pos.mean()), 3), "mean_negative": round(float(neg.mean()), 3)}
Path(out_file).write_text(json.dumps(out, indent=2) + "\n")
print(json.dumps(out, indent=2))
