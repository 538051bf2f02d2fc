"""Session 34: the committed Task A run files scored as the official scorer does (pytrec_eval ranks a run by score and
breaks ties by document id) and in the system's own order (the order of ``contexts``, which is the order the passages
reach the generator). Before session 34 tied scores were written as they were: reciprocal-rank fusion ties often
(ranks 1 + 2 and 2 + 1 score the same), most of all when a re-scorer's order is fused with the first stage's
(``--prior-weight 1``). Since then run files carry strictly decreasing scores (`run_scores`), so both agree.

    .venv/bin/python docs/benchmarks/i23/list_order.py docs/benchmarks/i23 docs/benchmarks/adapt > docs/benchmarks/i23/s34-list-order.md

Prints one row per run folder (pool-3 and all-domain nDCG@5, as committed / recomputed by score / in list order) where
the two orders differ by 0.0005 or more, and a count of the folders where they agree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from local_rag.evaluation.metrics import mean_metrics, run_scores, score_run
from local_rag.mtrag import default_mtrag_dir, load_qrels

POOL3 = ("clapnq", "cloud", "fiqa")


def figures(folder: Path, qrels: dict[str, dict[str, dict[str, int]]], list_order: bool) -> dict[str, float]:
    per_query: dict[str, dict[str, float]] = {}
    domain_of: dict[str, str] = {}
    for path in sorted(folder.glob("run-*.jsonl")):
        domain = path.stem.removeprefix("run-")
        run = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            ids = [c["document_id"] for c in record["contexts"]]
            scores = [float(c["score"]) for c in record["contexts"]]
            run[record["task_id"]] = dict(zip(ids, run_scores(scores) if list_order else scores, strict=True))
        judged = {q: qrels[domain][q] for q in run if q in qrels[domain]}
        for q, metrics in score_run(run, judged).items():
            per_query[q], domain_of[q] = metrics, domain
    out = {}
    for name, keep in (("pool-3", POOL3), ("all", ("clapnq", "cloud", "fiqa", "govt"))):
        chosen = {q: m for q, m in per_query.items() if domain_of[q] in keep}
        if chosen:
            out[name] = mean_metrics(chosen)["ndcg_cut_5"]
    return out


def main(roots: list[str]) -> None:
    root = default_mtrag_dir() / "retrieval_tasks"
    qrels = {d: load_qrels(root / d / "qrels" / "dev.tsv") for d in ("clapnq", "cloud", "fiqa", "govt")}
    print("| run folder | set | committed | by score | list order | list − score |\n|---|---|---:|---:|---:|---:|")
    same = 0
    for folder in sorted({p.parent for r in roots for p in Path(r).rglob("run-*.jsonl")}):
        if not (folder / "scores.json").exists():
            continue
        committed = json.loads((folder / "scores.json").read_text(encoding="utf-8"))
        by_score, listed = figures(folder, qrels, False), figures(folder, qrels, True)
        rows = [(s, by_score[s], listed[s]) for s in by_score if abs(listed[s] - by_score[s]) >= 0.0005]
        same += not rows
        for name, a, b in rows:
            was = (committed.get(name) or {}).get("ndcg_cut_5")
            print(f"| {folder} | {name} | {was if was is None else round(was, 4)} | {a:.4f} | {b:.4f} | {b - a:+.4f} |")
    print(f"\n{same} other run folders: the two orders agree within 0.0005.")


if __name__ == "__main__":
    main(sys.argv[1:])
