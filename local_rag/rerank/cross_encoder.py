"""sentence-transformers `CrossEncoder` backend (e.g. bge-reranker-v2-m3): fp16 on GPU, batched."""

from __future__ import annotations

from pathlib import Path

from local_rag._optional import require
from local_rag.device import enforce_offline, quiet_transformers, torch_device
from local_rag.modelstore import resolve_model
from local_rag.rerank.base import Reranker, register_reranker
from local_rag.settings import RerankerConfig


class SentenceTransformersReranker(Reranker):
    backend = "sentence-transformers"

    def __init__(self, config: RerankerConfig, models_dir: Path) -> None:
        super().__init__(config)
        enforce_offline()
        self.folder, self.checksum = resolve_model(config.model, models_dir, role="reranker")
        st = require("sentence_transformers", "the cross-encoder reranker")
        self._torch = require("torch", "the cross-encoder reranker")
        self.device = torch_device(config.device)
        quiet_transformers()
        self.model = st.CrossEncoder(
            str(self.folder), device=self.device, max_length=config.max_length, local_files_only=True
        )
        if self.device == "cuda":
            self.model.model.half()
        self.name = config.model

    def score(self, query: str, texts: list[str]) -> list[float]:
        with self._torch.inference_mode():
            scores = self.model.predict(
                [(query, t) for t in texts], batch_size=self.config.batch_size, show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [float(s) for s in scores.reshape(len(texts), -1)[:, 0]]


@register_reranker("sentence-transformers")
def _factory(config: RerankerConfig, models_dir: Path) -> Reranker:
    return SentenceTransformersReranker(config, models_dir)
