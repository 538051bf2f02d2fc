"""Issue 23, session 35: two pseudo-answers instead of one. Session 33's second HyDE wording (`hyde-v2.yaml`) lost as a
replacement for the bundled one on the train split (0.349 against 0.368); here both passages are searched, each its
own BM25 and dense list in the RRF beside the own rewrite's (modes ``rewrite``, ``hyde``, ``hyde2``). Greedy decoding
gives one passage per prompt, so a second prompt is the cheap way to a second sample. No LLM call: the passages come
from the caches of sessions 32-33 (`runs/i23/rewrites.jsonl`: rewrites and bundled passages; `runs/i23/hyde-v2.jsonl`:
the second wording, written for the train split by `hyde_variant.sh`). Profile cpu-qwen, RRF k 20, BM25 at 0.5.

    .venv/bin/python docs/benchmarks/i23/hyde_two.py train > docs/benchmarks/i23/s35-hyde-two-train.txt
    .venv/bin/python docs/benchmarks/i23/hyde_two.py test    # only if train says so (needs hyde-v2 for the test turns)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from local_rag.cli.main import load
from local_rag.evaluation.retrieval import items_from_task_files, run_domain, summarize
from local_rag.evaluation.splits import keep_split, load_split
from local_rag.mtrag import POOL3, default_mtrag_dir
from local_rag.retrieve.stack import open_retriever

ROWS = {"rewrite+hyde": ["rewrite", "hyde"], "rewrite+hyde2": ["rewrite", "hyde2"],
        "rewrite+hyde+hyde2": ["rewrite", "hyde", "hyde2"]}


def cached(path: Path, mode: str) -> dict[str, str]:
    """task id -> the cached text of ``mode`` (rewrite or hyde) in an LLM cache file."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        parts = record["key"].split("|")
        if parts[1] == mode and record["queries"].get(mode):
            out[parts[-1]] = record["queries"][mode][0]
    return out


def main(split: str) -> None:
    texts = {"rewrite": cached(Path("runs/i23/rewrites.jsonl"), "rewrite"),
             "hyde": cached(Path("runs/i23/rewrites.jsonl"), "hyde"),
             "hyde2": cached(Path("runs/i23/hyde-v2.jsonl"), "hyde")}
    settings = load("cpu-qwen", None, None, **{"fusion.k": 20})
    ids = load_split(default_mtrag_dir(), split)
    root = default_mtrag_dir() / "retrieval_tasks"
    results: dict[str, dict] = {row: {} for row in ROWS}
    embedder = None
    for domain in POOL3:
        settings.index = f"mtrag-{domain}"
        retriever = open_retriever(settings, embedder)
        embedder = next((r.embedder for r in retriever.retrievers.values() if hasattr(r, "embedder")), embedder)
        items, qrels = items_from_task_files(root, domain, ["lastturn"])
        items = [i for i in keep_split(items, ids, lambda i: i.id) if all(i.id in t for t in texts.values())]
        for row, modes in ROWS.items():
            provider = lambda item, modes=modes: {m: [texts[m][item.id]] for m in modes}  # noqa: E731
            results[row][domain] = run_domain(retriever.search, items, qrels, modes, None, provider=provider,
                                              progress=False)
    print(f"# two HyDE passages as separate lists ({split} split, pool-3, own rewrite, RRF k 20, cpu-qwen)\n")
    print("| row | queries | nDCG@1 | nDCG@5 | nDCG@10 | R@5 | R@10 | clapnq | cloud | fiqa |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row, per_domain in results.items():
        pooled = summarize(per_domain)["pool-3"]
        cells = [f"{pooled[m]:.4f}" for m in ("ndcg_cut_1", "ndcg_cut_5", "ndcg_cut_10", "recall_5", "recall_10")]
        doms = [f"{per_domain[d]['metrics']['ndcg_cut_5']:.4f}" for d in POOL3]
        print(f"| {row} | {pooled['queries']} | " + " | ".join(cells + doms) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "train")
