"""The `Embedder` interface and the registry of backends (`local_rag.embed.loader` fills it and picks one).

A backend implements only `Embedder.embed_batch`; `Embedder.embed` adds batching, the progress bar, prefixes and
L2 normalization (so FAISS inner product is cosine similarity).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from local_rag.settings import EmbedderConfig

if TYPE_CHECKING:
    from local_rag.embed.journal import EmbeddingJournal

Kind = Literal["query", "passage"]


def sentence_transformers_limit(folder: Path) -> int | None:
    """``max_seq_length`` of the model folder's ``sentence_bert_config.json``: where sentence-transformers cuts a
    text; None without one."""
    try:
        return int(json.loads((Path(folder) / "sentence_bert_config.json").read_text(encoding="utf-8"))["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Embedder(ABC):
    """Turns texts into L2-normalized float32 vectors.

    Attributes:
        name: the model name as settings give it.
        checksum: the model files' checksum, recorded in index manifests.
        folder: the model folder (its ``tokenizer.json`` is used by the chunker).
        dimension: vector size.
    """

    name: str = ""
    checksum: str = ""
    folder: Path | None = None
    dimension: int = 0
    backend: str = ""

    def __init__(self, config: EmbedderConfig) -> None:
        self.config = config

    @property
    def max_tokens(self) -> int | None:
        """Tokens of a text the model reads (the rest is cut off): ``max_length`` of the settings, else the limit
        its folder's ``sentence_bert_config.json`` gives (what sentence-transformers applies); None when unknown."""
        if self.config.max_length:
            return self.config.max_length
        return sentence_transformers_limit(self.folder) if self.folder is not None else None

    @abstractmethod
    def embed_batch(self, texts: list[str], kind: Kind) -> np.ndarray:
        """Embed one batch; return an array of shape ``(len(texts), dimension)``."""

    def embed(self, texts: Sequence[str], kind: Kind = "passage", progress: bool = False,
              for_index: bool = False, journal: EmbeddingJournal | None = None) -> np.ndarray:
        """Embed any number of texts in batches; rows are L2-normalized float32. ``for_index``: the vectors an index
        stores (a backend with a query twin, `local_rag.embed.st`, then uses the model itself). ``journal``: batches
        embedded by an interrupted run are read back from it, and each new one written to it.

        Example:
            >>> vectors = embedder.embed(["what is bm25?"], kind="query")  # doctest: +SKIP
        """
        prefix = self.config.query_prefix if kind == "query" else self.config.passage_prefix
        texts = [prefix + t for t in texts]
        size = self.config.batch_size
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        # sorting by length keeps padding small; results go back to input order
        order = np.argsort([-len(t) for t in texts], kind="stable")
        bar = None
        if progress and len(texts) > size:
            from tqdm import tqdm

            bar = tqdm(total=len(texts), desc=f"embedding ({self.name})", unit="chunk")
        for start in range(0, len(texts), size):
            idx = order[start : start + size]
            batch = [texts[i] for i in idx]
            vectors = journal.get(batch, kind) if journal is not None else None
            if vectors is None:
                vectors = np.asarray(self.embed_batch(batch, kind), dtype=np.float32)
                if journal is not None:
                    journal.add(batch, kind, vectors)
            out[idx] = vectors
            if bar is not None:
                bar.update(len(idx))
        if bar is not None:
            bar.close()
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


_REGISTRY: dict[str, Callable[[EmbedderConfig, Path], Embedder]] = {}


def register_embedder(name: str) -> Callable[[Callable[[EmbedderConfig, Path], Embedder]], Callable[[EmbedderConfig, Path], Embedder]]:
    """Register a backend factory under ``name`` (the value of ``embedder.backend``)."""

    def wrap(factory: Callable[[EmbedderConfig, Path], Embedder]) -> Callable[[EmbedderConfig, Path], Embedder]:
        _REGISTRY[name] = factory
        return factory

    return wrap
