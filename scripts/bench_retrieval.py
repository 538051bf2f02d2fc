"""Task A figures on the MTRAG pool corpora: BM25, dense and hybrid, with last-turn and rewrite queries.

Needs the pool indexes (`bash scripts/build_pool_indexes.sh`). Writes docs/benchmarks/retrieval.json, .md and .png.

    .venv/bin/python scripts/bench_retrieval.py [--domains clapnq,cloud,fiqa,govt] [--profile cpu-test]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from local_rag.evaluation.retrieval import items_from_task_files, markdown_table, run_domain, summarize  # noqa: E402
from local_rag.settings import load_settings  # noqa: E402
from local_rag.sysinfo import machine, peak_rss_mb  # noqa: E402

CONFIGS = [
    ("BM25", ["bm25"]),
    ("dense", ["dense"]),
    ("hybrid (RRF)", ["bm25", "dense"]),
]
MODES = ["lastturn", "rewrite"]


def throughput(settings, embedder, corpus: Path, n: int = 1000) -> dict:  # type: ignore[no-untyped-def]
    """Build throughput on the first ``n`` passages of a pool corpus (quiet machine assumed)."""
    from local_rag.corpus.readers import read_corpus
    from local_rag.index.dense import DenseIndex
    from local_rag.index.folder import _chunk_passages, index_text
    from local_rag.index.sparse import SparseIndex

    passages = []
    for p in read_corpus(corpus):
        passages.append(p)
        if len(passages) >= n:
            break
    started = time.perf_counter()
    chunks, _ = _chunk_passages(settings, passages, progress=False)
    chunk_s = time.perf_counter() - started
    texts = [index_text(c) for c in chunks]
    started = time.perf_counter()
    SparseIndex.build(texts, settings.sparse)
    bm25_s = time.perf_counter() - started
    started = time.perf_counter()
    vectors = embedder.embed(texts, kind="passage")
    embed_s = time.perf_counter() - started
    started = time.perf_counter()
    DenseIndex.build(vectors, settings.dense)
    faiss_s = time.perf_counter() - started
    return {
        "corpus": corpus.name, "passages": len(passages), "chunks": len(chunks),
        "chunking_passages_per_s": round(len(passages) / chunk_s, 1),
        "bm25_passages_per_s": round(len(passages) / bm25_s, 1),
        "embedding_passages_per_s": round(len(passages) / embed_s, 1),
        "embedding_chunks_per_s": round(len(chunks) / embed_s, 1),
        "faiss_flat_vectors_per_s": round(len(chunks) / faiss_s, 1),
        "embedder_dtype": getattr(embedder, "dtype", ""),
    }


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels = list(results)
    sets = [d for d in ("clapnq", "cloud", "fiqa", "govt") if d in results[labels[0]]["domains"]] + ["pool-3"]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        summary = results[label]
        values = [summary["domains"][s]["metrics"]["ndcg_cut_5"] if s in summary["domains"] else summary.get(s, {}).get("ndcg_cut_5", 0) for s in sets]
        ax.bar(np.arange(len(sets)) + i * width, values, width, label=label)
    ax.set_xticks(np.arange(len(sets)) + width * (len(labels) - 1) / 2, sets)
    ax.set_ylabel("nDCG@5")
    ax.set_title("MTRAG Task A on the pool corpora (all-MiniLM-L6-v2 + bm25s, CPU)")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domains", default="clapnq,cloud,fiqa,govt")
    parser.add_argument("--profile", default="cpu-test")
    parser.add_argument("--tasks-root", default=str(ROOT.parent / "shared" / "mtrag" / "retrieval_tasks"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks"))
    args = parser.parse_args()
    from local_rag.embed import load_embedder
    from local_rag.retrieve.stack import open_retriever

    domains = args.domains.split(",")
    settings = load_settings(args.profile)
    embedder = load_embedder(settings.embedder, settings.models_dir)
    results: dict = {}
    for name, retrievers in CONFIGS:
        for mode in MODES:
            label = f"{name}, {mode}"
            per_domain = {}
            for domain in domains:
                s = settings.model_copy(deep=True)
                s.index = f"mtrag-{domain}"
                s.retrieval.retrievers = list(retrievers)  # type: ignore[assignment]
                s.retrieval.query_modes = [mode]
                retriever = open_retriever(s, embedder)
                items, qrels = items_from_task_files(args.tasks_root, domain, [mode])
                per_domain[domain] = run_domain(retriever.search, items, qrels, [mode], None, progress=False)
            results[label] = summarize(per_domain)
            pool = results[label].get("pool-3", {})
            print(f"{label:28} pool-3 nDCG@5 {pool.get('ndcg_cut_5', 0):.4f}  R@10 {pool.get('recall_10', 0):.4f}", flush=True)
    build = {}
    for domain in domains:
        manifest = json.loads((settings.indexes_dir / f"mtrag-{domain}" / "manifest.json").read_text())
        build[domain] = {"passages": manifest["passages"], "chunks": manifest["chunks"], **manifest["stats"]}
    pool_file = Path(args.tasks_root).parent / "corpora" / "pool" / "clapnq.jsonl"
    report = {
        "command": "python scripts/bench_retrieval.py --domains " + args.domains + " --profile " + args.profile,
        "machine": machine(),
        "embedder": settings.embedder.model,
        "chunker": settings.chunker.model_dump(),
        "fusion": settings.fusion.model_dump(),
        "results": results,
        "index_builds": build,
        "throughput_1000_clapnq": throughput(settings, embedder, pool_file),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "retrieval.json").write_text(json.dumps(report, indent=2) + "\n")
    md = [f"<!-- generated by {report['command']} -->"]
    for label, summary in results.items():
        md.append(markdown_table(summary, label))
    (out / "retrieval.md").write_text("\n".join(md))
    plot(results, out / "retrieval.png")
    print(f"written to {out}/retrieval.{{json,md,png}}; peak RSS {report['peak_rss_mb']} MB")
    print(json.dumps(report["throughput_1000_clapnq"]))


if __name__ == "__main__":
    main()
