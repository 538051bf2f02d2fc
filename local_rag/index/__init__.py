"""Index folders: a bm25s sparse index and a FAISS dense index over the same chunks, with a manifest."""

from __future__ import annotations

from local_rag.index.folder import IndexFolder, add_documents, build_index, open_index, remove_documents

__all__ = ["IndexFolder", "add_documents", "build_index", "open_index", "remove_documents"]
