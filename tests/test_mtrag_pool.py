"""The Task A scorer against an independent measurement: BM25 last-turn on the real MTRAG pool corpora.

The pool README measured bm25s last-turn nDCG@5 of 0.229 (clapnq) and 0.100 (fiqa) on these pools; our chunked
BM25 index and pytrec_eval scoring must land close to that.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from local_rag.evaluation.retrieval import items_from_task_files, run_domain
from local_rag.index import build_index, open_index
from local_rag.retrieve import HybridRetriever

from .conftest import MTRAG, make_settings, needs_minilm, needs_mtrag


@needs_mtrag
@needs_minilm
@pytest.mark.parametrize(("domain", "expected"), [("clapnq", 0.229), ("fiqa", 0.100)])
def test_bm25_lastturn_matches_the_independent_figure(tmp_path: Path, domain: str, expected: float):
    settings = make_settings(tmp_path, index=f"mtrag-{domain}", dense={"enabled": False}, retrieval={"retrievers": ["bm25"]})
    build_index(settings, MTRAG / "corpora" / "pool" / f"{domain}.jsonl", progress=False)
    hybrid = HybridRetriever(open_index(settings), settings)
    items, qrels = items_from_task_files(MTRAG / "retrieval_tasks", domain, ["lastturn"])
    result = run_domain(hybrid.search, items, qrels, ["lastturn"], tmp_path / "run.jsonl", progress=False)
    assert result["metrics"]["queries"] == len(items)
    assert result["metrics"]["ndcg_cut_5"] == pytest.approx(expected, abs=0.02)
