"""Opening an index with the embedder it needs: the one place that wires settings to a `HybridRetriever`."""

from __future__ import annotations

from local_rag.embed.base import Embedder
from local_rag.index.folder import open_index
from local_rag.index.folder import wants_dense as wants_dense_models
from local_rag.retrieve.hybrid import HybridRetriever
from local_rag.settings import Settings


def open_retriever(settings: Settings, embedder: Embedder | None = None) -> HybridRetriever:
    """A `HybridRetriever` over ``settings.index`` with the retrievers settings name.

    The embedder is loaded only when a dense retriever is asked for; its model checksum must match the index's.
    """
    wants_dense = wants_dense_models(settings)
    if wants_dense and embedder is None:
        from local_rag.embed import load_embedder

        embedder = load_embedder(settings.embedder, settings.models_dir)
    folder = open_index(settings, model_checksum=embedder.checksum if wants_dense and embedder else None)
    return HybridRetriever(folder, settings, embedder if wants_dense else None)
