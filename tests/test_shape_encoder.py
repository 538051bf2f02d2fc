"""Random-weight encoders in MiniLM's shape (`local_rag.bench.shape_encoder`): what a lent GPU machine builds from
MiniLM's small files to run the whole pipeline there (scripts/gpu_llm_check.sh)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from local_rag.bench.shape_encoder import copy_small_files, write_random_encoder
from local_rag.errors import BadInputError
from local_rag.settings import EmbedderConfig, RerankerConfig
from tests.conftest import MODELS, needs_minilm


@needs_minilm
def test_random_encoders_of_minilms_shape_load_through_local_rags_backends(tmp_path: Path) -> None:
    from local_rag.embed import load_embedder
    from local_rag.rerank.loader import load_reranker

    small = copy_small_files(MODELS / "all-MiniLM-L6-v2", tmp_path / "small")
    assert not (small / "model.safetensors").exists() and (small / "1_Pooling" / "config.json").is_file()
    assert sum(f.stat().st_size for f in small.rglob("*") if f.is_file()) < 1 << 20  # what travels: under 1 MiB
    bi = write_random_encoder(small, tmp_path / "bi")
    ce = write_random_encoder(small, tmp_path / "ce", cross_encoder=True)
    real = (MODELS / "all-MiniLM-L6-v2" / "model.safetensors").stat().st_size
    assert abs((bi / "model.safetensors").stat().st_size - real) < real * 0.01  # the same tensors, other values

    embedder = load_embedder(EmbedderConfig(model=str(bi), device="cpu"), tmp_path)
    vectors = embedder.embed(["a passage about cats", "another about dogs"])
    assert vectors.shape == (2, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    reranker = load_reranker(RerankerConfig(model=str(ce), device="cpu"), tmp_path)
    scores = reranker.score("cats", ["a passage about cats", "another about dogs"])
    assert len(scores) == 2 and all(np.isfinite(scores))
    # the same seed draws the same weights
    again = write_random_encoder(small, tmp_path / "bi2")
    assert (again / "model.safetensors").read_bytes() == (bi / "model.safetensors").read_bytes()


def test_a_folder_without_a_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no config.json"):
        copy_small_files(tmp_path, tmp_path / "out")
