"""Opening an index with the embedder it needs: the one place that wires settings to a `HybridRetriever` (or, with
``retrieval.also``, to a `JointRetriever` over several indexes)."""

from __future__ import annotations

from local_rag.embed.base import Embedder
from local_rag.index.folder import open_index
from local_rag.index.folder import wants_dense as wants_dense_models
from local_rag.retrieve.hybrid import HybridRetriever
from local_rag.retrieve.joint import JointRetriever, member_settings
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


def open_searcher(settings: Settings, embedder: Embedder | None = None) -> HybridRetriever | JointRetriever:
    """What the commands that answer search: `open_retriever`, or with ``retrieval.also`` a `JointRetriever` over
    ``settings.index`` and those indexes (each with its own shape, `member_settings`; one embedder per model)."""
    first = open_retriever(settings, embedder)
    also = [name for name in settings.retrieval.also if name != settings.index]
    if not also:
        return first
    members = {settings.index: first}
    loaded = {first.embedder.checksum: first.embedder} if first.embedder is not None else {}
    for name in also:
        own = member_settings(settings, name)
        shared = None
        if wants_dense_models(own):
            from local_rag.index.manifest import IndexManifest

            dense = IndexManifest.load(own.index_dir).dense or {}
            shared = loaded.get(str(dense.get("model_checksum")))  # the same model's files: loaded once
        member = members[name] = open_retriever(own, shared)
        if member.embedder is not None:
            loaded.setdefault(member.embedder.checksum, member.embedder)
    return JointRetriever(members)
