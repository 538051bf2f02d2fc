"""Issue 23, session 36: how chunk hits become passage hits, measured on the MTRAG pool corpora.

Retrieval ranks chunks (256/64 MiniLM windows of the ~512-token MTRAG passages) and each list hands on a passage with
its best chunk's score (`Retriever._to_passages`: max). Not measured before on MTRAG:
- ``max+L``: a passage's score in each list is its best chunk's plus L times its second best (a passage whose two
  windows both match ranks above one that matches once), L in 0.25 / 0.5 / 1;
- ``bm25p``: BM25 over whole passages (title + text, the same bm25s settings) instead of over chunks; dense stays on
  chunks (MiniLM reads 256 tokens);
- both together.
Every variant keeps the profile's fusion (RRF k 20, BM25 at half weight: `cpu`) and list depth (100 passages).

    .venv/bin/python docs/benchmarks/i23/passages.py train                      # last turn + organizers' rewrite
    .venv/bin/python docs/benchmarks/i23/passages.py test --modes rewrite --rewrites runs/i23/rewrites.jsonl \
        --variants max,bm25p                                                     # own rewrite (cached 1.5B replies)

(`bash docs/benchmarks/i23/passages.sh` runs both, the rewrites and the comparisons, into docs/benchmarks/i23/s36-*.)

Needs the pool indexes (`bash scripts/build_pool_indexes.sh`). No LLM call: own rewrites come from the `--llm-cache`
file of `local-rag train rewrites`. Prints one line per variant (pool-3 nDCG@5, per domain, R@10) and, with
`--out DIR`, writes the official run files of each variant (run-<domain>.jsonl, for `local-rag eval compare`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from local_rag.evaluation.metrics import mean_metrics, run_scores, score_run  # noqa: E402
from local_rag.evaluation.retrieval import items_from_task_files  # noqa: E402
from local_rag.evaluation.splits import keep_split, load_split  # noqa: E402
from local_rag.index.sparse import SparseIndex  # noqa: E402
from local_rag.mtrag import POOL3, default_mtrag_dir, read_jsonl  # noqa: E402
from local_rag.records import Hit, Query  # noqa: E402
from local_rag.retrieve import retrievers as R  # noqa: E402
from local_rag.retrieve.stack import open_retriever  # noqa: E402
from local_rag.settings import load_settings  # noqa: E402

Aggregate = Callable[[list[float]], float]


def aggregate(weight: float) -> Aggregate:
    """A passage's score from its chunks' scores (best first): the best plus ``weight`` times the second."""
    return lambda s: s[0] + weight * (s[1] if len(s) > 1 else 0.0)


def to_passages(agg: Aggregate) -> Callable[..., list[Hit]]:
    """`Retriever._to_passages` with every chunk of the list read and ``agg`` over each passage's chunk scores."""

    def _to_passages(self: R.Retriever, rows: np.ndarray, scores: np.ndarray, k: int) -> list[Hit]:
        by: dict[str, list[float]] = {}
        first: dict[str, object] = {}
        for row, score in zip(rows.tolist(), scores.tolist(), strict=True):
            if row < 0:
                continue
            chunk = self.folder.chunks[row]
            by.setdefault(chunk.passage_id, []).append(float(score))
            first.setdefault(chunk.passage_id, chunk)
        ranked = sorted(((agg(sorted(s, reverse=True)), pid) for pid, s in by.items()), key=lambda t: (-t[0], t[1]))[:k]
        hits = []
        for rank, (score, pid) in enumerate(ranked, start=1):
            chunk = first[pid]
            hits.append(Hit(passage_id=pid, score=score, rank=rank, source=self.name, chunk_id=chunk.id,  # type: ignore[attr-defined]
                            title=chunk.title, doc_id=chunk.doc_id))  # type: ignore[attr-defined]
        return hits

    return _to_passages


class PassageBM25(R.Retriever):
    """BM25 over whole passages (title + text) of the pool corpus, in memory, with the index's bm25s settings."""

    name = "bm25"

    def __init__(self, folder: object, corpus: Path, config: object) -> None:
        super().__init__(folder)  # type: ignore[arg-type]
        records = [r for r in read_jsonl(corpus) if (r.get("text") or "").strip()]
        self.ids = [str(r["_id"]) for r in records]
        self.titles = [r.get("title") or "" for r in records]
        texts = [f"{t}\n{r['text']}" if t else r["text"] for t, r in zip(self.titles, records, strict=True)]
        self.sparse = SparseIndex.build(texts, config)  # type: ignore[arg-type]

    def search_chunks(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.sparse.search(queries, k)

    def search(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        rows, scores = self.sparse.search(list(queries), k)
        return [[Hit(passage_id=self.ids[r], score=float(s), rank=i, source=self.name, title=self.titles[r])
                 for i, (r, s) in enumerate(((r, s) for r, s in zip(rr, ss, strict=True) if r >= 0), start=1)]
                for rr, ss in zip(rows.tolist(), scores.tolist(), strict=True)]


def rewrites_from_cache(path: Path) -> dict[str, str]:
    """Own rewrites by task id from an `--llm-cache` file of `local-rag train rewrites` (mode ``rewrite``)."""
    out: dict[str, str] = {}
    for record in read_jsonl(path):  # key: model|mode|n_queries|history|agent|task id (`LLMQueries._key`)
        parts = str(record["key"]).split("|")
        texts = record["queries"].get("rewrite") or []
        if parts[1] == "rewrite" and texts:
            out[parts[-1]] = texts[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", choices=["train", "test"])
    parser.add_argument("--modes", default="lastturn,rewrite", help="lastturn, rewrite (organizers'; own with --rewrites)")
    parser.add_argument("--rewrites", type=Path, help="own rewrites: a `train rewrites` cache (replaces the organizers')")
    parser.add_argument("--variants", default="max,max+0.25,max+0.5,max+1,bm25p,bm25p+max+0.5")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--domains", default=",".join(POOL3))
    parser.add_argument("--out", type=Path, help="write each variant's run files under OUT/<mode>-<variant>/")
    args = parser.parse_args()
    mtrag = default_mtrag_dir()
    settings = load_settings(profile=args.profile)
    split_ids = load_split(mtrag, args.split)
    own = rewrites_from_cache(args.rewrites) if args.rewrites else None
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    original = R.Retriever._to_passages
    results: dict[tuple[str, str], dict[str, dict[str, dict[str, float]]]] = {}
    embedder = None
    for domain in args.domains.split(","):
        settings.index = f"mtrag-{domain}"
        hybrid = open_retriever(settings, embedder)
        embedder = getattr(hybrid.retrievers.get("dense"), "embedder", embedder)
        chunk_bm25 = hybrid.retrievers["bm25"]
        passage_bm25: PassageBM25 | None = None
        items, qrels = items_from_task_files(mtrag / "retrieval_tasks", domain, modes)
        items = keep_split(items, split_ids, lambda i: i.id)
        for mode in modes:
            texts = {}
            for item in items:
                text = own.get(item.id) if (own is not None and mode == "rewrite") else item.given.get(mode)
                if text:
                    texts[item.id] = text
            if own is not None and mode == "rewrite":
                missing = [i.id for i in items if i.id not in texts]
                if missing:
                    sys.exit(f"{len(missing)} {domain} {args.split} turns have no own rewrite in {args.rewrites} "
                             f"(first: {missing[0]}): run `local-rag train rewrites --split {args.split}` first")
            for variant in variants:
                started = time.perf_counter()
                weight = float(variant.rsplit("+", 1)[1]) if "max+" in variant else None
                R.Retriever._to_passages = to_passages(aggregate(weight)) if weight is not None else original  # type: ignore[method-assign]
                if variant.startswith("bm25p"):
                    if passage_bm25 is None:
                        passage_bm25 = PassageBM25(hybrid.retrievers["bm25"].folder,
                                                   mtrag / "corpora" / "pool" / f"{domain}.jsonl", settings.sparse)
                    hybrid.retrievers["bm25"] = passage_bm25
                else:
                    hybrid.retrievers["bm25"] = chunk_bm25
                try:
                    ids = list(texts)
                    fused = hybrid.search_batch([[Query(texts[i], mode)] for i in ids], top_k=10)
                finally:
                    R.Retriever._to_passages = original  # type: ignore[method-assign]
                run = {}
                for qid, hits in zip(ids, fused, strict=True):
                    run[qid] = dict(zip([h.passage_id for h in hits], run_scores([h.score for h in hits]), strict=True))
                results.setdefault((mode, variant), {})[domain] = score_run(run, {q: qrels[q] for q in run if q in qrels})
                if args.out:
                    folder = args.out / f"{mode}-{variant}"
                    folder.mkdir(parents=True, exist_ok=True)
                    with (folder / f"run-{domain}.jsonl").open("w", encoding="utf-8") as fh:
                        for qid in ids:
                            fh.write(json.dumps({"task_id": qid, "Collection": domain, "contexts": [
                                {"document_id": d, "score": s} for d, s in run[qid].items()]}) + "\n")
                print(f"  {domain} {mode} {variant}: {len(ids)} queries, {time.perf_counter() - started:.1f} s",
                      file=sys.stderr, flush=True)
    print(f"# {args.split} split, pool-3 ({args.domains}), profile {args.profile}; "
          f"{'own rewrites from ' + str(args.rewrites) if own else 'organizers rewrite'}")
    print("| mode | variant | queries | nDCG@1 | nDCG@5 | nDCG@10 | R@5 | R@10 | " +
          " | ".join(f"{d} nDCG@5" for d in args.domains.split(",")) + " |")
    print("|---|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(args.domains.split(",")))
    for (mode, variant), per_domain in results.items():
        pooled = mean_metrics({q: m for d in per_domain.values() for q, m in d.items()})
        each = [mean_metrics(d).get("ndcg_cut_5", 0.0) for d in per_domain.values()]
        print(f"| {mode} | {variant} | {pooled['queries']} | {pooled['ndcg_cut_1']:.4f} | {pooled['ndcg_cut_5']:.4f} | "
              f"{pooled['ndcg_cut_10']:.4f} | {pooled['recall_5']:.4f} | {pooled['recall_10']:.4f} | "
              + " | ".join(f"{x:.4f}" for x in each) + " |")


if __name__ == "__main__":
    main()
