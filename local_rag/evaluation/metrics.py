"""Task A metrics as the official script computes them: pytrec_eval ``ndcg_cut`` and ``recall`` at 1/3/5/10 with
binary qrels, averaged over queries per collection, then weighted by query count across collections.

A query with no retrieved passage scores 0 (it stays in the average).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from local_rag._optional import require

KS = (1, 3, 5, 10)


def metric_names(ks: Sequence[int] = KS) -> list[str]:
    return [f"ndcg_cut_{k}" for k in ks] + [f"recall_{k}" for k in ks]


def run_scores(scores: Sequence[float]) -> list[float]:
    """``scores`` (best first) rounded to 6 decimals and made strictly decreasing, so that the official scorer
    (pytrec_eval, which ranks a run by score and breaks ties by document id) sees the system's own order. Ties are
    common after reciprocal-rank fusion (ranks 1 + 2 and 2 + 1 score the same); before session 34 they were written
    as they were, and the scorer reordered them.

    Example:
        >>> run_scores([0.5, 0.0325, 0.0325, 0.04])
        [0.5, 0.0325, 0.032499, 0.032498]
    """
    out: list[float] = []
    for score in scores:
        value = round(float(score), 6)
        if out and value >= out[-1]:
            value = round(out[-1] - 1e-6, 6)
        out.append(value)
    return out


def score_run(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]], ks: Sequence[int] = KS
) -> dict[str, dict[str, float]]:
    """Per-query metrics for every query in ``qrels``.

    Example:
        >>> score_run({"q": {"a": 2.0, "b": 1.0}}, {"q": {"b": 1}})["q"]["recall_1"]
        0.0
    """
    pytrec_eval = require("pytrec_eval", "Task A metrics")
    names = metric_names(ks)
    measures = {f"ndcg_cut.{','.join(map(str, ks))}", f"recall.{','.join(map(str, ks))}"}
    binary = {q: {d: 1 if int(r) > 0 else 0 for d, r in docs.items()} for q, docs in qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(binary, measures)
    clean_run = {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items() if q in binary and docs}
    scored = evaluator.evaluate(clean_run)
    return {q: {n: float(scored.get(q, {}).get(n, 0.0)) for n in names} for q in binary}


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    if not per_query:
        return {}
    names = list(next(iter(per_query.values())))
    return {n: sum(m[n] for m in per_query.values()) / len(per_query) for n in names} | {"queries": len(per_query)}


def weighted_average(per_domain: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Query-weighted average of per-domain means (each must carry ``queries``)."""
    total = sum(int(m["queries"]) for m in per_domain.values())
    if not total:
        return {}
    names = [n for n in next(iter(per_domain.values())) if n != "queries"]
    out = {n: sum(m[n] * m["queries"] for m in per_domain.values()) / total for n in names}
    out["queries"] = total
    return out
