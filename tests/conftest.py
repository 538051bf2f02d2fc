"""Shared fixtures: settings in a temporary folder, a deterministic fake embedder, the real MiniLM model.

The fake embedder is for pipeline logic (index folders, fusion, add/remove); the real-model paths are tested with
all-MiniLM-L6-v2 from PyPI (`make test` imports it into models/).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from local_rag.embed.base import Embedder
from local_rag.settings import EmbedderConfig, Settings, load_settings

if TYPE_CHECKING:
    from local_rag.retrieve import HybridRetriever

# The tests run on profile cpu-test (SmolLM2, what CI imports) unless they name another: a user config file of their
# own, with that default, so that no user's ~/.config/local-rag/config.yaml leaks in (the default is cpu)
_USER_CONFIG = Path(tempfile.mkdtemp(prefix="local-rag-tests-")) / "config.yaml"
_USER_CONFIG.write_text("profile: cpu-test\n", encoding="utf-8")
os.environ["LOCAL_RAG_USER_CONFIG"] = str(_USER_CONFIG)

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
MTRAG = ROOT.parent / "shared" / "mtrag"


class HashEmbedder(Embedder):
    """Bag of hashed words -> a fixed-size vector. Deterministic and instant; similar texts get similar vectors."""

    backend = "sentence-transformers"

    def __init__(self, config: EmbedderConfig, dimension: int = 64) -> None:
        super().__init__(config)
        self.name = config.model
        self.checksum = "hash-embedder"
        self.dimension = dimension
        self.calls = 0

    def embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        self.calls += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                h = int(hashlib.md5(word.encode()).hexdigest(), 16)
                out[i, h % self.dimension] += 1.0 if (h >> 8) % 2 else -1.0
        return out


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {"indexes_dir": str(tmp_path / "indexes"), "models_dir": str(MODELS), "index": "test"}
    return load_settings("cpu-test", overrides={**base, **overrides})


@pytest.fixture
def fake_settings(tmp_path: Path) -> Settings:
    """cpu-test settings with a whitespace chunker, for use with `HashEmbedder`."""
    return make_settings(tmp_path, chunker={"tokenizer": "whitespace", "size": 12, "overlap": 3})


@pytest.fixture
def hash_embedder(fake_settings: Settings) -> HashEmbedder:
    return HashEmbedder(fake_settings.embedder)


CORPUS = [
    {"_id": "d1-0", "title": "Cats", "text": "Cats are small domesticated carnivorous mammals that purr and hunt mice.", "url": "u1"},
    {"_id": "d1-1", "title": "Cats", "text": "A cat sleeps twelve to sixteen hours a day and grooms its fur often.", "url": "u1"},
    {"_id": "d2-0", "title": "Dogs", "text": "Dogs are loyal companions; they bark, fetch sticks and guard the house.", "url": "u2"},
    {"_id": "d3-0", "title": "BM25", "text": "BM25 is a ranking function used by search engines to score documents against a query using term frequency and inverse document frequency.", "url": "u3"},
    {"_id": "d4-0", "title": "FAISS", "text": "FAISS is a library for efficient similarity search and clustering of dense vectors, with flat, IVF and HNSW indexes.", "url": "u4"},
    {"_id": "d5-0", "title": "Fusion", "text": "Reciprocal rank fusion merges ranked lists by summing one over k plus the rank of each document in every list.", "url": "u5"},
]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", CORPUS)


@pytest.fixture
def indexed(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path) -> tuple[Settings, HybridRetriever]:
    """The test corpus indexed (real bm25s and FAISS, the hash embedder) and its hybrid retriever."""
    from local_rag.index import build_index, open_index
    from local_rag.retrieve import HybridRetriever

    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    return fake_settings, HybridRetriever(open_index(fake_settings), fake_settings, hash_embedder)


def minilm_present() -> bool:
    return (MODELS / "all-MiniLM-L6-v2" / "model.safetensors").exists()


needs_minilm = pytest.mark.skipif(not minilm_present(), reason="all-MiniLM-L6-v2 not imported (run `make test`)")
needs_mtrag = pytest.mark.skipif(not MTRAG.exists(), reason="../shared/mtrag not present")


@pytest.fixture(scope="session")
def minilm_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(tmp_path_factory.mktemp("minilm"))


@pytest.fixture(scope="session")
def minilm(minilm_settings: Settings) -> Embedder:
    if not minilm_present():
        pytest.skip("all-MiniLM-L6-v2 not imported (run `make test`)")
    from local_rag.embed import load_embedder

    return load_embedder(minilm_settings.embedder, minilm_settings.models_dir)


# --- LLM layer and model store (issue 3): fixtures live in tests/llm_fixtures.py --------------------------------
pytest_plugins = ["tests.llm_fixtures"]
