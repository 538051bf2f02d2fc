"""Sparse and dense retrievers over an opened index folder.

A retriever ranks chunks, then maps them to passages: a passage's score is its best chunk's (the MTRAG
convention for re-chunked corpora). One required method, `Retriever.search_chunks`; `Retriever.search` derives the
passage lists from it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from local_rag.embed.base import Embedder
from local_rag.errors import IndexError_
from local_rag.index.folder import IndexFolder
from local_rag.records import Hit
from local_rag.retrieve.scope import ScopedRows

CHUNK_DEPTH_FACTOR = 3  # chunks fetched per passage wanted, so that passages with several chunks still fill k


class Retriever(ABC):
    name: str = ""

    def __init__(self, folder: IndexFolder) -> None:
        self.folder = folder

    @abstractmethod
    def search_chunks(self, queries: Sequence[str], k: int, scoped: ScopedRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` chunk rows and scores per query (rows ``-1`` for no result), from the rows of ``scoped`` only
        when given."""

    def search(self, queries: Sequence[str], k: int = 10, scoped: ScopedRows | None = None) -> list[list[Hit]]:
        """Top-``k`` passages for each query, best first; ties broken by passage id; only passages of the documents
        in ``scoped`` when given (`local_rag.retrieve.scope`).

        Example:
            >>> BM25Retriever(folder).search(["what is bm25"], k=5)  # doctest: +SKIP
        """
        if not queries:
            return []
        depth = min(len(self.folder.chunks) if scoped is None else scoped.rows, k * CHUNK_DEPTH_FACTOR)
        if depth == 0:
            return [[] for _ in queries]
        rows, scores = self.search_chunks(queries, depth, scoped)
        return [self._to_passages(r, s, k) for r, s in zip(rows, scores, strict=True)]

    def _to_passages(self, rows: np.ndarray, scores: np.ndarray, k: int) -> list[Hit]:
        best: dict[str, Hit] = {}
        valid = scores[rows >= 0]
        # rows best first (FAISS and BM25 return them so): once a score falls below the k-th distinct passage's,
        # no later row can change the top k, and its chunk is never read (a row read parses a line of chunks.jsonl)
        ordered = bool(np.all(valid[1:] <= valid[:-1]))
        kth: float | None = None
        for row, score in zip(rows.tolist(), scores.tolist(), strict=True):
            if row < 0:
                continue
            if ordered and kth is not None and score < kth:
                break
            chunk = self.folder.chunks[row]
            kept = best.get(chunk.passage_id)
            if kept is None or score > kept.score:
                best[chunk.passage_id] = Hit(
                    passage_id=chunk.passage_id,
                    score=float(score),
                    source=self.name,
                    chunk_id=chunk.id,
                    title=chunk.title,
                    text=chunk.text,
                    url=chunk.url,
                    doc_id=chunk.doc_id,
                    page=chunk.page,
                    section=chunk.section,
                    line=chunk.line,
                )
                if kth is None and len(best) == k:
                    kth = score
        ranked = sorted(best.values(), key=lambda h: (-h.score, h.passage_id))[:k]
        for rank, hit in enumerate(ranked, start=1):
            hit.rank = rank
        return ranked


class BM25Retriever(Retriever):
    name = "bm25"

    def __init__(self, folder: IndexFolder) -> None:
        super().__init__(folder)
        if folder.sparse is None:
            raise IndexError_(f"index {folder.path} has no sparse part loaded")
        self.sparse = folder.sparse

    def search_chunks(self, queries: Sequence[str], k: int, scoped: ScopedRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        if scoped is None:
            return self.sparse.search(queries, k)
        if self.folder.manifest.backend == "qdrant":
            return self.sparse.search(queries, k, where=_where(scoped))  # type: ignore[call-arg]
        return self.sparse.search(queries, k, mask=scoped.mask)


class DenseRetriever(Retriever):
    """Dense retrieval. Queries are embedded one by one (cached): batch composition changes padding and so the
    last bits of bf16/fp16 matmuls, and batched retrieval must return exactly what single-query retrieval does."""

    name = "dense"

    def __init__(self, folder: IndexFolder, embedder: Embedder) -> None:
        super().__init__(folder)
        if folder.dense is None:
            raise IndexError_(f"index {folder.path} has no dense part loaded")
        self.dense = folder.dense
        self.embedder = embedder
        self._cache: dict[str, np.ndarray] = {}

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        for text in queries:
            if text not in self._cache:
                if len(self._cache) > 10_000:
                    self._cache.clear()
                self._cache[text] = self.embedder.embed([text], kind="query")[0]
        return np.stack([self._cache[t] for t in queries])

    def search_chunks(self, queries: Sequence[str], k: int, scoped: ScopedRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        vectors = self.embed_queries(queries)
        if scoped is not None and self.folder.manifest.backend == "qdrant":
            return self.dense.search(vectors, k, where=_where(scoped))  # type: ignore[call-arg]
        rows = np.empty((len(queries), k), dtype=np.int64)
        scores = np.empty((len(queries), k), dtype=np.float32)
        # one query per FAISS call too: BLAS (used for >= 20 queries) and the direct kernel round differently
        for i in range(len(queries)):
            if scoped is None:
                r, s = self.dense.search(vectors[i : i + 1], k)
            else:  # exact over the scope's stored vectors (`DenseIndex.search_rows`)
                r, s = self.dense.search_rows(vectors[i : i + 1], k, scoped.mask)
            rows[i], scores[i] = r[0], s[0]
        return rows, scores


class LearnedSparseRetriever(Retriever):
    """BGE-M3 learned sparse (lexical) weights: query weights . chunk weights."""

    name = "bge-sparse"

    def __init__(self, folder: IndexFolder, embedder: Embedder) -> None:
        super().__init__(folder)
        if folder.learned is None or not hasattr(embedder, "lexical_weights"):
            raise IndexError_(f"index {folder.path} has no learned sparse part, or the embedder cannot make weights")
        self.learned = folder.learned
        self.embedder = embedder

    def search_chunks(self, queries: Sequence[str], k: int, scoped: ScopedRows | None = None) -> tuple[np.ndarray, np.ndarray]:
        weights = [self.embedder.lexical_weights([q])[0] for q in queries]
        return self.learned.search(weights, k, None if scoped is None else scoped.mask)


def _where(scoped: ScopedRows) -> dict[str, list[str]]:
    """A Qdrant collection's payload filter for the documents of ``scoped``."""
    return {"doc_id": list(scoped.documents)}
