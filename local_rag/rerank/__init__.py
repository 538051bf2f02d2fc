"""Cross-encoder rerankers: one interface (`Reranker.score`), one backend per file, an explicit registry."""

from __future__ import annotations

from local_rag.rerank.base import Reranker, register_reranker
from local_rag.rerank.loader import load_reranker

__all__ = ["Reranker", "load_reranker", "register_reranker"]
