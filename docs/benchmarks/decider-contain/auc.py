"""Single-signal AUC of the containment cross-encoder (run.sh's last step): how well a LOW score over the first
stage's top 5 (max, mean, top-1 passage) picks UNANSWERABLE turns among answerable and partial ones, on the MTRAG
test split and MTRAG-UN dev. Reads the decider's score cache (runs/i24-decider/cross-encoder.jsonl) and
predictions.jsonl (gold classes); writes auc.json here. 0.5 = chance; below 0.5 the signal points the wrong way.
Usage: auc.py [MODEL REPORT_DIR] (default: models/i24-contain and this folder)."""

import json
import sys
from pathlib import Path

from sklearn.metrics import roc_auc_score

MODEL, HERE = (sys.argv[1], Path(sys.argv[2])) if len(sys.argv) > 2 else ("models/i24-contain", Path(__file__).parent)
ce = {}
for line in Path("runs/i24-decider/cross-encoder.jsonl").read_text().splitlines():
    record = json.loads(line)
    if json.loads(record["key"])["model"] == MODEL:
        ce[record["id"]] = record["scores"]
preds = [json.loads(line) for line in (HERE / "predictions.jsonl").read_text().splitlines()]
out = {}
for split in ("test", "dev"):
    rows = [p for p in preds if p["split"] == split and ce.get(p["task_id"])
            and p["gold"] in ("UNANSWERABLE", "ANSWERABLE", "PARTIAL")]
    y = [p["gold"] == "UNANSWERABLE" for p in rows]
    out[split] = {"turns": len(rows), "unanswerable": sum(y)}
    for name, f in (("max", max), ("mean", lambda s: sum(s) / len(s)), ("top1", lambda s: s[0])):
        out[split][f"auc_low_{name}"] = round(1 - roc_auc_score(y, [f(ce[p["task_id"]]) for p in rows]), 3)
(HERE / "auc.json").write_text(json.dumps(out, indent=2) + "\n")
print(json.dumps(out, indent=2))
