"""Retrieval: sparse and dense retrievers over an index folder, query variants, and rank fusion."""

from __future__ import annotations

from local_rag.retrieve.base import Searcher
from local_rag.retrieve.fusion import fuse, max_merge, rrf
from local_rag.retrieve.hybrid import HybridRetriever
from local_rag.retrieve.queries import QUERY_MODES, conversation_queries
from local_rag.retrieve.retrievers import BM25Retriever, DenseRetriever, Retriever

__all__ = [
    "BM25Retriever",
    "DenseRetriever",
    "HybridRetriever",
    "QUERY_MODES",
    "Retriever",
    "Searcher",
    "conversation_queries",
    "fuse",
    "max_merge",
    "rrf",
]
