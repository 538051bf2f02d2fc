"""Bi-encoder re-scoring as a reranker: cosine of query and passage embeddings from any embedder model.

It checks a fine-tuned embedder cheaply (re-score the first stage's top candidates, no re-indexing) and gives the
decision stages a dense score per passage.

A passage's vector depends on its text alone, so the re-scorer remembers the last ``MEMORY`` passages' vectors and
embeds only the candidates it has not seen: a conversation's turns, and the queries of one collection that `train
adapt` measures, keep meeting the same passages (session 45: 231 queries x 20 candidates of a 647-chunk index are
~650 passages, not 4,620).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from local_rag.embed import load_embedder
from local_rag.rerank.base import Reranker, register_reranker
from local_rag.settings import EmbedderConfig, RerankerConfig

MEMORY = 4096  # passage vectors kept (MiniLM: 6 MB; a 1,024-dimension model: 16 MB)


class BiEncoderReranker(Reranker):
    backend = "bi-encoder"

    def __init__(self, config: RerankerConfig, models_dir: Path) -> None:
        super().__init__(config)
        embedder_config = EmbedderConfig(model=config.model, device=config.device, batch_size=config.batch_size,
                                         max_length=config.max_length)
        self.embedder = load_embedder(embedder_config, models_dir)
        self.checksum = self.embedder.checksum
        self.name = config.model
        self.memory: dict[str, np.ndarray] = {}  # passage text -> vector, the least recently met first

    def score(self, query: str, texts: list[str]) -> list[float]:
        q = self.embedder.embed([query], kind="query")
        new = [t for t in dict.fromkeys(texts) if t not in self.memory]
        fresh = dict(zip(new, self.embedder.embed(new, kind="passage"), strict=True)) if new else {}
        vectors = np.stack([fresh[t] if t in fresh else self.memory[t] for t in texts]) if texts else q[:0]
        for t in dict.fromkeys(texts):  # the most recently met last: the oldest go first
            self.memory[t] = fresh[t] if t in fresh else self.memory.pop(t)
        for old in list(self.memory)[:max(0, len(self.memory) - MEMORY)]:
            del self.memory[old]
        return [float(x) for x in (vectors @ q[0])]


@register_reranker("bi-encoder")
def _factory(config: RerankerConfig, models_dir: Path) -> Reranker:
    return BiEncoderReranker(config, models_dir)
