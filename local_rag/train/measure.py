"""Real texts to time a reranker on (MTRAG test-split last turns against pool passages), and first-stage recall."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


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
