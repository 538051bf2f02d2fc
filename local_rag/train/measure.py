"""Timing a reranker per candidate count on real texts: MTRAG test-split last turns against pool passages."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from local_rag.rerank.base import Reranker
from local_rag.stats import percentile


def sample_texts(mtrag_dir: str | Path, n_queries: int, n_passages: int, domain: str = "clapnq") -> tuple[list[str], list[str]]:
    """``n_queries`` test-split last turns and the first ``n_passages`` pool passages of ``domain``."""
    from local_rag.evaluation.splits import keep_split, load_split
    from local_rag.mtrag import load_queries, read_jsonl
    from local_rag.train.data import passage_text

    mtrag_dir = Path(mtrag_dir)
    queries = load_queries(mtrag_dir / "retrieval_tasks" / domain / f"{domain}_lastturn.jsonl")
    test = keep_split(list(queries), load_split(mtrag_dir, "test"), lambda q: q)
    records = read_jsonl(mtrag_dir / "corpora" / "pool" / f"{domain}.jsonl")
    passages = [passage_text(r) for r in records if len(str(r.get("text", ""))) > 400][:n_passages]
    return [queries[q] for q in test[:n_queries]], passages


def reranker_latency(reranker: Reranker, queries: Sequence[str], passages: Sequence[str], counts: Sequence[int]) -> dict[str, Any]:
    """Seconds per ``score(query, passages[:n])`` call for each ``n`` in ``counts``: p50, p95, mean (one warm-up)."""
    reranker.score(queries[0], list(passages[:2]))
    out: dict[str, Any] = {"queries": len(queries), "counts": {}}
    for n in counts:
        times = []
        for query in queries:
            started = time.perf_counter()
            reranker.score(query, list(passages[:n]))
            times.append(time.perf_counter() - started)
        out["counts"][str(n)] = {"p50_s": round(percentile(times, 0.5), 4), "p95_s": round(percentile(times, 0.95), 4),
                                 "mean_s": round(sum(times) / len(times), 4)}
    return out


def recall_at_depths(hits: Sequence[Sequence[str]], gold: Sequence[set[str]], depths: Sequence[int]) -> dict[str, float]:
    """Mean recall at each depth over queries (``hits[i]`` ranked passage ids, ``gold[i]`` the relevant ones): the
    ceiling a reranker of the top ``d`` can reach.

    Example:
        >>> recall_at_depths([["a", "b", "c"]], [{"c", "z"}], [1, 3])
        {'recall@1': 0.0, 'recall@3': 0.5}
    """
    out = {}
    for d in depths:
        values = [len(set(h[:d]) & g) / len(g) for h, g in zip(hits, gold, strict=True) if g]
        out[f"recall@{d}"] = round(sum(values) / len(values), 4) if values else 0.0
    return out
