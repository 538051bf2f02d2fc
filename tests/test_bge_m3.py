"""The BGE-M3 code path, on a BGE-M3-shaped folder built from MiniLM weights (structure, not quality)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from local_rag.errors import ModelError

from .conftest import MODELS, needs_minilm


def make_m3_folder(dest: Path, with_heads: bool = True) -> Path:
    torch = pytest.importorskip("torch")
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", dest)
    if with_heads:
        torch.manual_seed(0)
        torch.save(torch.nn.Linear(384, 384).state_dict(), dest / "colbert_linear.pt")
        torch.save(torch.nn.Linear(384, 1).state_dict(), dest / "sparse_linear.pt")
    return dest


@needs_minilm
def test_missing_heads_are_refused(tmp_path: Path):
    from local_rag.embed.bge import check_bge_m3_folder

    folder = make_m3_folder(tmp_path / "m3", with_heads=False)
    with pytest.raises(ModelError, match="colbert_linear.pt, sparse_linear.pt missing"):
        check_bge_m3_folder(folder)


@needs_minilm
def test_bge_m3_backend_dense_and_lexical(tmp_path: Path):
    pytest.importorskip("FlagEmbedding")
    from local_rag.embed import load_embedder
    from local_rag.settings import EmbedderConfig

    folder = make_m3_folder(tmp_path / "m3")
    embedder = load_embedder(EmbedderConfig(backend="bge-m3", model=str(folder), max_length=128), MODELS)
    assert embedder.dimension == 384 and embedder.backend == "bge-m3"
    vectors = embedder.embed(["a cat purrs", "a kitten meows", "tax on capital gains"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    weights = embedder.lexical_weights(["a cat purrs"])  # type: ignore[attr-defined]
    assert len(weights) == 1 and all(isinstance(v, float) for v in weights[0].values())
