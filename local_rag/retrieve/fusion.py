"""Merging ranked lists of `Hit` from several retrievers and query variants.

- `rrf`: weighted reciprocal rank fusion, ``score(p) = sum_l w_l / (k + rank_l(p))`` (ranks from 1).
- `max_merge`: the dual-query merge of the 5ting system generalised: each list's scores are min-max normalised
  to [0, 1] and weighted, and a passage keeps its best one.

Both are independent of the order of the input lists (lists are visited in key order, ties broken by passage id).
"""

from __future__ import annotations

from collections.abc import Mapping

from local_rag.records import Hit


def list_weight(key: str, weights: Mapping[str, float]) -> float:
    """Weight of the list ``retriever:mode``: exact key, else the retriever, else the mode, else 1."""
    if key in weights:
        return weights[key]
    retriever, _, mode = key.partition(":")
    if retriever in weights:
        return weights[retriever]
    if mode in weights:
        return weights[mode]
    return 1.0


def merge_hits(lists: Mapping[str, list[Hit]], scores: dict[str, float], source: str, top_k: int) -> list[Hit]:
    """The ``top_k`` passages by ``scores`` as hits: display fields from the first list (in key order) that has
    the passage, and each list's own score of it in ``scores``."""
    best: dict[str, Hit] = {}
    per_list: dict[str, dict[str, float]] = {}
    for key in sorted(lists):
        for hit in lists[key]:
            per_list.setdefault(hit.passage_id, {})[key] = hit.score
            best.setdefault(hit.passage_id, hit)  # display fields (chunk, title) from the first list, in key order
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:top_k]
    out = []
    for rank, (pid, score) in enumerate(ranked, start=1):
        hit = best[pid]
        out.append(
            Hit(
                passage_id=pid,
                score=float(score),
                rank=rank,
                source=source,
                chunk_id=hit.chunk_id,
                title=hit.title,
                text=hit.text,
                url=hit.url,
                doc_id=hit.doc_id,
                scores=dict(sorted(per_list[pid].items())),
                page=hit.page,
                section=hit.section,
                line=hit.line,
            )
        )
    return out


def rrf(lists: Mapping[str, list[Hit]], k: int = 60, weights: Mapping[str, float] | None = None, top_k: int = 10) -> list[Hit]:
    """Weighted reciprocal rank fusion of ranked lists keyed ``retriever:mode``.

    Example:
        >>> a = [Hit("p1", 3.0), Hit("p2", 2.0)]
        >>> b = [Hit("p2", 0.9), Hit("p3", 0.8)]
        >>> [h.passage_id for h in rrf({"bm25:lastturn": a, "dense:lastturn": b})]
        ['p2', 'p1', 'p3']
    """
    weights = weights or {}
    fused: dict[str, float] = {}
    for key in sorted(lists):
        w = list_weight(key, weights)
        ranked = sorted(lists[key], key=lambda h: (-h.score, h.passage_id))
        for rank, hit in enumerate(ranked, start=1):
            fused[hit.passage_id] = fused.get(hit.passage_id, 0.0) + w / (k + rank)
    return merge_hits(lists, fused, "rrf", top_k)


def max_merge(lists: Mapping[str, list[Hit]], weights: Mapping[str, float] | None = None, top_k: int = 10) -> list[Hit]:
    """Max over lists of min-max normalised, weighted scores."""
    weights = weights or {}
    fused: dict[str, float] = {}
    for key in sorted(lists):
        hits = lists[key]
        if not hits:
            continue
        w = list_weight(key, weights)
        lo = min(h.score for h in hits)
        hi = max(h.score for h in hits)
        span = hi - lo
        for hit in hits:
            value = w * ((hit.score - lo) / span if span > 0 else 1.0)
            if value > fused.get(hit.passage_id, float("-inf")):
                fused[hit.passage_id] = value
    return merge_hits(lists, fused, "max", top_k)


def fuse(
    lists: Mapping[str, list[Hit]], method: str = "rrf", k: int = 60, weights: Mapping[str, float] | None = None, top_k: int = 10
) -> list[Hit]:
    """Fuse with the method settings name (``rrf`` or ``max``)."""
    if method == "rrf":
        return rrf(lists, k=k, weights=weights, top_k=top_k)
    if method == "max":
        return max_merge(lists, weights=weights, top_k=top_k)
    raise ValueError(f"unknown fusion method {method!r}; valid: max, rrf")
