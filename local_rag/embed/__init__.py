"""Dense embedders: one interface (`Embedder.embed_batch`), one backend per file, an explicit registry."""

from __future__ import annotations

from local_rag.embed.base import Embedder, register_embedder
from local_rag.embed.loader import load_embedder

__all__ = ["Embedder", "load_embedder", "register_embedder"]
