"""BGE-M3 through FlagEmbedding: dense vectors, and optionally its learned sparse (lexical) weights."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from local_rag._optional import require
from local_rag.device import enforce_offline, torch_device
from local_rag.embed.base import Embedder, Kind, register_embedder
from local_rag.errors import ModelError
from local_rag.modelstore import resolve_model
from local_rag.settings import EmbedderConfig

REQUIRED_HEADS = ("colbert_linear.pt", "sparse_linear.pt")


def check_bge_m3_folder(folder: Path) -> None:
    """FlagEmbedding silently makes *random* ColBERT/sparse heads when their files are missing: refuse instead."""
    missing = [name for name in REQUIRED_HEADS if not (folder / name).exists()]
    if missing:
        raise ModelError(
            f"{folder} is not a complete BGE-M3 folder: {', '.join(missing)} missing "
            "(FlagEmbedding would silently use random heads); re-fetch it with `local-rag models pull bge-m3`"
        )


class BGEM3Embedder(Embedder):
    backend = "bge-m3"

    def __init__(self, config: EmbedderConfig, models_dir: Path) -> None:
        super().__init__(config)
        enforce_offline()
        folder, self.checksum = resolve_model(config.model, models_dir, role="embedder")
        self.folder = folder
        check_bge_m3_folder(folder)
        flag = require("FlagEmbedding", "the BGE-M3 embedder")
        self.device = torch_device(config.device)
        use_fp16 = config.dtype in ("auto", "fp16") and self.device == "cuda"
        self.model = flag.BGEM3FlagModel(
            str(folder), use_fp16=use_fp16, devices="cuda:0" if self.device == "cuda" else "cpu"
        )
        self.name = config.model
        self.max_length = config.max_length or 8192
        self.dimension = int(self.embed_batch(["dimension probe"], "query").shape[1])

    def _encode(self, texts: list[str], sparse: bool) -> dict[str, Any]:
        return self.model.encode(
            texts,
            batch_size=len(texts),
            max_length=self.max_length,
            return_dense=True,
            return_sparse=sparse,
            return_colbert_vecs=False,
        )

    def embed_batch(self, texts: list[str], kind: Kind) -> np.ndarray:
        return np.asarray(self._encode(texts, sparse=False)["dense_vecs"], dtype=np.float32)

    def lexical_weights(self, texts: list[str]) -> list[dict[str, float]]:
        """BGE-M3's learned sparse weights (token -> weight) for each text."""
        weights = self._encode(texts, sparse=True)["lexical_weights"]
        return [{str(k): float(v) for k, v in w.items()} for w in weights]


@register_embedder("bge-m3")
def _factory(config: EmbedderConfig, models_dir: Path) -> Embedder:
    return BGEM3Embedder(config, models_dir)
