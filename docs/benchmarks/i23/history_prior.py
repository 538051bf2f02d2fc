"""Issue 23, session 34: does the conversation's own retrieval help the next turn? Each earlier turn's fused list (the
run file's top 10) joins this turn's RRF scores at weight w, from the last earlier turn only, all of them, or with
weight halving per turn back. Train split only (the choice), no LLM call, no index: it re-fuses run files of
`hyde_grid.sh` (runs/i23/s32-grid/<row>/, rebuilt by `bash docs/benchmarks/i23/hyde_grid.sh`). A proxy: a passage an
earlier turn found but this turn's top 10 lacks gets only the prior's score.

    .venv/bin/python docs/benchmarks/i23/history_prior.py own-k20 own-hyde-k20 > docs/benchmarks/i23/s34-history-prior-train.txt
"""

from __future__ import annotations

import collections
import json
import math
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[4] / "shared" / "mtrag"
K = 20  # the rows' RRF k


def ndcg5(ranked: list[str], gold: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, p in enumerate(ranked[:5]) if p in gold)
    return dcg / sum(1 / math.log2(i + 2) for i in range(min(5, len(gold))))


def main(rows: list[str]) -> None:
    train = set((SHARED / "splits" / "mtrag_train_conversations.txt").read_text().split())
    qrels: dict[str, set[str]] = collections.defaultdict(set)
    for d in ("clapnq", "cloud", "fiqa"):
        for line in (SHARED / "retrieval_tasks" / d / "qrels" / "dev.tsv").read_text().splitlines()[1:]:
            task, passage, _ = line.split("\t")
            qrels[task].add(passage)
    for row in rows:
        run = {}
        for d in ("clapnq", "cloud", "fiqa"):
            for line in Path(f"runs/i23/s32-grid/{row}/run-{d}.jsonl").read_text().splitlines():
                r = json.loads(line)
                run[r["task_id"]] = [(c["document_id"], c["score"]) for c in r["contexts"]]
        tasks = [t for t in run if t.split("<::>")[0] in train and t in qrels]
        print(f"## {row}: {len(tasks)} pool-3 train turns, pool-3 nDCG@5")
        print("| earlier turns | w 0 | 0.1 | 0.25 | 0.5 | 1 |\n|---|---:|---:|---:|---:|---:|")
        for mode in ("last", "all", "halving"):
            cells = []
            for w in (0.0, 0.1, 0.25, 0.5, 1.0):
                total = 0.0
                for t in tasks:
                    conv, k = t.split("<::>")
                    scores: dict[str, float] = collections.defaultdict(float)
                    for p, s in run[t]:
                        scores[p] += s
                    for j in ([int(k) - 1] if mode == "last" else range(1, int(k))):
                        weight = w * (0.5 ** (int(k) - 1 - j) if mode == "halving" else 1)
                        for r, (p, _) in enumerate(run.get(f"{conv}<::>{j}", [])):
                            scores[p] += weight / (K + r + 1)
                    total += ndcg5(sorted(scores, key=lambda p: -scores[p]), qrels[t])
                cells.append(f"{total / len(tasks):.4f}")
            print(f"| {mode} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
