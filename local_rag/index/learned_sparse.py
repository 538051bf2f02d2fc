"""BGE-M3's learned sparse (lexical) weights as a third index: a CSR matrix chunk x token id.

Optional (``embedder.bge_sparse: true`` with the ``bge-m3`` backend); scored by the dot product of query and chunk
weights, as FlagEmbedding's ``compute_lexical_matching_score`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.errors import IndexError_

MATRIX_FILE = "lexical.npz"


def _to_csr(weights: Sequence[dict[str, float]], vocab: int) -> Any:  # a scipy.sparse.csr_matrix (scipy has no stubs here)
    from scipy import sparse

    indptr, indices, data = [0], [], []
    for row in weights:
        for token, value in row.items():
            indices.append(int(token))
            data.append(float(value))
        indptr.append(len(indices))
    return sparse.csr_matrix((np.asarray(data, np.float32), np.asarray(indices, np.int64), np.asarray(indptr)), shape=(len(weights), vocab))


class LearnedSparseIndex:
    def __init__(self, matrix: Any) -> None:  # a scipy.sparse.csr_matrix
        self.matrix = matrix

    @property
    def size(self) -> int:
        return int(self.matrix.shape[0])

    @classmethod
    def build(cls, weights: Sequence[dict[str, float]], vocab: int) -> LearnedSparseIndex:
        return cls(_to_csr(weights, vocab))

    def save(self, folder: Path) -> None:
        from scipy import sparse

        sparse.save_npz(folder / MATRIX_FILE, self.matrix)

    @classmethod
    def load(cls, folder: Path) -> LearnedSparseIndex:
        from scipy import sparse

        try:
            return cls(sparse.load_npz(folder / MATRIX_FILE).tocsr())
        except (OSError, ValueError) as exc:
            raise IndexError_(f"learned sparse index in {folder} is unreadable ({exc}); rebuild it") from exc

    def search(self, query_weights: Sequence[dict[str, float]], k: int,
               mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, self.size)
        queries = _to_csr(query_weights, self.matrix.shape[1])
        scores = (self.matrix @ queries.T).T.toarray()
        if mask is not None:  # rows outside a scope (`local_rag.retrieve.scope`) score 0: never returned
            scores[:, ~mask] = 0
        rows = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        top = np.take_along_axis(scores, rows, axis=1).astype(np.float32)
        rows[top <= 0] = -1
        return rows.astype(np.int64), top
