"""Bi-encoder re-scoring as a reranker: cosine of query and passage embeddings from any embedder model.

It checks a fine-tuned embedder cheaply (re-score the first stage's top candidates, no re-indexing) and gives the
decision stages a dense score per passage.
"""

from __future__ import annotations

from pathlib import Path

from local_rag.embed import load_embedder
from local_rag.rerank.base import Reranker, register_reranker
from local_rag.settings import EmbedderConfig, RerankerConfig


class BiEncoderReranker(Reranker):
    backend = "bi-encoder"

    def __init__(self, config: RerankerConfig, models_dir: Path) -> None:
        super().__init__(config)
        embedder_config = EmbedderConfig(model=config.model, device=config.device, batch_size=config.batch_size,
                                         max_length=config.max_length)
        self.embedder = load_embedder(embedder_config, models_dir)
        self.checksum = self.embedder.checksum
        self.name = config.model

    def score(self, query: str, texts: list[str]) -> list[float]:
        q = self.embedder.embed([query], kind="query")
        p = self.embedder.embed(texts, kind="passage")
        return [float(x) for x in (p @ q[0])]


@register_reranker("bi-encoder")
def _factory(config: RerankerConfig, models_dir: Path) -> Reranker:
    return BiEncoderReranker(config, models_dir)
