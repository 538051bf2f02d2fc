"""sentence-transformers backend (any local SentenceTransformer folder, e.g. all-MiniLM-L6-v2)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from local_rag._optional import require
from local_rag.device import cpu_has_amx, enforce_offline, quiet_transformers, torch_device
from local_rag.embed.base import Embedder, Kind, register_embedder
from local_rag.embed.twin import eligible, make_twin, open_twin
from local_rag.modelstore import resolve_model
from local_rag.settings import EmbedderConfig

if TYPE_CHECKING:
    from local_rag.embed.journal import EmbeddingJournal


class SentenceTransformerEmbedder(Embedder):
    """Texts through sentence-transformers; with ``query_onnx`` on a CPU in fp32, through the model's ONNX twin
    (`local_rag.embed.twin`) instead, except the vectors an index stores: the sentence-transformers model is then
    loaded only to build or extend an index."""

    backend = "sentence-transformers"

    def __init__(self, config: EmbedderConfig, models_dir: Path) -> None:
        super().__init__(config)
        enforce_offline()
        self.source, self.checksum = resolve_model(config.model, models_dir, role="embedder")
        self.folder = self.source
        self.name = config.model
        self.models_dir = models_dir
        self.model: Any = None  # the SentenceTransformer, loaded by `_load`
        self.twin = open_twin(config, models_dir, self.checksum, self.source) if eligible(config) else None
        if self.twin is None:
            self._load()
        else:
            self.device, self.dtype, self.dimension = "cpu", "fp32", self.twin.dimension

    def _load(self) -> None:
        config = self.config
        st = require("sentence_transformers", "the sentence-transformers embedder")
        self._torch = require("torch", "the sentence-transformers embedder")
        self.device = torch_device(config.device)
        quiet_transformers()
        self.model = st.SentenceTransformer(str(self.source), device=self.device, local_files_only=True)
        if config.max_length:
            self.model.max_seq_length = config.max_length
        dtype = config.dtype
        if dtype == "auto":
            dtype = "fp16" if self.device == "cuda" else ("bf16" if cpu_has_amx() else "fp32")
        if dtype == "fp16":
            self.model.half()
        self._autocast_bf16 = dtype == "bf16"
        self.dtype = dtype
        self.dimension = int(self.model.get_embedding_dimension() or 0)
        if self.twin is None and self.device == "cpu" and dtype == "fp32" and eligible(config):
            # the torch libraries are loaded now anyway: export the twin once, for the next process's queries
            if make_twin(self.models_dir, self.checksum, self.source) is not None:
                self.twin = open_twin(config, self.models_dir, self.checksum, self.source)

    def embed(self, texts: Sequence[str], kind: Kind = "passage", progress: bool = False,
              for_index: bool = False, journal: EmbeddingJournal | None = None) -> np.ndarray:
        """Through the twin when there is one, except the vectors an index stores (``for_index``): those come from
        the model itself, so an index is what it was."""
        if self.twin is not None and not for_index:
            return self.twin.embed(texts, kind, progress)
        return super().embed(texts, kind, progress, journal=journal)

    def embed_batch(self, texts: list[str], kind: Kind) -> np.ndarray:
        if self.model is None:
            self._load()
        model = self.model
        torch = self._torch
        ctx = (
            torch.autocast(device_type=self.device, dtype=torch.bfloat16)
            if self._autocast_bf16
            else contextlib.nullcontext()
        )
        with torch.inference_mode(), ctx:
            vectors = model.encode(
                texts,
                batch_size=len(texts),
                convert_to_numpy=False,
                convert_to_tensor=True,
                normalize_embeddings=False,
                show_progress_bar=False,
            )
        return vectors.float().cpu().numpy()


@register_embedder("sentence-transformers")
def _factory(config: EmbedderConfig, models_dir: Path) -> Embedder:
    return SentenceTransformerEmbedder(config, models_dir)
