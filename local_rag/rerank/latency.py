"""Timing a reranker: seconds per ``score(query, passages[:n])`` call for each candidate count (`local-rag train
latency`, `local_rag.bench.encoders`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from local_rag.rerank.base import Reranker
from local_rag.stats import percentile


def reranker_latency(reranker: Reranker, queries: Sequence[str], passages: Sequence[str], counts: Sequence[int],
                     warm_each_count: bool = False) -> dict[str, Any]:
    """p50, p95 and mean seconds of ``score(query, passages[:n])`` for each ``n`` in ``counts``, over ``queries``.
    One warm-up call first; ``warm_each_count``: one at each count instead (a GPU's first call at a new size is slow)."""
    if not warm_each_count:
        reranker.score(queries[0], list(passages[:2]))
    out: dict[str, Any] = {"queries": len(queries), "counts": {}}
    for n in counts:
        if warm_each_count:
            reranker.score(queries[0], list(passages[:n]))
        times = []
        for query in queries:
            started = time.perf_counter()
            reranker.score(query, list(passages[:n]))
            times.append(time.perf_counter() - started)
        out["counts"][str(n)] = {"p50_s": round(percentile(times, 0.5), 4), "p95_s": round(percentile(times, 0.95), 4),
                                 "mean_s": round(sum(times) / len(times), 4)}
    return out
