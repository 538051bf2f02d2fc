"""Table of chain13.sh: each embedder on the held-out synthetic queries (micro-averaged over the four pool corpora)
beside its MTRAG test-split figure (pool-3 nDCG@5, last turn, from the committed run folders)."""

import json
from pathlib import Path

B = Path("docs/benchmarks/i23")
MODELS = {"all-MiniLM-L6-v2": ("stock MiniLM", "minilm-bi-lastturn"), "i23-emb-s0": ("s0: 492 synthetic only", "i23-emb-s0-bi-lastturn"),
          "i23-emb-s1": ("s1: train split + 492 synthetic", "i23-emb-s1-bi-lastturn"),
          "i23-emb-s2": ("s2: train split + 748 synthetic", "i23-emb-s2-bi-lastturn")}
DOMAINS = ("govt", "clapnq", "fiqa", "cloud")


def micro(files: list[Path], row: str) -> dict[str, float]:
    rows = [json.loads(f.read_text())["rows"][row] for f in files]
    n = sum(r["queries"] for r in rows)
    return {k: sum(r[k] * r["queries"] for r in rows) / n for k in rows[0] if k != "queries"} | {"queries": n}


def mtrag(folder: str) -> str:
    f = B / folder / "scores.json"
    return f"{json.loads(f.read_text())['pool-3']['ndcg_cut_5']:.3f}" if f.exists() else "—"


print("| row | held-out queries | MRR@10 | R@1 | R@5 | R@20 | MTRAG test pool-3 nDCG@5 |")
print("|---|---:|---:|---:|---:|---:|---:|")
first = micro([B / "heldout" / f"all-MiniLM-L6-v2-prior0-{d}.json" for d in DOMAINS], "first stage")
print(f"| hybrid (first stage) | {first['queries']} | {first['mrr@10']:.3f} | {first['recall@1']:.3f} | "
      f"{first['recall@5']:.3f} | {first['recall@20']:.3f} | {mtrag('hybrid-lastturn-s15')} |")
for prior in (0, 1):
    for model, (label, folder) in MODELS.items():
        files = [B / "heldout" / f"{model}-prior{prior}-{d}.json" for d in DOMAINS]
        if not all(f.exists() for f in files):
            continue
        m = micro(files, f"+ {model}")
        how = "re-scoring the top 20" if prior == 0 else "fused with the hybrid's order"
        print(f"| {label}, {how} | {m['queries']} | {m['mrr@10']:.3f} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | "
              f"{m['recall@20']:.3f} | {mtrag(folder + ('-prior1' if prior else ''))} |")
